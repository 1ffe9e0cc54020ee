"""One conversation: its messages, its numbered event log, its running turn, and the people watching it.

Every event gets the next sequence number, is kept in memory and written to the store, and is fanned out to
each subscriber (a browser tab, the headless CLI). A tab that reconnects asks for everything after the last
number it saw, so it misses nothing and sees nothing twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ..events import (
    ApprovalResolvedEvent,
    ErrorEvent,
    SessionUpdatedEvent,
    TurnEndEvent,
    TurnEndReason,
    TurnStartEvent,
    TurnUndoneEvent,
    UserMessageEvent,
)
from ..permissions.approval import ApprovalReply
from ..tools.base import CancelToken, ToolContext
from ..tools.registry import ToolCatalog
from .loop import AgentLoop, TurnOutcome
from .models import ModelNotConfigured
from .quotas import QuotaExceeded
from .runtime import AgentRuntime
from .store import SessionRecord, SessionStore
from .undo import NothingToUndo, TurnMark

Subscriber = Callable[[dict[str, Any]], None]
DEFAULT_TITLE = "New chat"


class TurnAlreadyRunning(Exception):
    pass


class InvalidRequest(ValueError):
    """A client command the session cannot carry out as sent (e.g. an unknown mode)."""


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
        self.messages: list[dict[str, Any]] = messages or []
        self.broker = runtime.new_broker(self.emit)
        self._subscribers: list[Subscriber] = []
        self._turn: asyncio.Task[None] | None = None
        self._cancel: CancelToken | None = None
        self._undo_mark: TurnMark | None = None
        self._interrupted = False
        # Prefix sizes the user was already warned about (see AgentLoop), so the warning is not repeated.
        self._warned_prefixes: set[int] = set()
        # The context window of each model this conversation used, asked of its server once.
        self._windows: dict[int, int] = {}
        self.log = logging.getLogger("hdsp_agent.session")

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def last_seq(self) -> int:
        return int(self.events[-1]["seq"]) if self.events else 0

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
        self.messages.append({"role": "user", "content": content})
        self.store.save_messages(self.id, self.messages)
        if self.record.title == DEFAULT_TITLE and content.strip():
            self.record.title = _title_from(content)
        self._set_status("running")
        self._cancel = CancelToken()
        self._undo_mark = self.runtime.undo.mark(self.id, turn_id)
        self._turn = asyncio.create_task(self._run_turn(turn_id, context, model, self._cancel))
        return turn_id

    async def undo_last_turn(self) -> list[str]:
        """Restore every file and notebook the last turn changed; ``NothingToUndo`` if there is none."""
        if self.running:
            raise TurnAlreadyRunning("stop the running turn before undoing it")
        mark = self._undo_mark
        if mark is None:
            raise NothingToUndo("no turn to undo in this session (undo history does not survive a restart)")
        restored = await self.runtime.undo.undo(self.id, mark)
        self._undo_mark = None
        self.emit(TurnUndoneEvent(turn_id=mark.turn_id, restored=restored))
        # Tell the model, so its next step does not assume the undone changes are still there.
        self.messages.append(
            {
                "role": "user",
                "content": "(hdsp-agent note) The user undid the previous turn. Restored:\n"
                + "\n".join(restored),
            }
        )
        self.store.save_messages(self.id, self.messages)
        return restored

    async def undo_cell(self, path: str, cell_id: str) -> list[str]:
        """Undo the last turn's changes to one cell (the review's per-cell "Undo"); the rest of the turn
        stays."""
        if self.running:
            raise TurnAlreadyRunning("stop the running turn before undoing its changes")
        mark = self._undo_mark
        if mark is None:
            raise NothingToUndo("no turn to undo in this session (undo history does not survive a restart)")
        restored = await self.runtime.undo.undo_cell(self.id, mark, path, cell_id)
        self.messages.append(
            {
                "role": "user",
                "content": f"(hdsp-agent note) The user undid your change to cell {cell_id} of {path}. "
                "Restored:\n" + "\n".join(restored),
            }
        )
        self.store.save_messages(self.id, self.messages)
        return restored

    async def _run_turn(
        self, turn_id: str, context: dict[str, Any], model: str | None, cancel: CancelToken
    ) -> None:
        outcome = TurnOutcome("error", "the turn did not finish")
        try:
            await self.runtime.models.discover()
            settings = self.runtime.model_settings(model or self.record.model or None)
            if id(settings) not in self._windows:
                self._windows[id(settings)] = await self.runtime.context_window(settings)
            window = self._windows[id(settings)]
            profile = self.runtime.profile(settings, window)
            self.emit(
                TurnStartEvent(turn_id=turn_id, model=settings.label, context_window=window, profile=profile)
            )
            client = self.runtime.model_client(settings)
            # Tools include images in their results only for a model that can read them.
            client_context = {**context, "vision": settings.vision}
            ctx = self.runtime.tool_context(
                session_id=self.id, cancel=cancel, emit=self.emit, client_context=client_context
            )
            loop_settings = self.runtime.loop_settings(settings, window)
            loop_settings.profile = profile
            loop = AgentLoop(
                client,
                self.runtime.executor(self.broker),
                loop_settings,
                self.emit,
                checkpoint=lambda: self.store.save_messages(self.id, self.messages),
                meter=self.runtime.usage_meter(settings, self.id),
                warned_prefixes=self._warned_prefixes,
                live_state=lambda: self._live_notebook_outline(ctx),
            )
            await self.runtime.prepare_catalog(ctx)  # MCP servers connect (once) and list their tools

            def catalog_for_step(messages: list[dict[str, Any]]) -> ToolCatalog:
                return self.runtime.catalog(ctx, profile, messages)

            self.runtime.quotas.start_turn()
            try:
                outcome = await loop.run_turn(
                    self.messages, self.runtime.system_prompt(ctx), ctx, catalog_for_step
                )
            finally:
                self.runtime.quotas.end_turn()
        except asyncio.CancelledError:
            reason: TurnEndReason = "interrupted" if self._interrupted else "canceled"
            outcome = TurnOutcome(reason, cancel.reason or reason)
            if not cancel.cancelled:
                raise  # the server is shutting down, not the user stopping the turn
        except QuotaExceeded as error:
            self.emit(ErrorEvent(code=error.code, message=error.message))
            if self.runtime.audit is not None:
                self.runtime.audit({"event": "quota", "session": self.id, "code": error.code})
            outcome = TurnOutcome("error", error.message)
        except ModelNotConfigured as error:
            self.emit(ErrorEvent(code="E_MODEL_NOT_CONFIGURED", message=str(error)))
            outcome = TurnOutcome("error", "no model is configured")
        except Exception as error:  # a bug must end the turn visibly, not leave it "running" forever
            self.log.exception("hdsp-agent: turn %s failed", turn_id)
            self.emit(
                ErrorEvent(code="E_INTERNAL", message=f"the turn failed: {type(error).__name__}: {error}")
            )
            outcome = TurnOutcome("error", str(error))
        finally:
            self.broker.cancel_all("the turn ended")
            if not self._interrupted:  # the server is going away: it writes what no tab holds as it stops
                await self._settle_documents()
            self.emit(TurnEndEvent(turn_id=turn_id, reason=outcome.reason, message=outcome.message))
            self.store.save_messages(self.id, self.messages)
            self._set_status("idle")

    async def _settle_documents(self) -> None:
        """Before the turn says it ended: the agent's unsaved changes to open notebooks are saved, left for
        the user (who has unsaved edits of their own there), or written to the file no tab holds any more
        (``LiveNotebooks.settle``). A change that could not be kept safe is said, not hidden behind "Done"."""
        try:
            ctx = self.runtime.tool_context(session_id=self.id)
            settle = getattr(ctx.notebook_gateway, "settle", None)
            if settle is None or ctx.contents_manager is None:
                return
            outcomes = await settle(ctx.contents_manager)
        except Exception:  # settling is a safety net: its own failure must not leave the turn "running"
            self.log.exception("hdsp-agent: settling the documents at the end of a turn failed")
            return
        for outcome in outcomes:
            if outcome.problem:
                self.emit(
                    ErrorEvent(
                        code="E_NOT_SAVED",
                        message=f"The agent's changes to {outcome.path} are not saved yet: {outcome.problem}",
                    )
                )

    async def _live_notebook_outline(self, ctx: ToolContext) -> str | None:
        """The active notebook as read_notebook's brief outline (live, without outputs), for a compaction."""
        document = ctx.client_context.get("active_document") or {}
        path = document.get("path")
        tool = self.runtime.registry.get("read_notebook")
        if tool is None or not isinstance(path, str) or not path.endswith(".ipynb"):
            return None
        try:
            args = tool.args_model(path=path, include_outputs=False)
            output = await tool.run(args, ctx.for_call(f"compaction_{uuid.uuid4().hex[:8]}"))
        except Exception:  # the outline is a help, never a reason for the turn to fail
            self.log.debug("hdsp-agent: no notebook outline for the compaction", exc_info=True)
            return None
        return output if isinstance(output, str) else output.content

    async def cancel(self, reason: str = "stopped by the user", *, interrupted: bool = False) -> None:
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

    # -- record ----------------------------------------------------------------------------------------------

    def rename(self, title: str) -> None:
        self.record.title = title.strip() or DEFAULT_TITLE
        self._set_status(self.record.status)

    def _set_status(self, status: str) -> None:
        self.record.status = status
        self.record.updated = time.time()
        self.store.upsert_session(self.record)
        self.emit(
            SessionUpdatedEvent(title=self.record.title, status="running" if status == "running" else "idle")
        )


def _title_from(content: str) -> str:
    line = content.strip().splitlines()[0]
    return line if len(line) <= 60 else line[:57] + "..."
