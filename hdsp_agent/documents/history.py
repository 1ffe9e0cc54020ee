"""Undo for notebook changes: the prior state of a notebook is recorded before every change an agent makes.

Entries are kept per agent session, in order. ``mark`` returns a position (taken when a turn starts) and
``undo_since`` restores everything recorded after it, newest first, so a whole turn comes back exactly.
Restoring goes through the same gateway that made the change, which refuses when the user changed the file
since.

Every change to the history is told to ``sink`` (the conversation store, when attached): an entry carries
what a restarted server needs to rebuild it (its inverse, snapshot or ``TextChange``), not only closures.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..tools.base import ToolContext
    from .gateway import NotebookSnapshot
    from .inverse import InverseEdit


@dataclass(frozen=True)
class TextChange:
    """An agent edit made in an open file editor (unsaved typing merged in): the file, and the text before
    and after the agent's change, which its undo merges back out of the editor (or the file)."""

    file: Path
    planned: str
    before: str


@dataclass
class UndoEntry:
    """One recorded change: what it was, and how to put back the state before it."""

    session_id: str
    call_id: str
    path: str
    description: str
    restore: Callable[[], Awaitable[None]]
    # A change to a notebook open in JupyterLab touches one cell, and can be undone alone (the review's "Undo"
    # on that cell): ``undo_cell`` applies its inverse to that cell only.
    cell_id: str | None = None
    undo_cell: Callable[[], Awaitable[None]] | None = None
    # What a planned undo (agent/undo.py) checks before applying anything. The call's context (the gateways it
    # used); a live change: its cell-level inverse; a file change: the notebook before it (with the file's
    # last_modified then) and the file's last_modified right after it.
    ctx: ToolContext | None = None
    inverse: InverseEdit | None = None
    snapshot: NotebookSnapshot | None = None
    after_stamp: Any = None
    # The user kept this change, or undid it alone (the review's Keep / Undo on its cell): final for it, so a
    # whole-turn undo or a restore leaves it. Flagged, not removed: turn marks are positions in the history.
    reviewed: bool = False
    text_change: TextChange | None = None
    # The entry's key in the conversation store.
    entry_id: str = field(default_factory=lambda: f"nb-{uuid.uuid4().hex[:12]}")


class UndoEntrySink(Protocol):
    """Where the history is kept beyond the server's memory, told of every change in order."""

    def entry_added(self, entry: UndoEntry) -> None: ...

    def entry_removed(self, entry: UndoEntry) -> None: ...

    def session_forgotten(self, session_id: str) -> None: ...


@dataclass
class NotebookUndoStore:
    _entries: dict[str, list[UndoEntry]] = field(default_factory=dict)
    sink: UndoEntrySink | None = None

    def record(self, entry: UndoEntry) -> None:
        self._entries.setdefault(entry.session_id, []).append(entry)
        if self.sink is not None:
            self.sink.entry_added(entry)

    def load(self, session_id: str, entries: list[UndoEntry]) -> None:
        """Put back a session's history as a restarted server found it in the store (oldest first)."""
        self._entries[session_id] = list(entries)

    def drop_oldest(self, session_id: str, count: int) -> list[UndoEntry]:
        """Forget the session's ``count`` oldest entries (the history grew past its bound); returns them."""
        history = self._entries.get(session_id, [])
        dropped, history[:count] = history[:count], []
        for entry in dropped:
            self._removed(entry)
        return dropped

    def _removed(self, entry: UndoEntry) -> None:
        if self.sink is not None:
            self.sink.entry_removed(entry)

    def entries(self, session_id: str) -> list[UndoEntry]:
        return list(self._entries.get(session_id, []))

    def mark(self, session_id: str) -> int:
        """The current position in ``session_id``'s history (e.g. when a turn starts)."""
        return len(self._entries.get(session_id, []))

    async def undo_since(self, session_id: str, mark: int = 0) -> list[UndoEntry]:
        """Restore every change recorded after ``mark``, newest first; returns the entries undone.

        Stops at the first restore that fails (the error propagates); entries not yet restored stay recorded.
        """
        history = self._entries.get(session_id, [])
        undone: list[UndoEntry] = []
        while len(history) > mark:
            entry = history[-1]
            if not entry.reviewed:
                await entry.restore()
                undone.append(entry)
            history.pop()
            self._removed(entry)
        return undone

    async def undo_cell_since(self, session_id: str, mark: int, path: str, cell_id: str) -> list[UndoEntry]:
        """Undo only the changes to one cell recorded after ``mark``, newest first; the rest stay recorded.

        Each entry leaves the history once its inverse applied: a failure (the user edited the cell since)
        leaves it, and everything older, undoable later.
        """
        undone: list[UndoEntry] = []
        for entry in reversed(self._cell_entries(session_id, mark, path, cell_id)):
            assert entry.undo_cell is not None
            await entry.undo_cell()
            self._reviewed(entry)
            undone.append(entry)
        return undone

    def keep_cell_since(self, session_id: str, mark: int, path: str, cell_id: str) -> int:
        """The user keeps the changes to one cell recorded after ``mark``: no undo takes them back any more.
        Returns how many there were."""
        kept = self._cell_entries(session_id, mark, path, cell_id)
        for entry in kept:
            self._reviewed(entry)
        return len(kept)

    def _reviewed(self, entry: UndoEntry) -> None:
        entry.reviewed = True
        if self.sink is not None:
            self.sink.entry_added(entry)  # stored again in its place: the flag survives a restart

    def _cell_entries(self, session_id: str, mark: int, path: str, cell_id: str) -> list[UndoEntry]:
        return [
            entry
            for entry in self._entries.get(session_id, [])[mark:]
            if entry.path == path
            and entry.cell_id == cell_id
            and entry.undo_cell is not None
            and not entry.reviewed
        ]

    async def undo_last(self, session_id: str) -> UndoEntry | None:
        history = self._entries.get(session_id, [])
        if not history:
            return None
        undone = await self.undo_since(session_id, len(history) - 1)
        return undone[0]

    def remove(self, entry: UndoEntry) -> None:
        """Drop one entry (its change was undone by a planned undo)."""
        history = self._entries.get(entry.session_id, [])
        if entry in history:
            history.remove(entry)
            self._removed(entry)

    def restamp(self, session_id: str, path: str, old: Any, new: Any) -> None:
        """The file at ``path`` was put back to the state it had at ``old`` and now carries ``new``: the
        entries whose change left it at ``old`` find it as they left it (a second undo in a row applies)."""
        for entry in self._entries.get(session_id, []):
            if entry.path == path and entry.snapshot is not None and entry.after_stamp == old:
                entry.after_stamp = new
                if self.sink is not None:
                    self.sink.entry_added(entry)  # stored in place: its row keeps its position

    def forget(self, session_id: str) -> None:
        self._entries.pop(session_id, None)
        if self.sink is not None:
            self.sink.session_forgotten(session_id)
