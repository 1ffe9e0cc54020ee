"""Undoing a whole turn: every file and notebook change the agent made in it, newest first.

The file tools and the notebook tools each record the prior state before they change anything (per agent
session). A turn takes a mark of both histories when it starts; undo restores everything recorded after the
mark.
Undo history lives in memory: it does not survive a server restart.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tools.state import ToolState


@dataclass
class TurnMark:
    turn_id: str
    file_records: int
    notebook_entries: int


class NothingToUndo(Exception):
    pass


class TurnUndo:
    """Over the histories in ``state``: the ``ToolState`` the file and notebook tools were built with."""

    def __init__(self, state: ToolState) -> None:
        self.file_state = state.files
        self.notebooks = state.notebooks

    def mark(self, session_id: str, turn_id: str) -> TurnMark:
        return TurnMark(
            turn_id=turn_id,
            file_records=len(self.file_state.records(session_id)),
            notebook_entries=self.notebooks.undo.mark(session_id),
        )

    async def undo(self, session_id: str, mark: TurnMark) -> list[str]:
        """Restore what the turn changed; returns what was restored, one line each."""
        restored: list[str] = []
        entries = await self.notebooks.undo.undo_since(session_id, mark.notebook_entries)
        restored += [f"{entry.path}: {entry.description}" for entry in entries]
        for record in reversed(self.file_state.records(session_id)[mark.file_records :]):
            self.file_state.restore(record)
            restored.append(
                f"{record.path}: {'deleted (the turn created it)' if record.prior is None else 'restored'}"
            )
        if not restored:
            raise NothingToUndo(f"turn {mark.turn_id} changed no file or notebook")
        return restored

    async def undo_cell(self, session_id: str, mark: TurnMark, path: str, cell_id: str) -> list[str]:
        """Undo what the turn did to one cell of a notebook open in JupyterLab; its other changes stay."""
        entries = await self.notebooks.undo.undo_cell_since(session_id, mark.notebook_entries, path, cell_id)
        restored = [f"{entry.path}: {entry.description}" for entry in entries]
        if not restored:
            raise NothingToUndo(f"turn {mark.turn_id} left nothing to undo in cell {cell_id} of {path}")
        return restored

    def forget(self, session_id: str) -> None:
        self.file_state.forget_session(session_id)
        self.notebooks.undo.forget(session_id)
