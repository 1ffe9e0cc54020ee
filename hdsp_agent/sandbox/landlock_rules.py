"""The Landlock allowlist for one command: (path, rights) pairs for ``landlock.restrict_self``.

Landlock grants rights *beneath* a path and cannot carve exceptions out of a grant, so exceptions are made by
granting the children of a directory instead of the directory (``_carve``). The project root itself is
therefore read-only and every entry directly in it gets full rights, except the guarded ones (``.hdsp``,
``.git``'s ``config`` and ``hooks``, ...): a sandboxed command writes inside existing files and directories of
the project but cannot create, rename or delete entries at its top level. ``/proc``, ``/sys`` and every home
directory are off the list; only the scratch home and tmp are writable.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from .landlock import ALL_RIGHTS, FS_READ_DIR, READ_RIGHTS
from .protect import GuardedPath

SYSTEM_READ = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc")
DEVICES_WRITE = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
DEVICES_READ = ("/dev/urandom", "/dev/random")
_MAX_CARVE_DEPTH = 8


def landlock_rules(
    root: Path,
    scratch: Iterable[str],
    guarded: Iterable[GuardedPath],
    masked: Iterable[GuardedPath],
    extra_read: Iterable[str] = (),
) -> list[tuple[str, int]]:
    """The allowlist for a command in ``root`` with the scratch dirs ``scratch`` (home, tmp)."""
    hidden = [item.path for item in masked]
    read_only = [item.path for item in guarded]
    rules: list[tuple[str, int]] = []
    for path in (*SYSTEM_READ, *DEVICES_READ, sys.prefix, sys.base_prefix, str(root), *extra_read):
        rules += _carve(path, READ_RIGHTS, hidden)
    for path in (*DEVICES_WRITE, *scratch):
        rules.append((path, ALL_RIGHTS))
    rules += _carve(str(root), ALL_RIGHTS, hidden + read_only, keep_readable=True)
    return list(dict.fromkeys(rules))


def _carve(
    path: str, rights: int, exceptions: list[str], *, keep_readable: bool = False, depth: int = 0
) -> list[tuple[str, int]]:
    """``rights`` beneath ``path`` except beneath ``exceptions``: the path itself when no exception lies
    beneath it, else its children, one by one (the directory itself keeps listing rights).

    Landlock grants a rule to what its path resolves to, so a link among the children (``notes -> .env``,
    ``cfg -> ~/.ssh``) would grant its target: a link whose target is an exception or in a home directory
    gets nothing."""
    if any(_beneath(path, exception) for exception in exceptions):
        return []
    if depth and os.path.islink(path):
        target = os.path.realpath(path)
        if any(_beneath(target, place) for place in (*exceptions, *_homes())):
            return []
    if not any(_beneath(exception, path) for exception in exceptions) or depth >= _MAX_CARVE_DEPTH:
        return [(path, rights)] if depth < _MAX_CARVE_DEPTH else []
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    rules: list[tuple[str, int]] = [] if keep_readable else [(path, FS_READ_DIR)]
    for name in names:
        child = os.path.join(path, name)
        rules += _carve(child, rights, exceptions, keep_readable=keep_readable, depth=depth + 1)
    return rules


def _homes() -> tuple[str, ...]:
    return ("/home", "/root", os.path.realpath(os.path.expanduser("~")))


def _beneath(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")
