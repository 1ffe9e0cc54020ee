"""Undo for notebook changes: the prior state of a notebook is recorded before every change an agent makes.

Entries are kept per agent session, in order. ``mark`` returns a position (taken when a turn starts) and
``undo_since`` restores everything recorded after it, newest first, so a whole turn comes back exactly.
Restoring goes through the same gateway that made the change, which refuses when the user changed the file
since.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tools.base import ToolContext
    from .gateway import NotebookSnapshot
    from .inverse import InverseEdit


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


@dataclass
class NotebookUndoStore:
    _entries: dict[str, list[UndoEntry]] = field(default_factory=dict)

    def record(self, entry: UndoEntry) -> None:
        self._entries.setdefault(entry.session_id, []).append(entry)

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
            entry.reviewed = True
            undone.append(entry)
        return undone

    def keep_cell_since(self, session_id: str, mark: int, path: str, cell_id: str) -> int:
        """The user keeps the changes to one cell recorded after ``mark``: no undo takes them back any more.
        Returns how many there were."""
        kept = self._cell_entries(session_id, mark, path, cell_id)
        for entry in kept:
            entry.reviewed = True
        return len(kept)

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

    def forget(self, session_id: str) -> None:
        self._entries.pop(session_id, None)
