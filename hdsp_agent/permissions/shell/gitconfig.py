"""Whether the repository git would use has configuration that runs programs.

A project can arrive with its own ``.git`` (an unpacked archive, a hostile checkout): ``core.fsmonitor`` in
its config runs a program on every ``git status``, ``core.pager`` on every ``git log``. The analyser reads
the config git would read (the first ``.git`` above the working directory, and the files it includes are
not followed: an include itself asks) and makes every git command ask when such a key is set. A ``.git``
that is a file (``gitdir: elsewhere``) points at a config the analyser does not read: that asks too.

Read once per file version (path, mtime, size), so analysing many git commands costs one stat each.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

# Keys (lowercase ``section.key``, subsections collapsed to ``*``) whose value is a program git runs, or
# another configuration file it reads.
_RUNNING_KEYS = re.compile(
    r"^(?:core\.(?:fsmonitor|pager|editor|sshcommand|askpass|hookspath|gitproxy|alternaterefscommand)"
    r"|diff\.external|diff\.\*\.(?:command|textconv)|filter\.\*\.(?:clean|smudge|process)"
    r"|merge\.\*\.driver|pager\..*|alias\..*|credential\..*helper|gpg\.(?:\*\.)?program|sequence\.editor"
    r"|include\.path|includeif\.\*\.path|uploadpack\.packobjectshook|remote\.\*\.(?:uploadpack|receivepack)"
    r"|sendemail\..*|web\.browser|browser\.\*\.(?:cmd|path)|man\.\*\.(?:cmd|path)|difftool\..*|mergetool\..*"
    r"|protocol\.ext\.allow|instaweb\..*)$"
)
_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]')
_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$)")
_MAX_WALK = 64


def repository_config_problem(directory: Path) -> str | None:
    """Why git run in ``directory`` would run a program named in its repository's configuration, or None."""
    current = directory
    for _ in range(_MAX_WALK):
        dot_git = current / ".git"
        try:
            stat = dot_git.lstat()
        except OSError:
            stat = None
        if stat is not None:
            git_dir = dot_git if dot_git.is_dir() else _pointed_git_dir(dot_git)
            if git_dir is None:
                return f"{dot_git} points git at a repository the analyser cannot read"
            for config in _config_files(git_dir):
                try:
                    config_stat = config.stat()
                except OSError:
                    continue
                problem = _config_problem(str(config), config_stat.st_mtime_ns, config_stat.st_size)
                if problem:
                    return problem
            return None
        if current.parent == current:
            return None
        current = current.parent
    return None


def _pointed_git_dir(dot_git: Path) -> Path | None:
    """The directory a ``.git`` file names (``gitdir: ../.git/worktrees/x``, worktrees and submodules)."""
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text.split(":", 1)[1].strip())
    target = target if target.is_absolute() else dot_git.parent / target
    return target if target.is_dir() else None


def _config_files(git_dir: Path) -> list[Path]:
    """The repository's config files: its own, a worktree's, and the common directory's (worktrees)."""
    files = [git_dir / "config", git_dir / "config.worktree"]
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return files
    common_dir = Path(common) if Path(common).is_absolute() else git_dir / common
    return [*files, common_dir / "config", common_dir / "config.worktree"]


@functools.lru_cache(maxsize=64)
def _config_problem(path: str, mtime_ns: int, size: int) -> str | None:
    del mtime_ns, size  # the cache key: a changed file is read again
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1_000_000)
    except OSError:
        return None
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        header = _SECTION.match(line)
        if header:
            section = header.group(1).lower()
            if '"' in line or "." in section:  # ``[diff "x"]`` and ``[diff.x]`` are subsections
                section = section.split(".", 1)[0] + ".*"
            line = line[header.end() :].strip()
            if not line:
                continue
        key = _KEY.match(line)
        if key and section:
            name = f"{section}.{key.group(1).lower()}"
            if _RUNNING_KEYS.match(name):
                return f"the repository's git configuration sets {name}, which runs a program or loads more"
    return None
