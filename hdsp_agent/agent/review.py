"""Taking back what a conversation's turns did: undo the last turn, restore a checkpoint, redo, and the
review's per-cell and per-hunk "Undo" — each said to the user (an event) and to the model (a note).

The records themselves are the runtime's (``TurnUndo``, ``agent/undo.py``, over the tools' ``ToolState``);
this is one conversation's view of them. The conversation checks that no turn is running before it asks.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from ..events import CellReviewedEvent, TurnRedoneEvent, TurnUndoneEvent
from ..tools.base import ToolError
from ..user_text import user_text
from .history import ConversationHistory
from .hunks import Hunk, TurnFile, current_hunks, turn_file, undo_hunk
from .runtime import AgentRuntime
from .undo import NothingToUndo, UndoResult


class InvalidRequest(ValueError):
    """A client command the session cannot carry out as sent (e.g. an unknown mode)."""


class TurnReview:
    def __init__(
        self,
        session_id: str,
        runtime: AgentRuntime,
        history: ConversationHistory,
        emit: Callable[[BaseModel], Any],
        settle: Callable[[list[str]], Awaitable[None]],
    ) -> None:
        self.session_id = session_id
        self.runtime = runtime
        self.history = history
        self.emit = emit
        # What an undo or a redo changed is saved by the turn end's rule (``TurnBuilder.settle_documents``):
        # the file holds what the tab shows, unless the user has unsaved edits of their own there.
        self.settle = settle

    async def undo_last_turn(self, unsaved: frozenset[str]) -> UndoResult:
        result = await self.runtime.undo.undo_last(self.session_id, unsaved)
        await self.settle(result.paths)
        self._tell_undone(result)
        return result

    async def restore(self, turn_id: str, unsaved: frozenset[str]) -> UndoResult:
        result = await self.runtime.undo.restore(self.session_id, turn_id, unsaved)
        await self.settle(result.paths)
        self._tell_undone(result)
        return result

    async def redo(self, unsaved: frozenset[str]) -> UndoResult:
        result = await self.runtime.undo.redo(self.session_id, unsaved)
        await self.settle(result.paths)
        self.emit(TurnRedoneEvent(turn_ids=result.turn_ids, restored=result.restored, paths=result.paths))
        self.history.note(
            "The user redid what they had undone; these changes are back:\n" + "\n".join(result.restored)
        )
        return result

    def _tell_undone(self, result: UndoResult) -> None:
        self.emit(
            TurnUndoneEvent(
                turn_id=result.turn_ids[0],
                turn_ids=result.turn_ids,
                restored=result.restored,
                paths=result.paths,
            )
        )
        # Tell the model, so its next step does not assume the undone changes are still there.
        what = "the previous turn" if len(result.turn_ids) == 1 else f"the last {len(result.turn_ids)} turns"
        self.history.note(f"The user undid {what}. Restored:\n" + "\n".join(result.restored))

    async def undo_cell(self, path: str, cell_id: str) -> list[str]:
        # A cell's mark stays reviewable across later turns: its changes since the first checkpoint.
        mark = self.runtime.undo.first_mark(self.session_id)
        if mark is None:
            raise NothingToUndo("no turn to undo in this session (undo history does not survive a restart)")
        restored = await self.runtime.undo.undo_cell(self.session_id, mark, path, cell_id)
        await self.settle([path])
        self.emit(CellReviewedEvent(path=path, cell_id=cell_id, outcome="undone"))
        self.history.note(
            f"The user undid your change to cell {cell_id} of {path}. Restored:\n" + "\n".join(restored)
        )
        return restored

    def keep_cell(self, path: str, cell_id: str) -> int:
        """The user keeps the agent's change to one cell (the review's per-cell "Keep"): final, so undo,
        undo-all and restore leave it; said in the event log, so a reloaded page shows it kept."""
        kept = self.runtime.undo.keep_cell(self.session_id, path, cell_id)
        self.emit(CellReviewedEvent(path=path, cell_id=cell_id, outcome="kept"))
        return kept

    def _turn_file(self, path: str) -> TurnFile | None:
        mark = self.runtime.undo.last_mark(self.session_id)
        if mark is None:
            return None
        try:
            root = self.runtime.tool_context().root_dir
            return turn_file(self.runtime.undo.file_state, self.session_id, mark.file_records, root, path)
        except ToolError as error:  # a path outside the project, or malformed
            raise InvalidRequest(error.message) from None

    async def file_hunks(self, path: str) -> list[Hunk]:
        changed = self._turn_file(path)
        if changed is None:
            return []
        return await asyncio.to_thread(current_hunks, changed)

    async def undo_hunk(self, path: str, hunk: Hunk) -> list[str]:
        mark = self.runtime.undo.last_mark(self.session_id)
        if mark is None:
            raise NothingToUndo("no turn to undo in this session (undo history does not survive a restart)")
        changed = self._turn_file(path)
        if changed is None:
            raise NothingToUndo(f"the last turn did not change {path}")
        undone = await undo_hunk(changed, hunk)
        # The hunks kept still count as the agent's change: a later whole-turn undo checks the file against
        # what it holds now, and still restores what was there before the turn.
        file_state = self.runtime.undo.file_state
        records = [
            r for r in file_state.records(self.session_id)[mark.file_records :] if r.path == changed.path
        ]
        if records and changed.path.is_file():
            file_state.amend_after(records[-1], hashlib.sha256(changed.path.read_bytes()).hexdigest())
        # What the model last read is gone: it must read the file again before editing it.
        file_state.forget_read(self.session_id, changed.path)
        first, last = undone.new_start + 1, undone.new_start + len(undone.new_lines)
        where = f"line {first}" + (f"-{last}" if last > first else "")
        restored: list[str] = [
            user_text("%1: line %2 restored", changed.shown_as, first)
            if last <= first
            else user_text("%1: lines %2-%3 restored", changed.shown_as, first, last)
        ]
        self.history.note(
            f"The user undid part of your change to {changed.shown_as} ({where}); the rest of it stays. "
            "Read the file again before editing it."
        )
        return restored
