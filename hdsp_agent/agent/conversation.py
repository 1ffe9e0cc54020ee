"""One conversation: its numbered event log, its running turn, and the people watching it.

Every event gets the next sequence number, is kept in memory and written to the store, and is fanned out to
each subscriber (a browser tab, the headless CLI). A tab that reconnects asks for everything after the last
number it saw, so it misses nothing and sees nothing twice. What the model reads is its ``history``
(``agent/history.py``), a turn is built and run by ``agent/turn.py``, taking turns back: ``agent/review.py``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..events import (
    ApprovalResolvedEvent,
    PlanApprovedEvent,
    PlanProposedEvent,
    SessionUpdatedEvent,
    ToolStatusEvent,
    UserMessageEvent,
)
from ..permissions.approval import ApprovalReply
from ..tools.base import CancelToken, ToolStatus
from ..user_text import user_text
from .history import ConversationHistory
from .hunks import Hunk
from .plans import PLAN_REQUEST, PlanFileError, approved_request, plan_items, read_plan, write_plan
from .review import InvalidRequest, TurnReview
from .runtime import AgentRuntime
from .store import SessionRecord, SessionStore
from .titles import conversation_title
from .turn import TurnBuilder
from .undo import UndoResult
from .usage_breakdown import RequestBreakdown

Subscriber = Callable[[dict[str, Any]], None]
DEFAULT_TITLE = "New chat"
USER_STOPPED = user_text("stopped by the user")
__all__ = ["DEFAULT_TITLE", "Conversation", "InvalidRequest", "TurnAlreadyRunning"]


class TurnAlreadyRunning(Exception):
    pass


class Conversation:
    def __init__(
        self,
        record: SessionRecord,
        store: SessionStore,
        runtime: AgentRuntime,
        *,
        events: list[dict[str, Any]] | None = None,
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        self.record = record
        self.store = store
        self.runtime = runtime
        self.events: list[dict[str, Any]] = events or []
        self.broker = runtime.new_broker(self.emit)
        # What the model reads; taking turns back; building and running a turn: one object each.
        self.history = ConversationHistory(record.id, store, messages)
        self.turns = TurnBuilder(
            record.id, runtime, self.history, self.emit, self.broker, lambda: self.events
        )
        self.review = TurnReview(record.id, runtime, self.history, self.emit, self.turns.settle_documents)
        self._subscribers: list[Subscriber] = []
        self._turn: asyncio.Task[None] | None = None
        self._cancel: CancelToken | None = None
        self._interrupted = False
        self.log = logging.getLogger("hdsp_agent.session")

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def last_seq(self) -> int:
        return int(self.events[-1]["seq"]) if self.events else 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        """What the model reads (``history``); the turn loop appends to this list in place."""
        return self.history.messages

    @property
    def running(self) -> bool:
        return self._turn is not None and not self._turn.done()

    # -- events ----------------------------------------------------------------------------------------------

    def emit(self, event: BaseModel) -> dict[str, Any]:
        envelope = {
            "seq": self.last_seq + 1,
            "session_id": self.id,
            "ts": time.time(),
            **event.model_dump(mode="json"),
        }
        self.events.append(envelope)
        self.store.append_event(self.id, envelope["seq"], envelope)
        for subscriber in list(self._subscribers):
            try:
                subscriber(envelope)
            except Exception:  # one broken tab must not stop the turn or the other tabs
                self.log.exception("hdsp-agent: a subscriber of session %s failed", self.id)
        if isinstance(event, ToolStatusEvent):
            self._tie_touched(event)
        return envelope

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    @property
    def watched(self) -> bool:
        """Whether someone (a sidebar tab, the headless CLI) is subscribed, i.e. could answer an approval."""
        return bool(self._subscribers)

    def events_since(self, seq: int) -> list[dict[str, Any]]:
        return [event for event in self.events if event["seq"] > seq]

    # -- turns -----------------------------------------------------------------------------------------------

    def send(self, content: str, context: dict[str, Any] | None = None, model: str | None = None) -> str:
        """Start a turn with the user's message; returns the turn id. One turn at a time per session."""
        if self.running:
            raise TurnAlreadyRunning("a turn is already running in this session; stop it or wait")
        turn_id = f"turn_{uuid.uuid4().hex[:12]}"
        context = context or {}
        if isinstance(context.get("mode"), str):
            try:
                self.runtime.set_mode(self.id, context["mode"])
            except ValueError as error:
                raise InvalidRequest(str(error)) from None
        self.emit(UserMessageEvent(turn_id=turn_id, content=content, context=context))
        planning = self.runtime.policy.mode_for(self.id) == "plan"
        # Plan mode: the policy keeps the turn read-only; this tells the model what the turn is for.
        self.history.add_user(f"{content}\n\n{PLAN_REQUEST}" if planning else content)
        if self.record.title == DEFAULT_TITLE and content.strip():
            self.record.title = conversation_title(content, context) or DEFAULT_TITLE
        document = context.get("active_document")
        if isinstance(document, dict):
            self._tie(document.get("path"))  # announced by the status change below
        self._set_status("running")
        self._cancel = CancelToken()
        self.turns.begin(turn_id)  # the turn's checkpoint, and where its document changes begin
        model = model or self.record.model or None
        self._turn = asyncio.create_task(
            self._run_turn(turn_id, context, model, self._cancel, content if planning else None)
        )
        return turn_id

    def run_plan(
        self, path: str, mode: str, context: dict[str, Any] | None = None, model: str | None = None
    ) -> str:
        """ "Approve plan": run the plan file as it is now (the user may have edited it) in ``mode``."""
        if self.running:
            raise TurnAlreadyRunning("a turn is already running in this session; stop it or wait")
        if mode not in ("default", "accept-edits"):
            raise InvalidRequest(f"a plan runs in mode default or accept-edits, not {mode!r}")
        try:
            text = read_plan(self._root(), path)
        except PlanFileError as error:
            raise InvalidRequest(str(error)) from None
        self.emit(PlanApprovedEvent(path=path, mode=mode, items=plan_items(text)))
        return self.send(approved_request(path, text), {**(context or {}), "mode": mode}, model)

    async def next_request(
        self, context: dict[str, Any] | None = None, model: str | None = None, draft: str | None = None
    ) -> RequestBreakdown:
        """``/context``: what the next request holds, by part (``TurnBuilder.next_request``)."""
        return await self.turns.next_request(context or {}, model or self.record.model or None, draft)

    async def compact_now(
        self, context: dict[str, Any] | None = None, model: str | None = None
    ) -> dict[str, Any] | None:
        """``/compact``: summarize the conversation now (None: nothing older than the latest step)."""
        self._idle("stop the running turn before compacting")
        return await self.turns.compact_now(context or {}, model or self.record.model or None)

    async def undo_last_turn(self, unsaved: frozenset[str] = frozenset()) -> UndoResult:
        """Restore every file and cell the last turn changed, all or nothing (``agent/undo.py``).

        Raises ``NothingToUndo`` when there is none, ``UndoConflicts`` when the user changed some of it since.
        """
        self._idle("stop the running turn before undoing it")
        return await self.review.undo_last_turn(unsaved)

    async def restore(self, turn_id: str, unsaved: frozenset[str] = frozenset()) -> UndoResult:
        """Go back to the checkpoint before turn ``turn_id``: undo it and every later turn, all or nothing."""
        self._idle("stop the running turn before restoring a checkpoint")
        return await self.review.restore(turn_id, unsaved)

    async def redo(self, unsaved: frozenset[str] = frozenset()) -> UndoResult:
        """Re-do the last undo or restore, all or nothing; raises ``NothingToRedo`` or ``UndoConflicts``."""
        self._idle("stop the running turn before redoing")
        return await self.review.redo(unsaved)

    async def undo_cell(self, path: str, cell_id: str) -> list[str]:
        """Undo the last turn's changes to one cell (the review's per-cell "Undo"); the rest of the turn
        stays."""
        self._idle("stop the running turn before undoing its changes")
        return await self.review.undo_cell(path, cell_id)

    def keep_cell(self, path: str, cell_id: str) -> int:
        """Keep the agent's change to one cell (the review's per-cell "Keep"): undo, undo-all and restore
        leave it, and a reloaded page shows it kept."""
        return self.review.keep_cell(path, cell_id)

    async def file_hunks(self, path: str) -> list[Hunk]:
        """The last turn's changes to one file, hunk by hunk, as they are on disk now ([]: none to review)."""
        return await self.review.file_hunks(path)

    async def undo_hunk(self, path: str, hunk: Hunk) -> list[str]:
        """Undo one hunk of the last turn's change to a file (the review's per-hunk "Undo"); the rest stays.
        ``HunkConflict`` when its lines changed since: nothing is overwritten."""
        self._idle("stop the running turn before undoing its changes")
        return await self.review.undo_hunk(path, hunk)

    def _idle(self, message: str) -> None:
        if self.running:
            raise TurnAlreadyRunning(message)

    async def _run_turn(
        self,
        turn_id: str,
        context: dict[str, Any],
        model: str | None,
        cancel: CancelToken,
        plan_task: str | None = None,
    ) -> None:
        try:
            await self.turns.run(turn_id, context, model, cancel, interrupted=lambda: self._interrupted)
            if plan_task is not None:
                self._propose_plan(turn_id, plan_task)
        finally:
            self._set_status("idle")

    def _propose_plan(self, turn_id: str, task: str) -> None:
        """A plan-mode turn that completed with a checklist: the server saves it and the sidebar offers
        "Approve plan" (a write by the server, so the turn itself stayed read-only)."""
        ended = next((event for event in reversed(self.events) if event["type"] == "turn.end"), None)
        answer = next(
            (m.get("content") for m in reversed(self.messages) if m.get("role") == "assistant"), None
        )
        if ended is None or ended.get("reason") != "completed" or not isinstance(answer, str):
            return
        items = plan_items(answer)
        if not items:
            return
        path = write_plan(self._root(), task, answer)
        self.emit(PlanProposedEvent(turn_id=turn_id, path=path, items=items))

    async def cancel(self, reason: str = USER_STOPPED, *, interrupted: bool = False) -> None:
        """Stop the running turn: the model stream is aborted, running tools stopped, pending approvals
        canceled.

        ``interrupted``: the server is going away, not the user stopping; the turn is marked so.
        """
        if not self.running or self._cancel is None or self._turn is None:
            return
        self._interrupted = interrupted
        self._cancel.cancel(reason)
        self.broker.cancel_all(reason)
        self._turn.cancel()
        await asyncio.wait({self._turn}, timeout=15)

    async def wait(self) -> None:
        """Wait for the running turn (tests, headless runs)."""
        if self._turn is not None:
            await asyncio.wait({self._turn})

    def resolve_approval(self, call_id: str, reply: ApprovalReply) -> None:
        """Answer a pending approval. Raises KeyError for a call id this session is not waiting on."""
        self.broker.resolve(call_id, reply)
        self.emit(
            ApprovalResolvedEvent(
                call_id=call_id, approved=reply.approved, scope=reply.scope, reason=reply.reason
            )
        )

    def _root(self) -> Path:
        return Path(self.runtime.tool_context(session_id=self.id).root_dir)

    # -- record ----------------------------------------------------------------------------------------------

    def rename(self, title: str) -> None:
        self.record.title = title.strip() or DEFAULT_TITLE
        self._set_status(self.record.status)

    def _set_status(self, status: str) -> None:
        self.record.status = status
        self.record.updated = time.time()
        self.store.upsert_session(self.record)
        self.emit(
            SessionUpdatedEvent(
                title=self.record.title,
                status="running" if status == "running" else "idle",
                notebooks=list(self.record.notebooks),
            )
        )

    # -- the notebooks it works on ---------------------------------------------------------------------------

    def _tie(self, path: object) -> bool:
        """Record a notebook this conversation works on (the sidebar offers another chat for the others)."""
        if not isinstance(path, str) or not path.endswith(".ipynb"):
            return False
        drive, sep, rest = path.partition(":")  # the sidebar's "RTC:" drive prefix: the server's path without
        path = (rest if sep and "/" not in drive and rest else path).lstrip("/")
        if path.startswith("./"):
            path = path[2:]
        if not path or path in self.record.notebooks:
            return False
        self.record.notebooks.append(path)
        return True

    def _tie_touched(self, event: ToolStatusEvent) -> None:
        """A call that changed or ran a notebook ties it (a read does not): its result names the notebook."""
        if event.status not in (ToolStatus.DONE, ToolStatus.ERRORED) or not event.details:
            return
        tool = self.runtime.registry.get(event.name)
        if tool is None or tool.read_only:
            return
        if self._tie(event.details.get("path")):
            self._set_status(self.record.status)
