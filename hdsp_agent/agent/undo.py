"""Undoing a whole turn: every file and notebook change the agent made in it, newest first.

The file tools and the notebook tools each record the prior state before they change anything (per agent
session). A turn takes a mark of both histories when it starts; undo restores everything recorded after the mark.
Undo history lives in memory: it does not survive a server restart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..tools.base import Tool
from ..tools.builtin.edit.filestate import DEFAULT_FILE_STATE, FileStateStore
from ..tools.jupyter import NotebookRuntime
from ..tools.jupyter.notebook_tool import NotebookTool


@dataclass
class TurnMark:
    turn_id: str
    file_records: int
    notebook_entries: dict[int, int] = field(default_factory=dict)


class NothingToUndo(Exception):
    pass


class TurnUndo:
    def __init__(self, tools: Iterable[Tool[Any]], file_state: FileStateStore = DEFAULT_FILE_STATE) -> None:
        self.file_state = file_state
        self._runtimes: dict[int, NotebookRuntime] = {
            id(tool.runtime): tool.runtime for tool in tools if isinstance(tool, NotebookTool)
        }

    def mark(self, session_id: str, turn_id: str) -> TurnMark:
        return TurnMark(
            turn_id=turn_id,
            file_records=len(self.file_state.records(session_id)),
            notebook_entries={key: runtime.undo.mark(session_id) for key, runtime in self._runtimes.items()},
        )

    async def undo(self, session_id: str, mark: TurnMark) -> list[str]:
        """Restore what the turn changed; returns what was restored, one line each."""
        restored: list[str] = []
        for key, runtime in self._runtimes.items():
            entries = await runtime.undo.undo_since(session_id, mark.notebook_entries.get(key, 0))
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
        """Undo what the turn did to one cell of a notebook open in JupyterLab; the turn's other changes stay."""
        restored: list[str] = []
        for key, runtime in self._runtimes.items():
            since = mark.notebook_entries.get(key, 0)
            entries = await runtime.undo.undo_cell_since(session_id, since, path, cell_id)
            restored += [f"{entry.path}: {entry.description}" for entry in entries]
        if not restored:
            raise NothingToUndo(f"turn {mark.turn_id} left nothing to undo in cell {cell_id} of {path}")
        return restored

    def forget(self, session_id: str) -> None:
        self.file_state.forget_session(session_id)
        for runtime in self._runtimes.values():
            runtime.undo.forget(session_id)
