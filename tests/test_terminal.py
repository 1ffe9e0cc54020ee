"""run_terminal_command and the background process tracker, with real bash processes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest, FixedApprover
from hdsp_agent.tools.base import CancelToken, ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.processes import ProcessTracker, collapse_carriage_returns, strip_ansi
from hdsp_agent.tools.builtin.terminal import (
    RunTerminalCommandArgs,
    RunTerminalCommandTool,
    scrub_environment,
)
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio


def context(root: Path, **overrides: Any) -> ToolContext:
    session_dir = {"session_dir": str(root / "_session")}
    return ToolContext(root_dir=root, session_id="session-1", client_context=session_dir, **overrides)


async def call(tool: RunTerminalCommandTool, ctx: ToolContext, **arguments: Any) -> ToolResult:
    executor = ToolExecutor(ToolRegistry([tool]), approver=FixedApprover(True))
    return await executor.execute(ToolCall(id="call-1", name=tool.name, arguments=json.dumps(arguments)), ctx)


def pid_running(pid: int) -> bool:
    """True while the process exists and is not a zombie (a slow init may not have reaped it yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


async def wait_until_gone(pid: int, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while pid_running(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return not pid_running(pid)


async def wait_for_file(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} was never written")


async def test_output_is_interleaved_and_the_exit_code_reported(tmp_path: Path) -> None:
    command = "echo out; echo err >&2; echo out2; exit 3"
    result = await call(RunTerminalCommandTool(), context(tmp_path), command=command)
    assert result.status == "ok"
    assert result.content == "out\nerr\nout2\nExit code: 3"
    assert result.details["exit_code"] == 3


async def test_ansi_escapes_are_stripped(tmp_path: Path) -> None:
    command = r"printf '\033[1;31mred\033[0m \033]0;title\007plain\n'"
    result = await call(RunTerminalCommandTool(), context(tmp_path), command=command)
    assert result.content.splitlines()[0] == "red plain"
    assert strip_ansi("\x1b[2K\x1b[1Gdone") == "done"
    assert collapse_carriage_returns("10%\r50%\r100%\nnext") == "100%\nnext"


async def test_server_secrets_are_not_in_the_command_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "JUPYTER_TOKEN",
        "APP_SECRET",
        "MY_CRED",
    ):
        monkeypatch.setenv(name, "secret-value")
    monkeypatch.setenv("PLAIN_SETTING", "visible-value")
    tool = RunTerminalCommandTool(extra_secret_names=["MY_CRED"])
    result = await call(tool, context(tmp_path), command="env")
    assert "secret-value" not in result.content
    assert "PLAIN_SETTING=visible-value" in result.content
    assert scrub_environment({"a_token": "x", "PATH": "/bin", "X_PASSWORD": "p"}) == {"PATH": "/bin"}
    assert os.environ["OPENAI_API_KEY"] == "secret-value"  # the server's own environment is untouched


async def test_stdin_is_closed_so_prompts_do_not_wait(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await call(
        RunTerminalCommandTool(), context(tmp_path), command='read answer; echo "got:[$answer] $?"'
    )
    assert time.monotonic() - started < 5
    assert result.content.startswith("got:[] 1")


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    command = "sleep 300 & echo $! > child.pid; sleep 300"
    started = time.monotonic()
    result = await call(RunTerminalCommandTool(), context(tmp_path), command=command, timeout=1)
    assert time.monotonic() - started < 8
    assert result.status == "ok" and result.details["timed_out"] is True
    assert "Timed out after 1 s" in result.content and "(killed by timeout)" in result.content
    assert await wait_until_gone(int((tmp_path / "child.pid").read_text()))


async def test_children_left_running_are_stopped(tmp_path: Path) -> None:
    result = await call(
        RunTerminalCommandTool(), context(tmp_path), command="sleep 300 & echo $! > child.pid"
    )
    assert "left processes running in the background; they were stopped" in result.content
    assert await wait_until_gone(int((tmp_path / "child.pid").read_text()))


async def test_time_limit_leaves_room_for_the_kill_sequence() -> None:
    limit = RunTerminalCommandTool().time_limit(RunTerminalCommandArgs(command="x", timeout=30))
    assert limit is not None and limit >= 30 + 5


async def test_long_output_keeps_head_and_tail_and_saves_the_log(tmp_path: Path) -> None:
    result = await call(RunTerminalCommandTool(), context(tmp_path), command="seq 1 20000; echo FINAL")
    log_path = Path(result.details["log_path"])
    assert log_path.parent == tmp_path / "_session" / "terminal"
    assert result.content.startswith("1\n2\n3\n")
    assert "FINAL\nExit code: 0" in result.content
    assert str(log_path) in result.content and "read_file_range" in result.content
    assert len(result.content) < 30_000
    log_lines = log_path.read_text().splitlines()
    assert log_lines[-1] == "FINAL" and len(log_lines) == 20001
    assert "output_cut" not in result.details  # our own cut already fits the executor's budget


async def test_logs_go_to_the_temp_dir_without_a_session_dir(tmp_path: Path) -> None:
    session_id = f"test-{uuid.uuid4().hex}"
    ctx = ToolContext(root_dir=tmp_path, session_id=session_id)
    result = await call(RunTerminalCommandTool(), ctx, command="seq 1 20000")
    session_dir = Path(tempfile.gettempdir()) / "hdsp-agent" / session_id
    try:
        assert Path(result.details["log_path"]).parent == session_dir / "terminal"
    finally:
        shutil.rmtree(session_dir, ignore_errors=True)


async def test_working_directory_inside_the_root_and_refused_outside(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    inside = await call(RunTerminalCommandTool(), context(tmp_path), command="pwd", workingDirectory="sub")
    assert inside.content.splitlines()[0] == str((tmp_path / "sub").resolve())
    outside = await call(RunTerminalCommandTool(), context(tmp_path), command="pwd", workingDirectory="..")
    assert outside.status == "error" and outside.error is not None
    assert outside.error.code == "E_PATH_OUTSIDE_ROOT"
    missing = await call(RunTerminalCommandTool(), context(tmp_path), command="pwd", workingDirectory="nope")
    assert missing.error is not None and missing.error.code == "E_PATH_NOT_FOUND"


async def test_background_process_lifecycle(tmp_path: Path) -> None:
    tracker = ProcessTracker()
    tool = RunTerminalCommandTool(tracker=tracker)
    command = "echo started; sleep 0.3; echo later; exec sleep 300"
    result = await call(tool, context(tmp_path), command=command, waitForCompletion=False)
    assert result.status == "ok"
    assert "Started background process bg-1" in result.content and "started" in result.content
    log_path = Path(result.details["log_path"])
    assert str(log_path) in result.content
    [entry] = tracker.list("session-1")
    assert entry.running and entry.process_id == result.details["id"] == "bg-1"
    assert tracker.list("other-session") == []
    deadline = time.monotonic() + 10
    while "later" not in log_path.read_text() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert log_path.read_text() == "started\nlater\n"  # the log keeps growing after the call returned
    assert await tracker.kill("bg-1", grace=1)
    assert not entry.running and await wait_until_gone(entry.pid)
    assert await tracker.kill("bg-unknown") is False


async def test_background_command_that_fails_at_once_reports_its_exit_code(tmp_path: Path) -> None:
    tool = RunTerminalCommandTool(tracker=ProcessTracker())
    result = await call(tool, context(tmp_path), command="echo broken >&2; exit 7", waitForCompletion=False)
    assert "exited with code 7" in result.content and "broken" in result.content


async def test_kill_session_stops_every_background_process_of_the_session(tmp_path: Path) -> None:
    tracker = ProcessTracker()
    tool = RunTerminalCommandTool(tracker=tracker, startup_seconds=0.2)
    first = await call(tool, context(tmp_path), command="sleep 300 & sleep 300", waitForCompletion=False)
    second = await call(tool, context(tmp_path), command="sleep 300", waitForCompletion=False)
    other_ctx = ToolContext(
        root_dir=tmp_path, session_id="s2", client_context={"session_dir": str(tmp_path / "s2")}
    )
    other = await call(tool, other_ctx, command="sleep 300", waitForCompletion=False)
    pids = [first.details["pid"], second.details["pid"]]
    assert await tracker.kill_session("session-1", grace=1) == 2
    assert tracker.list("session-1") == []
    assert all([await wait_until_gone(pid) for pid in pids])
    assert [entry.pid for entry in tracker.list("s2")] == [other.details["pid"]] and pid_running(
        other.details["pid"]
    )
    await tracker.kill_all(grace=1)
    assert await wait_until_gone(other.details["pid"])


async def test_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    cancel = CancelToken()
    ctx = context(tmp_path, cancel=cancel)
    command = "sleep 300 & echo $! > child.pid; sleep 300"
    task = asyncio.ensure_future(call(RunTerminalCommandTool(), ctx, command=command))
    child = int(await wait_for_file(tmp_path / "child.pid"))
    cancel.cancel("stopped by the user")
    result = await asyncio.wait_for(task, 10)
    assert result.status == "canceled"
    assert await wait_until_gone(child)


async def test_permission_is_execute_with_the_command(tmp_path: Path) -> None:
    requests: list[ApprovalRequest] = []

    class Recorder:
        async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
            requests.append(request)
            return ApprovalReply(approved=False, reason="not now")

    tool = RunTerminalCommandTool()
    executor = ToolExecutor(ToolRegistry([tool]), approver=Recorder())
    tool_call = ToolCall(id="c", name=tool.name, arguments='{"command": "touch made"}')
    result = await executor.execute(tool_call, context(tmp_path))
    assert result.status == "denied" and not (tmp_path / "made").exists()
    assert requests[0].action_kind == "Execute" and requests[0].action_target == "touch made"


async def test_run_terminal_command_schema_snapshot() -> None:
    assert parameters_schema(RunTerminalCommandTool()) == {
        "additionalProperties": False,
        "properties": {
            "command": {"description": "Passed to `bash -c`.", "type": "string"},
            "waitForCompletion": {
                "default": True,
                "description": "false: run in the background (servers, watchers).",
                "type": "boolean",
            },
            "workingDirectory": {"type": "string", "description": "Relative to the project root."},
            "timeout": {
                "default": 120.0,
                "description": "Seconds before the command is stopped.",
                "exclusiveMinimum": 0,
                "maximum": 600.0,
                "type": "number",
            },
        },
        "required": ["command"],
        "type": "object",
    }
