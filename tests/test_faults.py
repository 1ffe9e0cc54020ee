"""Faults injected for real: the Jupyter server is stopped with SIGTERM mid-turn and started again."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from jupyter_process import JupyterProcess
from scripted_model import ScriptedModel, tool_calls

pytestmark = pytest.mark.asyncio


def processes_with(marker: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


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
