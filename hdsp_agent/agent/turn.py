"""Building and running one turn of a conversation.

A turn's parts are put together here from the runtime: the model and its context window (asked once per
model), the tool profile, the tool context, the loop, the step's catalog. At its end, before ``turn.end``:
the documents it changed are settled, the kernel variables it changed are reported, the numbers of its answer
are tied to outputs. The compaction's notebook outline is read through the tool pipeline like any read: the
same redaction, data envelope and audit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..events import (
    ContextCompactedEvent,
    ErrorEvent,
    KernelChangesEvent,
    TurnEndEvent,
    TurnEndReason,
    TurnStartEvent,
    VariableChangeInfo,
)
from ..permissions.approval import FixedApprover
from ..permissions.broker import ApprovalBroker
from ..tools.base import CancelToken, ToolCall, ToolContext
from ..tools.registry import ToolCatalog
from ..user_text import user_text
from .answer_numbers import turn_number_marks
from .compaction import compact
from .history import ConversationHistory
from .llm import ModelClient
from .loop import AgentLoop, TurnOutcome
from .models import ModelNotConfigured
from .quotas import QuotaExceeded
from .runtime import AgentRuntime
from .usage_breakdown import RequestBreakdown, request_breakdown

Emit = Callable[[BaseModel], Any]
# The outline is a help for the compaction, never worth a question to the user: a call the policy would ask
# about is declined, and the compaction goes on without it.
NO_OUTLINE = "not asked: the notebook outline for a compaction is read only when allowed without asking"

log = logging.getLogger("hdsp_agent.session")


@dataclass
class _TurnParts:
    client: ModelClient
    window: int
    ctx: ToolContext
    loop: AgentLoop
    catalog_for_step: Callable[[list[dict[str, Any]]], ToolCatalog]
    system_prompt: str


class TurnBuilder:
    """One conversation's turns: what stays from turn to turn (windows asked, warnings given) and each run."""

    def __init__(
        self,
        session_id: str,
        runtime: AgentRuntime,
        history: ConversationHistory,
        emit: Emit,
        broker: ApprovalBroker,
        events: Callable[[], list[dict[str, Any]]],
    ) -> None:
        self.session_id = session_id
        self.events = events  # the conversation's event log so far (the answer's numbers are looked up in it)
        self.runtime = runtime
        self.history = history
        self.emit = emit
        self.broker = broker
        self._change_mark = 0
        # Prefix sizes the user was already warned about (see AgentLoop), so the warning is not repeated.
        self._warned_prefixes: set[int] = set()
        # The context window of each model this conversation used, asked of its server once.
        self._windows: dict[int, int] = {}
        self._turn_id = ""

    def begin(self, turn_id: str) -> None:
        """Before the turn's task starts: its checkpoint, and where the open documents' changes begin."""
        self.runtime.undo.mark(self.session_id, turn_id)
        # Open documents this turn changes are settled at its end; other conversations' are theirs.
        live = self.runtime.tool_context(session_id=self.session_id).notebook_gateway
        self._change_mark = live.change_mark(self.session_id) if live is not None else 0

    async def run(
        self,
        turn_id: str,
        context: dict[str, Any],
        model: str | None,
        cancel: CancelToken,
        interrupted: Callable[[], bool],
    ) -> None:
        """The turn, to its ``turn.end`` (emitted whatever happens; a server going away is re-raised)."""
        outcome = TurnOutcome("error", user_text("the turn did not finish"))
        try:
            outcome = await self._run(turn_id, context, model, cancel)
        except asyncio.CancelledError:
            reason: TurnEndReason = "interrupted" if interrupted() else "canceled"
            outcome = TurnOutcome(reason, cancel.reason or reason)
            if not cancel.cancelled:
                raise  # the server is shutting down, not the user stopping the turn
        except QuotaExceeded as error:
            self.emit(ErrorEvent(code=error.code, message=error.message))
            if self.runtime.audit is not None:
                self.runtime.audit({"event": "quota", "session": self.session_id, "code": error.code})
            outcome = TurnOutcome("error", error.message)
        except ModelNotConfigured as error:
            setup_help = error.args[0] if error.args else str(error)  # a UserText, translatable
            self.emit(ErrorEvent(code="E_MODEL_NOT_CONFIGURED", message=setup_help))
            outcome = TurnOutcome("error", user_text("no model is configured"))
        except Exception as error:  # a bug must end the turn visibly, not leave it "running" forever
            log.exception("hdsp-agent: turn %s failed", turn_id)
            self.emit(
                ErrorEvent(
                    code="E_INTERNAL",
                    message=user_text("the turn failed: %1", f"{type(error).__name__}: {error}"),
                )
            )
            outcome = TurnOutcome("error", str(error))
        finally:
            self.broker.cancel_all("the turn ended")
            if not interrupted():  # the server is going away: it writes what no tab holds as it stops
                await self.settle_documents()
                await self._report_kernel_changes(turn_id)
            if outcome.reason == "completed":
                self._tie_answer_numbers(turn_id)
            self.emit(TurnEndEvent(turn_id=turn_id, reason=outcome.reason, message=outcome.message))
            self.history.save()

    async def _prepare(
        self, context: dict[str, Any], model: str | None, cancel: CancelToken, emit: Emit | None
    ) -> _TurnParts:
        """A turn's parts: model, window, profile, tool context, loop, catalog (``emit`` None: nothing is
        shown, for ``/context`` and ``/compact``, which build what a turn would without running one)."""
        runtime = self.runtime
        await runtime.models.discover()
        settings = runtime.model_settings(model or None)
        if id(settings) not in self._windows:
            self._windows[id(settings)] = await runtime.context_window(settings)
        window = self._windows[id(settings)]
        profile = runtime.profile(settings, window)
        if emit is not None:
            emit(
                TurnStartEvent(
                    turn_id=self._turn_id, model=settings.label, context_window=window, profile=profile
                )
            )
        client = runtime.model_client(settings)
        await runtime.resolve_tool_mode(settings)
        # Tools include images in their results only for a model that can read them; the turn's id lets a tool
        # tell this turn's earlier calls from the last turn's (where the next new cell goes).
        client_context = {**context, "vision": settings.vision, "turn_id": self._turn_id}
        shown = {"emit": emit} if emit is not None else {}
        ctx = runtime.tool_context(
            session_id=self.session_id, cancel=cancel, client_context=client_context, **shown
        )
        loop_settings = runtime.loop_settings(settings, window)
        loop_settings.profile = profile
        loop = AgentLoop(
            client,
            runtime.executor(self.broker),
            loop_settings,
            emit or (lambda _event: None),
            checkpoint=self.history.save,
            meter=runtime.usage_meter(settings, self.session_id),
            warned_prefixes=self._warned_prefixes,
            live_state=lambda: self.notebook_outline(ctx),
            load_tools=runtime.load_tools,
        )
        messages = self.history.messages
        # Fixed for the turn: a tool loaded on demand and first used in this turn is offered from the
        # next one on, appended to the list, so the prefix stays byte-identical within a turn.
        in_use = self.history.tools_in_use()
        # Full profile: MCP servers connect (once) and list their tools; others: only what is in use.
        await runtime.prepare_catalog(ctx, profile, messages, in_use)

        def catalog_for_step(step_messages: list[dict[str, Any]]) -> ToolCatalog:
            return runtime.catalog(ctx, profile, step_messages, in_use)

        return _TurnParts(client, window, ctx, loop, catalog_for_step, runtime.system_prompt(ctx, profile))

    async def _run(
        self, turn_id: str, context: dict[str, Any], model: str | None, cancel: CancelToken
    ) -> TurnOutcome:
        self._turn_id = turn_id
        parts = await self._prepare(context, model, cancel, self.emit)
        self.runtime.quotas.start_turn()
        try:
            return await parts.loop.run_turn(
                self.history.messages, parts.system_prompt, parts.ctx, parts.catalog_for_step
            )
        finally:
            self.runtime.quotas.end_turn()

    async def next_request(
        self, context: dict[str, Any], model: str | None, draft: str | None = None
    ) -> RequestBreakdown:
        """What the next request holds (``/context``), built by the code that builds a turn's request;
        ``draft``: a message the user is about to send, counted as the last user message."""
        parts = await self._prepare(context, model, CancelToken(), None)
        messages = list(self.history.messages)
        if draft:
            messages.append({"role": "user", "content": draft})
        request, tools = parts.loop.next_request(
            messages, parts.system_prompt, parts.catalog_for_step(messages)
        )
        rules = self.runtime.rules_text(parts.ctx)
        return request_breakdown(request, tools, rules, parts.window)

    async def compact_now(self, context: dict[str, Any], model: str | None) -> dict[str, Any] | None:
        """``/compact``: summarize everything before the latest exchange now; what happened, or None when
        there is nothing older to summarize. Shown as a ``context.compacted`` event with the summary."""
        parts = await self._prepare(context, model, CancelToken(), None)
        messages = self.history.messages
        tools = parts.loop.step_tools(parts.catalog_for_step(messages))
        state = await self.notebook_outline(parts.ctx)
        outcome = await compact(
            parts.client, messages, parts.system_prompt, tools, parts.window, state, tail_budget=0
        )
        if outcome is None:
            return None
        self.history.save()
        self.emit(
            ContextCompactedEvent(
                message=user_text(
                    "The conversation was compacted on request (%1 messages became %2).",
                    outcome["messages_before"],
                    outcome["messages_after"],
                ),
                **outcome,
            )
        )
        return outcome

    async def notebook_outline(self, ctx: ToolContext) -> str | None:
        """The active notebook as read_notebook's brief outline (live, without outputs), for a compaction.

        A ``read_notebook`` call through the executor like the model's own: its secrets are redacted and the
        read is audited; the compaction puts the cells in the untrusted-data envelope (after cutting them to
        its room). It shows no card (the tool context emits nothing) and asks nobody (``NO_OUTLINE``)."""
        document = ctx.client_context.get("active_document") or {}
        path = document.get("path")
        if self.runtime.registry.get("read_notebook") is None or not isinstance(path, str):
            return None
        if not path.endswith(".ipynb"):
            return None
        call = ToolCall(
            id=f"compaction_{uuid.uuid4().hex[:8]}",
            name="read_notebook",
            arguments=json.dumps({"path": path, "include_outputs": False}),
        )
        quiet = self.runtime.tool_context(
            session_id=self.session_id, cancel=ctx.cancel, client_context=ctx.client_context
        )
        try:
            result = await self.runtime.executor(FixedApprover(False, NO_OUTLINE)).execute(call, quiet)
        except Exception:  # the outline is a help, never a reason for the turn to fail
            log.debug("hdsp-agent: no notebook outline for the compaction", exc_info=True)
            return None
        return result.content if result.ok else None

    async def _report_kernel_changes(self, turn_id: str) -> None:
        """The variables the turn's runs created, changed or deleted in each kernel, for the review bar."""
        try:
            changed = await self.runtime.state.notebooks.kernel_changes.end_turn(self.session_id)
        except Exception:  # a summary for the review must never keep the turn from ending
            log.exception("hdsp-agent: summarizing the kernel changes of turn %s failed", turn_id)
            return
        if changed:
            notebooks = {
                path: [VariableChangeInfo(**change) for change in rows] for path, rows in changed.items()
            }
            self.emit(KernelChangesEvent(turn_id=turn_id, notebooks=notebooks))

    def _tie_answer_numbers(self, turn_id: str) -> None:
        """Link each number of the final answer to the output it came from, or mark it found in none."""
        try:
            marks = turn_number_marks(self.events(), turn_id)
        except Exception:  # a check of the answer must never keep the turn from ending
            log.exception("hdsp-agent: checking the numbers of turn %s failed", turn_id)
            return
        if marks is not None:
            self.emit(marks)

    async def settle_documents(self, paths: list[str] | None = None) -> None:
        """Before the turn says it ended: the agent's unsaved changes to open notebooks are saved, left for
        the user (who has unsaved edits of their own there), or written to the file no tab holds any more
        (``LiveNotebooks.settle``). A change that could not be kept safe is said, not hidden behind "Done".

        ``paths``: the documents an undo or a redo changed, settled by the same rule, so the file holds what
        the tab shows unless the user has unsaved edits of their own there (a Discard, a restart or a crash
        would otherwise bring the undone change back)."""
        try:
            ctx = self.runtime.tool_context(session_id=self.session_id)
            live = ctx.notebook_gateway
            if live is None or ctx.contents_manager is None:
                return
            outcomes = await live.settle(ctx.contents_manager, since=self._change_mark, paths=paths)
        except Exception:  # settling is a safety net: its own failure must not leave the turn "running"
            log.exception("hdsp-agent: settling the documents at the end of a turn failed")
            return
        for outcome in outcomes:
            if outcome.problem:
                self.emit(
                    ErrorEvent(
                        code="E_NOT_SAVED",
                        message=user_text(
                            "The agent's changes to %1 are not saved yet: %2", outcome.path, outcome.problem
                        ),
                    )
                )
