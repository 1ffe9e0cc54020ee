"""The pipeline, stage by stage, with small real tools (no mocks of the executor's collaborators)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic import BaseModel

from hdsp_agent.events import ApprovalRequestEvent, ToolStatusEvent
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest, FixedApprover
from hdsp_agent.permissions.decision import PolicyDecision
from hdsp_agent.tools.base import (
    CancelToken,
    PermissionAction,
    PermissionKind,
    Tool,
    ToolArgs,
    ToolCall,
    ToolContext,
    ToolError,
    ToolOutput,
    ToolResult,
)
from hdsp_agent.tools.executor import ExecutorSettings, ToolExecutor
from hdsp_agent.tools.middleware import NextHandler, ToolInvocation
from hdsp_agent.tools.output import OutputBudget
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio


class EchoArgs(ToolArgs):
    text: str
    times: int = 1


class EchoTool(Tool[EchoArgs]):
    name = "echo"
    description = "Echo text."
    args_model = EchoArgs
    read_only = True

    async def run(self, args: EchoArgs, ctx: ToolContext) -> str:
        return args.text * args.times


class WriteArgs(ToolArgs):
    path: str


class WriteTool(Tool[WriteArgs]):
    name = "write"
    description = "Pretend to write."
    args_model = WriteArgs

    def __init__(self) -> None:
        self.ran = 0

    def permission(self, args: WriteArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(PermissionKind.FILE_WRITE, args.path, detail="--- a\n+++ b")

    async def run(self, args: WriteArgs, ctx: ToolContext) -> ToolOutput:
        self.ran += 1
        return ToolOutput(f"wrote {args.path}", {"diff": "+x"})


class SleepArgs(ToolArgs):
    seconds: float


class SleepTool(Tool[SleepArgs]):
    name = "sleep"
    description = "Sleep."
    args_model = SleepArgs
    read_only = True
    timeout = 0.3

    def __init__(self) -> None:
        self.stopped = asyncio.Event()

    async def run(self, args: SleepArgs, ctx: ToolContext) -> str:
        try:
            await asyncio.sleep(args.seconds)
        except asyncio.CancelledError:
            self.stopped.set()
            raise
        return "slept"


class FailingTool(Tool[EchoArgs]):
    name = "fail"
    description = "Always fails."
    args_model = EchoArgs
    read_only = True

    async def run(self, args: EchoArgs, ctx: ToolContext) -> str:
        if args.text == "expected":
            raise ToolError("E_CUSTOM", "nothing to do", "try something else")
        raise RuntimeError("boom " + "x" * 5000)


class DenyAllPolicy:
    def decide(self, tool: Tool[Any], args: BaseModel, action: PermissionAction | None, ctx: ToolContext):
        return PolicyDecision("deny", ["writes are disabled here"], rule="write(*)")


class RecordingApprover:
    def __init__(self, reply: ApprovalReply, wait: asyncio.Event | None = None) -> None:
        self.reply = reply
        self.wait = wait
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self.requests.append(request)
        if self.wait is not None:
            await self.wait.wait()
        return self.reply


def make_context(tmp_path: Any, events: list[BaseModel] | None = None, **kwargs: Any) -> ToolContext:
    sink = events if events is not None else []
    return ToolContext(root_dir=tmp_path, emit=sink.append, **kwargs)


def statuses(events: list[BaseModel]) -> list[str]:
    return [event.status.value for event in events if isinstance(event, ToolStatusEvent)]


async def run(
    executor: ToolExecutor, ctx: ToolContext, name: str, arguments: Any, **kwargs: Any
) -> ToolResult:
    return await executor.execute(ToolCall(id="call-1", name=name, arguments=arguments), ctx, **kwargs)


async def test_ok_call_emits_the_lifecycle_and_returns_content(tmp_path: Any) -> None:
    events: list[BaseModel] = []
    executor = ToolExecutor(ToolRegistry([EchoTool()]))
    result = await run(executor, make_context(tmp_path, events), "echo", '{"text": "hi", "times": "2"}')
    assert result.status == "ok" and result.content == "hihi" and result.tool_call_id == "call-1"
    assert statuses(events) == ["generated", "calling", "done"]
    assert events[-1].content == "hihi"


async def test_unknown_tool_suggests_close_names(tmp_path: Any) -> None:
    executor = ToolExecutor(ToolRegistry([EchoTool()]))
    result = await run(executor, make_context(tmp_path), "ecko", "{}")
    assert result.status == "error" and result.error is not None
    assert result.error.code == "E_TOOL_NOT_FOUND"
    assert result.error.suggestion == "Did you mean echo?"


async def test_tool_outside_the_step_catalog_is_refused(tmp_path: Any) -> None:
    registry = ToolRegistry([EchoTool(), WriteTool()])
    executor = ToolExecutor(registry, approver=FixedApprover(True))
    catalog = registry.catalog(disabled=["write"])
    result = await run(executor, make_context(tmp_path), "write", '{"path": "a"}', catalog=catalog)
    assert result.error is not None and result.error.code == "E_TOOL_NOT_IN_CATALOG"
    assert "echo" in (result.error.suggestion or "")


@pytest.mark.parametrize(
    "arguments",
    ['{"text": ', '{"text": "a", "colour": 1}', "{}", '{"text": "a", "times": "lots"}', "[1]"],
)
async def test_invalid_arguments_never_reach_the_tool(tmp_path: Any, arguments: str) -> None:
    events: list[BaseModel] = []
    executor = ToolExecutor(ToolRegistry([EchoTool()]))
    result = await run(executor, make_context(tmp_path, events), "echo", arguments)
    assert result.status == "error" and result.error is not None
    assert result.error.code == "E_TOOL_INVALID_ARGS"
    assert "calling" not in statuses(events)
    assert statuses(events)[-1] == "errored"


async def test_repaired_arguments_run_and_the_model_is_told(tmp_path: Any) -> None:
    executor = ToolExecutor(ToolRegistry([EchoTool()]))
    result = await run(executor, make_context(tmp_path), "echo", "{'text': 'hi',}")
    assert result.status == "ok" and result.content == "hi"
    assert result.notes and "repaired" in result.notes[0] and '"text":"hi"' in result.notes[0]


async def test_policy_denial_does_not_run_and_says_why(tmp_path: Any) -> None:
    tool = WriteTool()
    executor = ToolExecutor(ToolRegistry([tool]), policy=DenyAllPolicy(), approver=FixedApprover(True))
    result = await run(executor, make_context(tmp_path), "write", '{"path": "a"}')
    assert result.status == "denied" and result.error is not None
    assert result.error.code == "E_TOOL_DENIED"
    assert "writes are disabled here" in result.error.message
    assert tool.ran == 0


async def test_ask_without_an_approver_is_denied(tmp_path: Any) -> None:
    tool = WriteTool()
    executor = ToolExecutor(ToolRegistry([tool]))
    result = await run(executor, make_context(tmp_path), "write", '{"path": "a"}')
    assert result.status == "denied" and tool.ran == 0
    assert result.error is not None and "no one is connected" in result.error.message


async def test_approved_call_runs_after_awaiting_approval(tmp_path: Any) -> None:
    events: list[BaseModel] = []
    approver = RecordingApprover(ApprovalReply(approved=True))
    executor = ToolExecutor(ToolRegistry([WriteTool()]), approver=approver)
    result = await run(executor, make_context(tmp_path, events), "write", '{"path": "a.txt"}')
    assert result.status == "ok" and result.details == {"diff": "+x"}
    assert statuses(events) == ["generated", "awaiting_approval", "calling", "done"]
    request = approver.requests[0]
    assert request.call_id == "call-1" and request.arguments == {"path": "a.txt"}
    assert request.action_kind == "FileWrite" and request.preview == "--- a\n+++ b"
    assert any(isinstance(event, ApprovalRequestEvent) for event in events)


async def test_declined_call_reports_the_users_reason_to_the_model(tmp_path: Any) -> None:
    tool = WriteTool()
    approver = RecordingApprover(ApprovalReply(approved=False, reason="use the staging folder"))
    executor = ToolExecutor(ToolRegistry([tool]), approver=approver)
    result = await run(executor, make_context(tmp_path), "write", '{"path": "a"}')
    assert result.status == "denied" and tool.ran == 0
    assert result.error is not None and "Reason: use the staging folder" in result.error.message


@pytest.mark.fault
async def test_timeout_stops_the_tool(tmp_path: Any) -> None:
    tool = SleepTool()
    executor = ToolExecutor(ToolRegistry([tool]))
    result = await run(executor, make_context(tmp_path), "sleep", '{"seconds": 30}')
    assert result.error is not None and result.error.code == "E_TOOL_TIMEOUT"
    assert "0.3 s" in result.error.message
    assert tool.stopped.is_set()


async def test_cancellation_during_run_stops_the_tool(tmp_path: Any) -> None:
    tool = SleepTool()
    tool.timeout = 30
    events: list[BaseModel] = []
    ctx = make_context(tmp_path, events)
    executor = ToolExecutor(ToolRegistry([tool]))
    task = asyncio.create_task(run(executor, ctx, "sleep", '{"seconds": 30}'))
    await asyncio.sleep(0.1)
    ctx.cancel.cancel("stopped by the user")
    result = await asyncio.wait_for(task, 5)
    assert result.status == "canceled" and result.error is not None
    assert result.error.code == "E_TOOL_CANCELED" and "stopped by the user" in result.error.message
    assert tool.stopped.is_set()
    assert statuses(events)[-1] == "canceled"


async def test_cancellation_while_awaiting_approval(tmp_path: Any) -> None:
    tool = WriteTool()
    approver = RecordingApprover(ApprovalReply(approved=True), wait=asyncio.Event())
    ctx = make_context(tmp_path, cancel=CancelToken())
    executor = ToolExecutor(ToolRegistry([tool]), approver=approver)
    task = asyncio.create_task(run(executor, ctx, "write", '{"path": "a"}'))
    await asyncio.sleep(0.05)
    ctx.cancel.cancel()
    result = await asyncio.wait_for(task, 5)
    assert result.status == "canceled" and tool.ran == 0


async def test_expected_tool_error_is_reported_with_its_code(tmp_path: Any) -> None:
    executor = ToolExecutor(ToolRegistry([FailingTool()]))
    result = await run(executor, make_context(tmp_path), "fail", '{"text": "expected"}')
    assert result.error is not None
    assert (result.error.code, result.error.message, result.error.suggestion) == (
        "E_CUSTOM",
        "nothing to do",
        "try something else",
    )


async def test_crash_is_logged_with_traceback_and_message_cut(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    executor = ToolExecutor(ToolRegistry([FailingTool()]), settings=ExecutorSettings(error_message_limit=200))
    with caplog.at_level(logging.ERROR):
        result = await run(executor, make_context(tmp_path), "fail", '{"text": "x"}')
    assert result.error is not None and result.error.code == "E_TOOL_FAILED"
    assert len(result.error.message) == 200 and result.error.message.endswith("... (truncated)")
    assert "RuntimeError: boom" in result.error.message
    assert any(record.exc_info for record in caplog.records), "the traceback must be logged"


async def test_middleware_runs_as_an_onion_by_priority_then_order(tmp_path: Any) -> None:
    order: list[str] = []

    def tracer(label: str):
        async def middleware(invocation: ToolInvocation, call_next: NextHandler) -> ToolResult:
            order.append(f"{label}:before")
            result = await call_next(invocation)
            order.append(f"{label}:after")
            return result

        return middleware

    executor = ToolExecutor(ToolRegistry([EchoTool()]))
    executor.add_middleware(tracer("late"), priority=10)
    executor.add_middleware(tracer("first"), priority=0)
    executor.add_middleware(tracer("second"), priority=0)
    await run(executor, make_context(tmp_path), "echo", '{"text": "x"}')
    assert order == [
        "first:before",
        "second:before",
        "late:before",
        "late:after",
        "second:after",
        "first:after",
    ]


async def test_middleware_may_rewrite_arguments_and_results(tmp_path: Any) -> None:
    async def shout(invocation: ToolInvocation, call_next: NextHandler) -> ToolResult:
        invocation.args = EchoArgs(text=invocation.args.text.upper(), times=1)  # type: ignore[attr-defined]
        result = await call_next(invocation)
        result.content += "!"
        return result

    executor = ToolExecutor(ToolRegistry([EchoTool()]))
    executor.add_middleware(shout)
    result = await run(executor, make_context(tmp_path), "echo", '{"text": "hey"}')
    assert result.content == "HEY!"


async def test_output_budget_is_applied_with_paging_hint(tmp_path: Any) -> None:
    settings = ExecutorSettings(output_budget=OutputBudget(max_chars=1_000))
    executor = ToolExecutor(ToolRegistry([EchoTool()]), settings=settings)
    result = await run(executor, make_context(tmp_path), "echo", '{"text": "0123456789\\n", "times": 1000}')
    assert result.status == "ok"
    assert len(result.content) <= 1_000
    assert result.details["output_cut"]["total_chars"] == 11_000
    assert EchoTool.paging_hint in result.content


async def test_outer_task_cancellation_emits_canceled_and_propagates(tmp_path: Any) -> None:
    tool = SleepTool()
    tool.timeout = 30
    events: list[BaseModel] = []
    executor = ToolExecutor(ToolRegistry([tool]))
    task = asyncio.create_task(run(executor, make_context(tmp_path, events), "sleep", '{"seconds": 30}'))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert statuses(events)[-1] == "canceled"
    assert tool.stopped.is_set()
