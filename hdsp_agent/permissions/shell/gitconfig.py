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
            if not dot_git.is_dir():
                return f"{dot_git} points git at a repository elsewhere, whose configuration is not checked"
            problems = []
            for name in ("config", "config.worktree"):
                config = dot_git / name
                try:
                    config_stat = config.stat()
                except OSError:
                    continue
                problem = _config_problem(str(config), config_stat.st_mtime_ns, config_stat.st_size)
                if problem:
                    problems.append(problem)
            return problems[0] if problems else None
        if current.parent == current:
            return None
        current = current.parent
    return None


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
