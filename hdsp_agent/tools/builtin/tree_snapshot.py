"""A stat walk of the project before and after a command, for where no overlay caught its writes (the Landlock
layer, commands approved to run unsandboxed, an overlay that could not be mounted).

Only metadata is kept (size, mtime_ns, inode, mode), so the walk stays cheap on a large project; what a
changed or deleted file held before is therefore not known, and such changes are listed without an undo.
Git's object store is skipped (it only grows, by content-addressed files nobody reviews).
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import NamedTuple

# Directories below the root that are not walked, as '/'-separated relative paths.
SKIPPED = frozenset({".git/objects", ".git/lfs"})
# A project bigger than this, or slower to walk, is not walked (the command's changes are then not captured),
# and not tried again for a while: on a home directory with no sandbox, every command would pay for it.
MAX_ENTRIES = 100_000
MAX_SECONDS = 2.0
RETRY_AFTER_SECONDS = 600.0
_too_large: dict[str, tuple[float, str]] = {}

Entry = tuple[int, int, int, int]  # size, mtime_ns, inode, mode


class TooLarge(Exception):
    """The project has more than ``MAX_ENTRIES`` files and folders, or takes longer than ``MAX_SECONDS``."""


def snapshot(root: Path) -> dict[str, Entry]:
    """Every file, link and folder below ``root`` (relative '/'-separated path → its stat), links not
    followed. Raises ``TooLarge``."""
    known = _too_large.get(str(root))
    if known is not None and time.monotonic() - known[0] < RETRY_AFTER_SECONDS:
        raise TooLarge(known[1])
    found: dict[str, Entry] = {}
    stack = [("", str(root))]
    deadline = time.monotonic() + MAX_SECONDS
    while stack:
        prefix, directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[rel] = (status.st_size, status.st_mtime_ns, status.st_ino, status.st_mode)
            if stat.S_ISDIR(status.st_mode) and rel not in SKIPPED:
                stack.append((rel + "/", entry.path))
        if len(found) > MAX_ENTRIES or time.monotonic() > deadline:
            why = f"the project is too large to compare before and after ({len(found):,}+ entries)"
            _too_large[str(root)] = (time.monotonic(), why)
            raise TooLarge(why)
    return found


class TreeDiff(NamedTuple):
    """Files (and links) by relative path: created, changed (content or type), deleted. Folders only count
    through what is in them."""

    created: list[str]
    changed: list[str]
    deleted: list[str]


def diff(before: dict[str, Entry], after: dict[str, Entry]) -> TreeDiff:
    created, changed, deleted = [], [], []
    for rel, now in after.items():
        if stat.S_ISDIR(now[3]):
            continue
        was = before.get(rel)
        if was is None or stat.S_ISDIR(was[3]):
            created.append(rel)
        elif was != now:
            changed.append(rel)
    for rel, was in before.items():
        if not stat.S_ISDIR(was[3]) and (rel not in after or stat.S_ISDIR(after[rel][3])):
            deleted.append(rel)
    return TreeDiff(sorted(created), sorted(changed), sorted(deleted))
