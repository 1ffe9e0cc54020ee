"""The project's secret files, found for one sandboxed command so the layers can mask them.

The policy asks before a command that *names* a secret file runs, but a command allowed without asking can
still compute the name (``cat $(echo .en)v``, ``python3 -c "open('.env')"``, a script in the project). So for
such commands the sandbox makes the files themselves unreadable: bubblewrap binds ``/dev/null`` over each
secret file (an empty read-only tmpfs over a secret directory such as ``.ssh/``); Landlock leaves them out of
its allowlist.

Which files: every file under the root that ``sensitive.matches_secret_patterns`` calls a secret (``.env``,
``*.pem``, ``*.ppk``, ``.aws/``, the administrator's patterns, ...), ignored by git or not, plus the secret
places ``protected.secret_locations`` names inside the root (a configured key file, hdsp-agent's MCP file),
plus every other name of a secret file that has hard links (``notes.txt`` made by ``ln .env notes.txt``
earlier: the same file under a name no pattern knows).

They are found the way the search tools find them: ripgrep lists only files matching the secret globs
(``--files --hidden --no-ignore``), about 0.15 s on a 20,000-file project; the exact test is made again in
Python. ``.git/`` is left alone: git itself must read ``.git/config`` (the policy asks before a
command prints it, and redaction takes credentials out of what git prints).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from ..permissions.protected import secret_locations
from ..permissions.sensitive import (
    SECRET_DIRS,
    matches_secret_patterns,
    normalize_name,
    ripgrep_secret_globs,
)
from .protect import GuardedPath

# rg's own time limit: a listing that takes longer than this has gone wrong (a network mount, a loop).
_LIST_TIMEOUT_SECONDS = 30.0
_NEVER_LISTED = ("!.git/",)


class SecretListingFailed(Exception):
    """The project's secret files could not be listed, so a command allowed without asking cannot run."""


def secret_files(root: Path) -> list[GuardedPath]:
    """What to mask inside ``root`` (resolved): secret files, secret directories (the outermost one of a
    secret file inside it), the secret places inside the root, and every hard link of a secret file."""
    masked: dict[str, GuardedPath] = {}
    linked: list[Path] = []
    for relative in _listed(root, [arg for glob in ripgrep_secret_globs() for arg in ("--iglob", glob)]):
        if not matches_secret_patterns(relative):
            continue
        directory = _outermost_secret_dir(relative)
        if directory is not None:
            path = root / directory
            masked[str(path)] = GuardedPath(str(path), True, True)
            continue
        path = root / relative
        try:
            info = path.lstat()
        except OSError:
            continue
        if not path.is_symlink():  # a link named .env: what it points to is what matters (masked by its name)
            masked[str(path)] = GuardedPath(str(path), False, True)
            if info.st_nlink > 1:
                linked.append(path)
    for place in secret_locations():
        path = Path(place)
        if path != root and root in path.parents and path.exists():
            masked.setdefault(place, GuardedPath(place, path.is_dir(), True))
    if linked:
        for path in _other_names(root, linked):
            masked.setdefault(str(path), GuardedPath(str(path), False, True))
    return list(masked.values())


def _outermost_secret_dir(relative: str) -> str | None:
    """``a/.ssh`` for ``a/.ssh/keys/id``: the outermost directory whose whole contents are secrets."""
    parts = relative.split("/")
    for index, part in enumerate(parts[:-1]):
        if normalize_name(part) in SECRET_DIRS:
            return "/".join(parts[: index + 1])
    return None


def _other_names(root: Path, files: Iterable[Path]) -> list[Path]:
    """Every other path under ``root`` that is the same file (device and inode) as one of ``files``."""
    wanted: dict[tuple[int, int], int] = {}
    for path in files:
        info = path.stat()
        wanted[(info.st_dev, info.st_ino)] = info.st_size
    sizes = set(wanted.values())
    found: list[Path] = []
    for relative in _listed(root, []):
        path = root / relative
        try:
            info = path.lstat()
        except OSError:
            continue
        if info.st_size in sizes and (info.st_dev, info.st_ino) in wanted and path not in files:
            found.append(path)
    return found


def _listed(root: Path, globs: list[str]) -> list[str]:
    """Files under ``root`` (relative, ``/``-separated), hidden and git-ignored ones included, ``.git/`` left
    out; only those matching ``globs`` (rg ``--iglob`` arguments) when given."""
    rg = _ripgrep()
    if rg is None:
        return _walked(root)
    argv = [rg, "--files", "--hidden", "--no-ignore", "--no-config", *globs]
    argv += [arg for glob in _NEVER_LISTED for arg in ("--iglob", glob)]
    try:
        done = subprocess.run(
            argv,
            cwd=root,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_LIST_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SecretListingFailed(f"listing the project's secret files failed: {error}") from None
    if (
        done.returncode not in (0, 1) and not done.stdout
    ):  # 1: nothing matched; 2 with output: some unreadable
        reason = done.stderr.decode("utf-8", "replace").strip()[:300]
        raise SecretListingFailed(f"listing the project's secret files failed: {reason}")
    lines = done.stdout.decode("utf-8", "surrogateescape").splitlines()
    return [line[2:] if line.startswith("./") else line for line in lines if line]


def _walked(root: Path) -> list[str]:
    """The same listing without ripgrep (slower; only when the rg binary is missing)."""
    found: list[str] = []
    for directory, names, files in os.walk(root):
        names[:] = [name for name in names if name != ".git"]
        base = Path(directory).relative_to(root)
        found += [(base / name).as_posix() for name in files]
    return found


def _ripgrep() -> str | None:
    beside_python = Path(sys.executable).parent / "rg"
    return str(beside_python) if beside_python.is_file() else shutil.which("rg")
