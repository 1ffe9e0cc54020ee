"""Faults injected for real: the Jupyter server is stopped with SIGTERM mid-turn and started again; an MCP
server process is killed in the middle of a tools/call.

(The other faults of the README's reliability list live beside the code they exercise: model errors in
test_loop.py, a dying kernel in test_notebook_tools.py, a failing write in test_filestate.py and
test_edit_pipeline.py, a dropped browser socket in test_routes_sessions.py, a corrupted store in
test_sessions.py.)
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from agent_harness import make_manager, make_runtime, of_type, wait_for_event
from jupyter_process import JupyterProcess
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.agent.conversations import ConversationManager
from hdsp_agent.agent.store import SessionStore
from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.mcp.manager import McpManager
from hdsp_agent.permissions.policy import build_policy

pytestmark = pytest.mark.asyncio


def processes_with(marker: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


@pytest.mark.fault
async def test_sigterm_mid_turn_keeps_history_marks_the_turn_and_leaves_no_orphans(tmp_path: Path) -> None:
    marker = f"{uuid.uuid4().int % 100000 + 1000}.25"  # a unique sleep duration identifies our process
    command = f"sleep {marker}"
    store = tmp_path / "sessions.sqlite3"
    settings = {"store_path": str(store), "allow_rules": [f"run_terminal_command({command})"]}
    with ScriptedModel(
        [tool_calls(("run_terminal_command", json.dumps({"command": command, "timeout": 600})))]
    ) as model:
        first = JupyterProcess(model_url=model.base_url, extra=settings)
        first.start()
        try:
            async with httpx.AsyncClient(timeout=30) as http:
                session_id = await first.create_session(http)
                ws = await first.connect(session_id)
                ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
                ws.write_message(json.dumps({"type": "send", "content": "wait a long time"}))
                while True:
                    event = json.loads(await asyncio.wait_for(ws.read_message(), 30))
                    if event.get("type") == "tool.status" and event.get("status") == "calling":
                        break
                for _ in range(50):
                    if processes_with(command):
                        break
                    await asyncio.sleep(0.1)
                assert processes_with(command), "the command is running"
                assert first.process is not None
                first.process.send_signal(signal.SIGTERM)
                await asyncio.to_thread(first.process.wait, 30)
        finally:
            if first.process is not None and first.process.poll() is None:
                first.process.kill()
        await asyncio.sleep(0.5)
        assert processes_with(command) == [], "no orphan process from run_terminal_command"

        second = JupyterProcess(model_url=model.base_url, extra=settings)
        second.start()
        try:
            async with httpx.AsyncClient(timeout=30) as http:
                listed = (await http.get(f"{second.base}/hdsp-agent/sessions", headers=second.headers)).json()
                assert [s["id"] for s in listed["sessions"]] == [session_id]
                assert listed["sessions"][0]["status"] == "idle"
                events = (
                    await http.get(
                        f"{second.base}/hdsp-agent/sessions/{session_id}/events", headers=second.headers
                    )
                ).json()["events"]
        finally:
            second.stop()
            first.scratch.cleanup()
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message.user" and events[0]["content"] == "wait a long time"
    end = [e for e in events if e["type"] == "turn.end"][-1]
    assert end["reason"] == "interrupted"
    call_status = [e["status"] for e in events if e["type"] == "tool.status"]
    assert call_status[-1] in ("canceled",)


HOSTILE_MCP = Path(__file__).parent / "mcp_servers" / "hostile_server.py"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.fault
async def test_mcp_server_killed_mid_call_reports_its_stderr_loses_nothing_and_restarts(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    store = tmp_path / "sessions.sqlite3"
    script = [
        tool_calls(("hostile__wait", "{}")),
        tool_calls(("hostile__echo", json.dumps({"text": "back again"}))),
        text("The server came back."),
    ]
    with ScriptedModel(script) as model:
        config = HdspAgentConfig(allow_rules=["hostile__wait", "hostile__echo"])
        runtime = make_runtime(
            root, model, [], policy=build_policy(config, root, tmp_path / "permissions.json")
        )
        mcp = McpManager(
            runtime.registry,
            root_dir=root,
            trait_servers={
                "mcpServers": {"hostile": {"command": sys.executable, "args": [str(HOSTILE_MCP)]}}
            },
            config_dir=tmp_path / "config",
        )
        runtime.refresh_tools, runtime.load_tools = mcp.refresh, mcp.load
        sessions = make_manager(root, runtime, store)
        try:
            session = sessions.create()
            session.send("wait for the server")
            await wait_for_event(session, "tool.status")
            connection = mcp.connections["hostile"]
            waiting = None
            for _ in range(300):  # the server says on stderr when it is inside the call, and its pid
                waiting = re.search(r"pid (\d+) waiting inside tools/call", connection.stderr_tail())
                if waiting:
                    break
                await asyncio.sleep(0.05)
            assert waiting is not None, "the call reached the server"
            first_pid = int(waiting.group(1))
            os.kill(first_pid, signal.SIGKILL)
            await asyncio.wait_for(session.wait(), 30)
            events = list(session.events)
            state_after = connection.state
        finally:
            await sessions.shutdown()
            await mcp.close()

    statuses = {e["name"]: e for e in of_type(events, "tool.status") if e["status"] in ("done", "errored")}
    killed = statuses["hostile__wait"]
    assert killed["status"] == "errored" and killed["error"]["code"] == "E_MCP_SERVER_DOWN"
    assert "waiting inside tools/call" in killed["error"]["message"], "the error carries the stderr tail"
    assert statuses["hostile__echo"]["status"] == "done", "the next call started the server again"
    assert of_type(events, "turn.end")[-1]["reason"] == "completed"
    assert state_after == "connected" and not alive(first_pid), "a new server process, the killed one reaped"

    # Nothing lost: a fresh manager reads the whole conversation back from the store.
    reopened_store = SessionStore(store)
    try:
        reopened = await ConversationManager(reopened_store, runtime).get(session.record.id)
    finally:
        reopened_store.close()
    tool_results = [m["content"] for m in reopened.messages if m["role"] == "tool"]
    assert "E_MCP_SERVER_DOWN" in tool_results[0] and "back again" in tool_results[1]
    assert reopened.messages[-1] == {"role": "assistant", "content": "The server came back."}
    assert [e["seq"] for e in reopened.events] == [e["seq"] for e in events]
