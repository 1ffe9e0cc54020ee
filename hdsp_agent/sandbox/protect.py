"""Which paths a sandboxed command may not write or see: the project's protected paths, masked secrets.

Facts about the filesystem are gathered here once per command (``protected_paths``, ``masked_paths``); the
layers (``bwrap.py``, ``landlock_rules.py``) turn them into mounts or rules without touching the disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..instruction_places import INSTRUCTION_FILES
from ..permissions.protected import protected_paths_under, run_later_files

# Inside the project: what would change the agent's own behaviour (rules, skills, instruction files, MCP
# servers, editor tasks) or run code the next time someone uses git, opens a shell or starts a kernel
# there. Always guarded, existing or not.
GUARDED_IN_PROJECT = (
    ".hdsp", ".agents", ".continue", ".vscode", ".idea", ".git/config", ".git/hooks", ".jupyter", ".ipython",
    *INSTRUCTION_FILES,
)  # fmt: skip
# Guarded when they exist (and, when the project root is the home directory, also when they do not).
HOME_FILES = (
    ".envrc",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".ssh",
    ".gitconfig",
    ".config/git",
    ".jupyter",
    ".local/share/jupyter",
    ".ipython/profile_default/startup",
    ".pip",
    ".config/pip",
    ".npmrc",
    ".pypirc",
    ".netrc",
)
# Guarded names that are files (a missing one is blocked with an empty file, the others with a directory).
_FILE_NAMES = frozenset(
    {"config", ".envrc", ".gitconfig", ".npmrc", ".pypirc", ".netrc", *INSTRUCTION_FILES}
    | {name for name in HOME_FILES if name.startswith((".bash", ".profile", ".zsh"))}
)
# System files no command needs and a root-run sandbox could otherwise read.
SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh")


@dataclass(frozen=True)
class GuardedPath:
    """A path the command may read but not write; ``exists`` False: it must not be created either."""

    path: str
    is_dir: bool
    exists: bool


def jupyter_dirs() -> list[str]:
    """Jupyter's config, data and runtime directories: server config (keys), tokens, hdsp-agent's own
    permission and MCP files. A sandboxed command sees none of them."""
    from jupyter_core import paths

    found = [paths.jupyter_config_dir(), paths.jupyter_data_dir(), paths.jupyter_runtime_dir()]
    found += paths.jupyter_config_path()
    return list(dict.fromkeys(str(Path(p)) for p in found))


def protected_paths(root: Path, extra: Iterable[str] = ()) -> list[GuardedPath]:
    """The guarded paths inside ``root`` (resolved, absolute), each with what is there now."""
    home = Path(os.path.expanduser("~")).resolve()
    names = list(GUARDED_IN_PROJECT)
    if not (root / ".git").is_dir():
        # No repository here: none may be planted (with its own hooks and config). A worktree's or
        # submodule's ``.git`` file, naming the real git dir, may not be pointed elsewhere either.
        names.append(".git")
    guarded: list[GuardedPath] = []
    candidates = [root / name for name in names]
    candidates += [root / name for name in HOME_FILES if root == home or (root / name).exists()]
    candidates += [_absolute(root, path) for path in extra]
    candidates += python_environments(root)
    # Files a configured MCP server runs (outside the sandbox) when it starts: read-only here.
    candidates += [Path(path) for path in run_later_files()]
    # The policy's own list (permissions/protected.py) too: every protected place that exists here, and all of
    # them when the project is the home directory (a shell rc file must not be created there either).
    # Jupyter's own dirs are left out: they are masked (masked_paths), and a read-only bind would show them.
    hidden = [Path(place) for place in jupyter_dirs()]
    candidates += [
        path
        for path, _level in protected_paths_under(root)
        if (root == home or path.exists() or path.is_symlink())
        and not any(path == place or place in path.parents for place in hidden)
    ]
    for path in dict.fromkeys(candidates):
        if not _beneath(path, root) or path == root:
            continue
        if not path.parent.is_dir():
            continue  # its parent is guarded (``.git``), absent or a file: nothing to mount on
        exists = path.exists() or path.is_symlink()
        is_dir = path.is_dir() if exists else path.name not in _FILE_NAMES
        guarded.append(GuardedPath(str(path), is_dir, exists))
    return guarded


def python_environments(root: Path, depth: int = 2) -> list[Path]:
    """The virtualenvs and conda envs in the top ``depth`` levels of ``root`` (a folder with ``pyvenv.cfg``
    or ``conda-meta/``): their packages and programs run outside the sandbox later (the user's terminal and
    kernels; ``.venv/bin`` is first on every sandboxed command's PATH), so a command may not change them.
    Deeper ones are the policy's to catch when the command's changes are committed."""
    found: list[Path] = []
    level = [str(root)]
    for _ in range(depth):
        below: list[str] = []
        for folder in level:
            try:
                with os.scandir(folder) as entries:
                    folders = [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for path in folders:
                if os.path.isfile(os.path.join(path, "pyvenv.cfg")) or os.path.isdir(
                    os.path.join(path, "conda-meta")
                ):
                    found.append(Path(path))
                else:
                    below.append(path)
        level = below
    return found


def masked_paths(root: Path, extra: Iterable[str] = ()) -> list[GuardedPath]:
    """Existing paths to hide (Jupyter's dirs, system secrets, the administrator's list); only existing ones
    can be mounted over."""
    found: list[GuardedPath] = []
    for text in [*jupyter_dirs(), *SYSTEM_SECRETS, *extra]:
        path = _absolute(root, text)
        if path.exists():
            found.append(GuardedPath(str(path), path.is_dir(), True))
    return list({item.path: item for item in found}.values())


def _absolute(root: Path, text: str) -> Path:
    path = Path(os.path.expanduser(text))
    return Path(os.path.abspath(root / path if not path.is_absolute() else path))


def _beneath(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
