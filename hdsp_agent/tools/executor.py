"""The one pipeline every tool call goes through, whoever makes it (sidebar, CLI, MCP endpoint).

    lookup → catalog → parse/repair → validate → permission (policy, approval) → middleware → run
    (timeout, cancellation) → result within budget

``execute`` never raises for a tool's or the model's fault: every failure is a ``ToolResult`` the model can
read.
Each stage change is emitted as a ``ToolStatusEvent`` through ``ctx.emit``.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..audit.log import AuditSink, AuditTrail
from ..events import ApprovalRequestEvent, ToolStatusEvent
from ..permissions.approval import ApprovalReply, ApprovalRequest, Approver
from ..permissions.decision import PermissionPolicy, PolicyDecision, ReadOnlyPolicy
from ..user_text import join_texts, user_text
from .args import parse_arguments, validate_arguments
from .base import (
    ErrorCode,
    PermissionAction,
    ResultStatus,
    Tool,
    ToolCall,
    ToolContext,
    ToolError,
    ToolErrorInfo,
    ToolOutput,
    ToolResult,
    ToolStatus,
)
from .middleware import Middleware, MiddlewareChain, ToolInvocation
from .output import OutputBudget, apply_budget, cut_message
from .redaction import SecretRedactor
from .registry import ToolCatalog, ToolRegistry

_TERMINAL_STATUS: dict[ResultStatus, ToolStatus] = {
    "ok": ToolStatus.DONE,
    "error": ToolStatus.ERRORED,
    "denied": ToolStatus.DENIED,
    "canceled": ToolStatus.CANCELED,
}


@dataclass
class ExecutorSettings:
    default_timeout: float = 120.0
    error_message_limit: int = 1000
    output_budget: OutputBudget = field(default_factory=OutputBudget)
    # Takes the server's secrets and URL credentials out of every result (``redaction.py``).
    redactor: SecretRedactor = field(default_factory=SecretRedactor)


class _Refusal(Exception):
    """Ends the pipeline early with a finished result."""

    def __init__(self, result: ToolResult) -> None:
        self.result = result


class ToolExecutor:
    def __init__(
        self,
        registry: ToolRegistry,
        *,
        policy: PermissionPolicy | None = None,
        approver: Approver | None = None,
        settings: ExecutorSettings | None = None,
        on_audit: AuditSink | None = None,
    ) -> None:
        self.registry = registry
        self.policy: PermissionPolicy = policy or ReadOnlyPolicy()
        self.approver = approver
        self.settings = settings or ExecutorSettings()
        self.middleware = MiddlewareChain()
        # Gets one record per finished call: its decision, who approved and how, its status.
        self.on_audit = on_audit

    def add_middleware(self, middleware: Middleware, priority: int = 0) -> None:
        self.middleware.add(middleware, priority)

    async def execute(
        self, call: ToolCall, ctx: ToolContext, catalog: ToolCatalog | None = None
    ) -> ToolResult:
        ctx = ctx.for_call(call.id)
        ctx.redact = self.settings.redactor.redact
        raw_arguments = _raw(call.arguments)
        ctx.emit(
            ToolStatusEvent(
                call_id=call.id, name=call.name, status=ToolStatus.GENERATED, raw_arguments=raw_arguments
            )
        )
        trail = AuditTrail(call, ctx.session_id)
        try:
            result = await self._pipeline(call, ctx, catalog, trail)
        except _Refusal as refusal:
            result = refusal.result
        except asyncio.CancelledError:
            canceled = self._canceled(call, user_text("the turn was canceled"))
            self._emit_result(ctx, canceled, raw_arguments)
            self._audit(trail, canceled)
            raise
        self._emit_result(ctx, result, raw_arguments)
        self._audit(trail, result)
        return result

    def _audit(self, trail: AuditTrail, result: ToolResult) -> None:
        if self.on_audit is not None:
            self.on_audit(trail.record(result))

    async def _pipeline(
        self, call: ToolCall, ctx: ToolContext, catalog: ToolCatalog | None, trail: AuditTrail
    ) -> ToolResult:
        tool = self._lookup(call, catalog)
        args, notes = self._arguments(tool, call)
        arguments = args.model_dump(mode="json")
        await self._authorize(tool, args, arguments, call, ctx, trail)
        self._emit_status(ctx, tool.name, ToolStatus.CALLING, arguments=arguments)
        invocation = ToolInvocation(tool=tool, args=args, ctx=ctx, call_id=call.id)
        result = await self._run_guarded(invocation, call)
        result.notes = notes + result.notes
        return self._within_budget(tool, self._redacted(result))

    # -- stages ----------------------------------------------------------------------------------------------

    def _lookup(self, call: ToolCall, catalog: ToolCatalog | None) -> Tool[Any]:
        tool = self.registry.get(call.name)
        if tool is None:
            # Tools callable by name only (left out of the profile) are suggested too.
            known = catalog.names() + catalog.hidden_names() if catalog is not None else self.registry.names()
            close = difflib.get_close_matches(call.name, known, n=3, cutoff=0.6)
            hint = (
                user_text("Did you mean %1?", ", ".join(close))
                if close
                else user_text("Available tools: %1.", ", ".join(known))
            )
            raise _Refusal(
                self._error(
                    call, ErrorCode.NOT_FOUND.value, user_text("no tool named %1", repr(call.name)), hint
                )
            )
        if catalog is not None and call.name not in catalog:
            raise _Refusal(
                self._error(
                    call,
                    ErrorCode.NOT_IN_CATALOG.value,
                    user_text("tool %1 is not available in this step", repr(call.name)),
                    user_text("Use one of the tools offered: %1.", ", ".join(catalog.names()) or "none"),
                )
            )
        return tool

    def _arguments(self, tool: Tool[Any], call: ToolCall) -> tuple[BaseModel, list[str]]:
        try:
            parsed = parse_arguments(call.arguments)
            args = validate_arguments(tool.args_model, parsed.value)
        except ToolError as error:
            raise _Refusal(self._error(call, error.code, error.message, error.suggestion)) from None
        notes = []
        if parsed.repaired:
            repaired = args.model_dump_json(exclude_unset=True)
            notes.append(
                f"{'; '.join(parsed.notes)}; they were repaired to {repaired}. Send valid JSON next time."
            )
        return args, notes

    async def _authorize(
        self,
        tool: Tool[Any],
        args: BaseModel,
        arguments: dict[str, Any],
        call: ToolCall,
        ctx: ToolContext,
        trail: AuditTrail,
    ) -> None:
        try:
            action = tool.permission(args, ctx)
            decision = self.policy.decide(tool, args, action, ctx)
        except ToolError as error:
            raise _Refusal(self._error(call, error.code, error.message, error.suggestion)) from None
        trail.decided(decision)
        # The mode is the policy's (and, when it asks, the one the user approves): never the model's.
        ctx.run_mode = getattr(decision, "run_mode", None)
        if decision.decision == "allow":
            return
        if decision.decision == "deny":
            reasons = join_texts("; ", decision.reasons) or user_text("blocked by policy")
            raise _Refusal(
                self._error(
                    call,
                    ErrorCode.DENIED.value,
                    user_text("not allowed: %1", reasons),
                    user_text("Do not retry this call; choose another approach or ask the user."),
                    status="denied",
                )
            )
        try:
            view = await tool.approval_view(args, ctx, action)
        except ToolError as error:
            # The change cannot be made (an old_string not in the cell): say so to the model, ask no one.
            raise _Refusal(self._error(call, error.code, error.message, error.suggestion)) from None
        card_reasons = list(decision.reasons)
        if view.reason:
            general = tool.facts.ask_reason if tool.facts is not None else None
            card_reasons = [view.reason, *(text for text in card_reasons if text != general)]
        reply = await self._ask(tool, arguments, action, decision, call, ctx, view.preview, card_reasons)
        trail.answered(reply, by_person=not reply.asked_nobody)
        if not reply.approved:
            raise _Refusal(
                self._error(
                    call,
                    ErrorCode.DENIED.value,
                    user_text("the user declined this call. Reason: %1", reply.reason)
                    if reply.reason
                    else user_text("the user declined this call."),
                    user_text(
                        "Do not repeat the same call; adjust your approach to the user's reason or ask them."
                    ),
                    status="denied",
                )
            )
        ctx.approved = True

    async def _ask(
        self,
        tool: Tool[Any],
        arguments: dict[str, Any],
        action: PermissionAction | None,
        decision: PolicyDecision,
        call: ToolCall,
        ctx: ToolContext,
        preview: str | None = None,
        reasons: list[str] | None = None,
    ) -> ApprovalReply:
        if self.approver is None:
            return ApprovalReply.nobody_to_ask(
                user_text("approval is required but no one is connected to approve")
            )
        request = ApprovalRequest(
            call_id=call.id,
            tool=tool.name,
            arguments=arguments,
            reasons=decision.reasons if reasons is None else reasons,
            action_kind=action.kind.value if action else None,
            action_target=shown_path(action.target, ctx.root_dir) if action else None,
            preview=preview,
            run_mode=decision.run_mode,
            offer_session=decision.offer_session,
        )
        self._emit_status(ctx, tool.name, ToolStatus.AWAITING_APPROVAL, arguments=arguments)
        ctx.emit(ApprovalRequestEvent(request=request))
        outcome = await _race(self.approver.request_approval(request), None, ctx)
        if outcome.canceled:
            raise _Refusal(
                self._canceled(call, ctx.cancel.reason or user_text("canceled while awaiting approval"))
            )
        if outcome.error is not None:
            ctx.logger.error("approval for call %s failed", call.id, exc_info=outcome.error)
            return ApprovalReply(
                approved=False, reason=user_text("the approval could not be obtained (%1)", outcome.error)
            )
        reply: ApprovalReply = outcome.value
        return reply

    async def _run_guarded(self, invocation: ToolInvocation, call: ToolCall) -> ToolResult:
        tool, ctx = invocation.tool, invocation.ctx
        limit = tool.time_limit(invocation.args)
        timeout = self.settings.default_timeout if limit is None else limit
        outcome = await _race(self.middleware.wrap(self._run_tool)(invocation), timeout, ctx)
        if outcome.canceled:
            return self._canceled(call, ctx.cancel.reason or user_text("canceled"))
        if outcome.timed_out:
            return self._error(
                call,
                ErrorCode.TIMEOUT.value,
                user_text("%1 did not finish within %2 s and was stopped", tool.name, f"{timeout:g}"),
                user_text("Try a smaller task, or a longer timeout if the tool accepts one."),
            )
        if outcome.error is not None:
            return self._crash(call, ctx, outcome.error)
        result: ToolResult = outcome.value
        return result

    async def _run_tool(self, invocation: ToolInvocation) -> ToolResult:
        """The innermost handler: the tool itself, with its expected errors turned into results."""
        call = ToolCall(id=invocation.call_id, name=invocation.tool.name)
        try:
            output = await invocation.tool.run(invocation.args, invocation.ctx)
        except ToolError as error:
            return self._error(call, error.code, error.message, error.suggestion)
        if isinstance(output, ToolOutput):
            return ToolResult(
                tool_call_id=call.id,
                name=call.name,
                status="ok",
                content=output.content,
                details=output.details,
            )
        return ToolResult(tool_call_id=call.id, name=call.name, status="ok", content=str(output))

    def _redacted(self, result: ToolResult) -> ToolResult:
        redact = self.settings.redactor.redact
        result.content = redact(result.content)
        if result.error is not None:
            result.error.message = redact(result.error.message)
            if result.error.suggestion:
                result.error.suggestion = redact(result.error.suggestion)
        return result

    def _within_budget(self, tool: Tool[Any], result: ToolResult) -> ToolResult:
        if result.status != "ok":
            return result
        budgeted = apply_budget(result.content, self.settings.output_budget, tool.paging_hint)
        if budgeted.was_cut:
            result.content = budgeted.text
            result.details["output_cut"] = {
                "cut_chars": budgeted.cut_chars,
                "total_chars": budgeted.total_chars,
            }
        return result

    # -- results ---------------------------------------------------------------------------------------------

    def _error(
        self,
        call: ToolCall,
        code: str,
        message: str,
        suggestion: str | None = None,
        *,
        status: ResultStatus = "error",
    ) -> ToolResult:
        limit = self.settings.error_message_limit
        error = ToolErrorInfo(
            code=code,
            message=cut_message(message, limit),
            suggestion=cut_message(suggestion, limit) if suggestion else None,
        )
        return ToolResult(tool_call_id=call.id, name=call.name, status=status, error=error)

    def _canceled(self, call: ToolCall, reason: str) -> ToolResult:
        return self._error(call, ErrorCode.CANCELED.value, reason, status="canceled")

    def _crash(self, call: ToolCall, ctx: ToolContext, error: BaseException) -> ToolResult:
        ctx.logger.error("tool %s (call %s) failed", call.name, call.id, exc_info=error)
        return self._error(
            call,
            ErrorCode.FAILED.value,
            user_text("%1 failed: %2", call.name, f"{type(error).__name__}: {error}"),
            user_text(
                "This looks like a fault in the tool, not in your arguments; "
                "try another way or tell the user."
            ),
        )

    # -- events ----------------------------------------------------------------------------------------------

    def _emit_status(
        self, ctx: ToolContext, name: str, status: ToolStatus, *, arguments: dict[str, Any] | None = None
    ) -> None:
        ctx.emit(ToolStatusEvent(call_id=ctx.call_id, name=name, status=status, arguments=arguments))

    def _emit_result(self, ctx: ToolContext, result: ToolResult, raw_arguments: str) -> None:
        ctx.emit(
            ToolStatusEvent(
                call_id=result.tool_call_id,
                name=result.name,
                status=_TERMINAL_STATUS[result.status],
                raw_arguments=raw_arguments,
                content=result.content,
                error=result.error,
                details=result.details or None,
            )
        )


def _raw(arguments: str | dict[str, Any] | None) -> str:
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    return arguments or ""


@dataclass
class _Outcome:
    value: Any = None
    error: BaseException | None = None
    canceled: bool = False
    timed_out: bool = False


async def _race(awaitable: Any, timeout: float | None, ctx: ToolContext) -> _Outcome:
    """Await ``awaitable`` in this task, stopping it when the timeout passes or the turn is canceled.

    Both stop the work by canceling the current task, which costs no extra task or event-loop round trip on
    the
    common path (the pipeline's overhead is measured against calling the tool directly).
    """
    if ctx.cancel.cancelled:
        _close(awaitable)
        return _Outcome(canceled=True)
    task = asyncio.current_task()
    assert task is not None
    stopped_by: list[str] = []

    def stop(reason: str) -> None:
        if not stopped_by:
            stopped_by.append(reason)
            task.cancel()

    loop = asyncio.get_running_loop()
    timer = loop.call_later(timeout, stop, "timeout") if timeout is not None else None
    unregister = ctx.cancel.on_cancel(lambda: stop("cancel"))
    try:
        return _Outcome(value=await awaitable)
    except asyncio.CancelledError:
        if not stopped_by:
            raise  # canceled from outside (the turn's task): not ours to swallow
        _uncancel(task)
        return _Outcome(timed_out=True) if stopped_by[0] == "timeout" else _Outcome(canceled=True)
    except Exception as error:
        return _Outcome(error=error)
    finally:
        if timer is not None:
            timer.cancel()
        unregister()


def _uncancel(task: asyncio.Task[Any]) -> None:
    # Python 3.11+ counts cancellation requests; ours was handled, so take it back.
    uncancel = getattr(task, "uncancel", None)
    if uncancel is not None:
        uncancel()


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()


def shown_path(target: str, root: Path) -> str:
    """An action's target as the card shows it: a path under the server's root relative to it (the user knows
    their project's files by those names), anything else (a command, a URL, a path outside) as it is."""
    if not target or "\n" in target or not Path(target).is_absolute():
        return target
    try:
        return Path(target).resolve().relative_to(root.resolve()).as_posix() or "."
    except (ValueError, OSError):
        return target
