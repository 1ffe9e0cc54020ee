"""Per-hunk review of the agent's file edits: the hunks between what a file was before the turn and what it is
now, and undoing one of them.

The file tools record a file's bytes before every change (``filestate.UndoRecord``). The turn's first record
for a path is what the file was before the turn; diffing it against the file now gives the hunks an open
editor shows for review. Undoing one hunk puts that hunk's prior lines back, and only if the hunk's lines are
still exactly what the agent wrote: an edit the user made inside it since is never overwritten (409).

Lines are the text split at ``"\\n"`` (a file ending with a newline has a last, empty line): the same lines a
CodeMirror document has, so hunk line numbers are editor line numbers, and joining the lines gives the text
back byte for byte. Line endings (CRLF) and a BOM are the file's own and are kept (``TextFile.encode``).
"""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..permissions.paths import display_path, resolve_in_root
from ..tools.builtin.edit.filestate import FileStateStore, atomic_write, moved_reason
from ..tools.builtin.edit.textfile import decode_text_file


class Hunk(BaseModel):
    """One change: ``old_lines`` at ``old_start`` of the prior text became ``new_lines`` at ``new_start`` of
    the current text (0-based line indexes; either list may be empty)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    old_start: int = Field(ge=0)
    old_lines: tuple[str, ...]
    new_start: int = Field(ge=0)
    new_lines: tuple[str, ...]


class HunkConflict(Exception):
    """The hunk cannot be undone as asked; the message says why. Nothing was changed."""


@dataclass(frozen=True)
class TurnFile:
    """A file the turn changed: where it is, and its bytes before the turn (None: the turn created it)."""

    path: Path
    shown_as: str
    prior: bytes | None


def split_lines(text: str) -> list[str]:
    return text.split("\n")


def hunks_between(before: str, after: str) -> list[Hunk]:
    """The changed regions from ``before`` to ``after``, in order.

    The common start and end are skipped before diffing: an edit of a few lines in a long file diffs only
    its middle (``SequenceMatcher`` is quadratic in the worst case).
    """
    old, new = split_lines(before), split_lines(after)
    head = 0
    while head < len(old) and head < len(new) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < len(old) - head and tail < len(new) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_middle, new_middle = old[head : len(old) - tail], new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False)
    return [
        Hunk(
            old_start=head + i1,
            old_lines=tuple(old_middle[i1:i2]),
            new_start=head + j1,
            new_lines=tuple(new_middle[j1:j2]),
        )
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def revert_hunk(before: str, current: str, requested: Hunk) -> tuple[str, Hunk]:
    """``current`` with ``requested`` put back as it was in ``before``, and the hunk that was reverted.

    The hunk must still be one of the changes between ``before`` and ``current`` with the same lines: if the
    user edited inside it (or next to it, so that it merged with their edit) it no longer is, and
    ``HunkConflict`` says so. The same change found several times: the one nearest the requested place.
    """
    hunks = hunks_between(before, current)
    if not hunks:
        raise HunkConflict("the file is already as it was before the turn: there is nothing to undo")
    same = [
        hunk
        for hunk in hunks
        if hunk.old_lines == requested.old_lines and hunk.new_lines == requested.new_lines
    ]
    if not same:
        raise HunkConflict(
            "the lines of this change were edited since the agent wrote them (or it was undone already); "
            "the file was left as it is"
        )
    hunk = min(same, key=lambda candidate: abs(candidate.new_start - requested.new_start))
    lines = split_lines(current)
    lines[hunk.new_start : hunk.new_start + len(hunk.new_lines)] = hunk.old_lines
    return "\n".join(lines), hunk


def turn_file(
    file_state: FileStateStore, session_id: str, since_record: int, root: Path, user_path: str
) -> TurnFile | None:
    """The file at ``user_path`` as the turn found it, if one of the turn's records (those after the
    ``since_record``-th of the session) is about it; None when the turn did not change it."""
    path = resolve_in_root(root, user_path)
    for record in file_state.records(session_id)[since_record:]:
        if record.path == path:  # the first one: what the file was before the turn's first change
            return TurnFile(path, display_path(path, root), record.prior)
    return None


def _decoded(raw: bytes | None, shown_as: str) -> str:
    return "" if raw is None else decode_text_file(raw, shown_as).text


def current_hunks(changed: TurnFile) -> list[Hunk]:
    """The hunks between the file before the turn and the file on disk now ([] when it is gone)."""
    try:
        now = changed.path.read_bytes()
    except FileNotFoundError:
        return []
    return hunks_between(_decoded(changed.prior, changed.shown_as), _decoded(now, changed.shown_as))


# One undo at a time per file: a second request must see the first one's result, not the same old content.
_file_locks: dict[Path, asyncio.Lock] = {}


async def undo_hunk(changed: TurnFile, requested: Hunk) -> Hunk:
    """Put one hunk of ``changed`` back as it was before the turn, on disk (atomically); returns the hunk.

    A file the turn created whose last hunk is undone is deleted: before the turn, there was no file.
    """
    lock = _file_locks.setdefault(changed.path, asyncio.Lock())
    async with lock:
        return await asyncio.to_thread(_undo_hunk_now, changed, requested)


def _undo_hunk_now(changed: TurnFile, requested: Hunk) -> Hunk:
    moved = moved_reason(changed.path)
    if moved is not None:
        raise HunkConflict(f"{changed.shown_as}: {moved}; nothing was changed")
    try:
        raw = changed.path.read_bytes()
    except FileNotFoundError:
        raise HunkConflict(f"{changed.shown_as} no longer exists; nothing was changed") from None
    current = decode_text_file(raw, changed.shown_as)
    reverted, hunk = revert_hunk(_decoded(changed.prior, changed.shown_as), current.text, requested)
    if changed.prior is None and reverted == "":
        changed.path.unlink(missing_ok=True)
    else:
        atomic_write(changed.path, current.encode(reverted))
    return hunk


def public_hunks(hunks: list[Hunk]) -> list[dict[str, Any]]:
    return [hunk.model_dump(mode="json") for hunk in hunks]
