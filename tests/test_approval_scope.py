"""Approvals that scale with trust, never past it: the scope offered after the second identical approval
(same tool on the same notebook, the same command), and the mode that runs cells of the notebook in view
without asking — and never anything else.

Through the real executor, broker and policy; the tools are stand-ins under the built-in names (their facts
come from the real tool modules) that report the same actions and never touch a kernel or a shell.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import hdsp_agent.tools.builtin.terminal  # noqa: F401  (declares run_terminal_command's facts)
import hdsp_agent.tools.jupyter.kernel_tools  # noqa: F401  (declares run_cell's and execute_code's facts)
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest
from hdsp_agent.permissions.broker import ApprovalBroker
from hdsp_agent.permissions.grants import PermissionsFile
from hdsp_agent.permissions.policy import AdminFloor, RulePolicy
from hdsp_agent.tools.base import PermissionAction, PermissionKind, Tool, ToolArgs, ToolCall, ToolContext
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry


class CellArgs(ToolArgs):
    path: str
    code: str = "1 + 1"


class RunCellStandIn(Tool[CellArgs]):
    """Reports what run_cell reports (a kernel action on the notebook, the code as detail); runs nothing."""

    name = "run_cell"
    description = "Run a cell."
    args_model = CellArgs

    def permission(self, args: CellArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(PermissionKind.KERNEL, args.path, args.code)

    async def run(self, args: CellArgs, ctx: ToolContext) -> str:
        return "ran"


class ExecuteCodeStandIn(RunCellStandIn):
    name = "execute_code"


class CommandArgs(ToolArgs):
    command: str


class ShellStandIn(Tool[CommandArgs]):
    """Reports what run_terminal_command reports (an execution of the command); runs nothing."""

    name = "run_terminal_command"
    description = "Run a command."
    args_model = CommandArgs

    def permission(self, args: CommandArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(PermissionKind.EXECUTE, args.command)

    async def run(self, args: CommandArgs, ctx: ToolContext) -> str:
        return "ran"


class Setup:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "project"
        self.root.mkdir()
        for name in ("analysis.ipynb", "other.ipynb"):
            (self.root / name).write_text("{}")
        self.policy = RulePolicy(AdminFloor(), PermissionsFile(tmp_path / "config" / "permissions.json"))
        self.broker = ApprovalBroker(on_reply=self.policy.grants.record)
        self.executor = ToolExecutor(
            ToolRegistry([RunCellStandIn(), ExecuteCodeStandIn(), ShellStandIn()]),
            policy=self.policy,
            approver=self.broker,
        )
        self.calls = 0

    async def call(
        self,
        tool: str,
        reply: ApprovalReply | None = None,
        *,
        session_id: str = "s1",
        in_view: str | None = None,
        **arguments: Any,
    ) -> ApprovalRequest | None:
        """Run one call; answer its approval with ``reply`` (allow once by default). The request, or None
        when it ran without asking."""
        self.calls += 1
        call = ToolCall(id=f"c{self.calls}", name=tool, arguments=json.dumps(arguments))
        context = {"active_document": {"path": in_view}} if in_view else {}
        ctx = ToolContext(root_dir=self.root, session_id=session_id, client_context=context)
        task = asyncio.create_task(self.executor.execute(call, ctx))
        for _ in range(500):
            if self.broker.pending or task.done():
                break
            await asyncio.sleep(0.01)
        request = self.broker.pending[0] if self.broker.pending else None
        if request is not None:
            self.broker.resolve(call.id, reply or ApprovalReply(approved=True))
        result = await asyncio.wait_for(task, 10)
        assert result.ok == (reply is None or reply.approved), result
        return request


@pytest.mark.asyncio
async def test_scope_offered_after_the_second_identical_approval_and_never_broader(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    first = await setup.call("run_cell", path="analysis.ipynb", code="df = 1")
    second = await setup.call("run_cell", path="analysis.ipynb", code="df.head()")
    assert first is not None and second is not None
    assert not first.offer_session and not second.offer_session
    # Another notebook, another session, another command: each counts on its own.
    elsewhere = await setup.call("run_cell", path="other.ipynb")
    other_chat = await setup.call("run_cell", session_id="s2", path="analysis.ipynb")
    assert elsewhere is not None and not elsewhere.offer_session
    assert other_chat is not None and not other_chat.offer_session

    third = await setup.call(
        "run_cell", ApprovalReply(approved=True, scope="session"), path="analysis.ipynb", code="plot()"
    )
    assert third is not None and third.offer_session
    # The offer taken: this notebook runs without asking in this chat, nothing else does.
    assert await setup.call("run_cell", path="analysis.ipynb", code="fix()") is None
    assert await setup.call("run_cell", path="other.ipynb") is not None
    assert await setup.call("run_cell", session_id="s2", path="analysis.ipynb") is not None
    assert await setup.call("execute_code", path="analysis.ipynb") is not None


@pytest.mark.asyncio
async def test_shell_scope_is_offered_for_the_same_command_only(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    command = "python make_data.py > out.txt"
    for _ in range(2):
        asked = await setup.call("run_terminal_command", command=command)
        assert asked is not None and not asked.offer_session
    different = await setup.call("run_terminal_command", command="python make_data.py > other.txt")
    assert different is not None and not different.offer_session
    third = await setup.call(
        "run_terminal_command", ApprovalReply(approved=True, scope="session"), command=command
    )
    assert third is not None and third.offer_session
    assert await setup.call("run_terminal_command", command=command) is None
    assert await setup.call("run_terminal_command", command="python make_data.py > other.txt") is not None


@pytest.mark.asyncio
async def test_denied_or_unanswered_calls_do_not_count_towards_the_offer(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    await setup.call("run_cell", path="analysis.ipynb")
    await setup.call("run_cell", ApprovalReply(approved=False), path="analysis.ipynb")
    asked = await setup.call("run_cell", path="analysis.ipynb")
    assert asked is not None and not asked.offer_session


@pytest.mark.asyncio
async def test_run_in_view_mode_runs_only_cells_of_the_notebook_in_view(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    view = "analysis.ipynb"
    # Off by default: the notebook in view still asks.
    assert await setup.call("run_cell", path=view, in_view=view) is not None
    setup.policy.set_mode("accept-edits-run", session_id="s1")
    assert await setup.call("run_cell", path=view, in_view=view) is None
    assert await setup.call("run_cell", path="./analysis.ipynb", in_view="RTC:analysis.ipynb") is None
    # Never another notebook, code outside a cell, a file in view, a shell command or another chat.
    assert await setup.call("run_cell", path="other.ipynb", in_view=view) is not None
    assert await setup.call("run_cell", path=view) is not None
    assert await setup.call("run_cell", path=view, in_view="analysis.py") is not None
    assert await setup.call("execute_code", path=view, in_view=view) is not None
    assert (
        await setup.call(
            "run_terminal_command", command="jupyter nbconvert --execute analysis.ipynb", in_view=view
        )
        is not None
    )
    assert await setup.call("run_cell", session_id="s2", path=view, in_view=view) is not None
