"""The audit log: every tool call with its decision and who approved it, every model call with its tokens,
bounded rotation, and ``hdsp-agent audit``. The server tests run a real Jupyter server and scripted model."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from scripted_model import ScriptedModel, text, tool_calls
from test_routes_sessions import create_session, is_turn_end, receive_until

from hdsp_agent.audit.log import AuditLog, audit_files
from hdsp_agent.audit.summary import parse_since, read_records, summarize


@pytest.fixture
def audit_path(tmp_path: Path) -> Path:
    return tmp_path / "audit" / "audit.jsonl"


@pytest.fixture
def jp_server_config(
    jp_server_config: dict[str, Any], scripted_model: ScriptedModel, tmp_path: Path, audit_path: Path
) -> dict[str, Any]:
    return {
        **jp_server_config,
        "HdspAgentApp": {
            "model": "scripted",
            "base_url": scripted_model.base_url,
            "max_retries": 0,
            "store_path": str(tmp_path / "sessions.sqlite3"),
            "audit_log_path": str(audit_path),
            "deny_rules": ["read_file(secret*)"],
        },
    }


async def test_every_tool_call_is_audited_with_its_decision_and_who_approved(
    jp_fetch: Any, jp_ws_fetch: Any, scripted_model: ScriptedModel, audit_path: Path
) -> None:
    scripted_model.add(
        tool_calls(
            ("ls", json.dumps({"dirPath": "."})),
            ("create_new_file", json.dumps({"filepath": "notes.txt", "contents": "hello"})),
            ("read_file", json.dumps({"filepath": "secret.txt"})),
            ("no_such_tool", "{}"),
        ),
        text("Done."),
    )
    session = await create_session(jp_fetch)
    ws = await jp_ws_fetch("hdsp-agent", "sessions", session["id"], "ws")
    ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    ws.write_message(json.dumps({"type": "send", "content": "go"}))
    asked = await receive_until(ws, lambda m: m.get("type") == "approval.request")
    call_id = asked[-1]["request"]["call_id"]
    ws.write_message(json.dumps({"type": "approve", "call_id": call_id, "scope": "session"}))
    await receive_until(ws, is_turn_end)
    ws.close()

    records = list(read_records(audit_path))
    calls = {r["tool"]: r for r in records if r["event"] == "tool_call"}
    assert set(calls) == {"ls", "create_new_file", "read_file", "no_such_tool"}
    assert calls["ls"]["decision"] == "allow" and calls["ls"]["approval"]["by"] == "policy"
    approved = calls["create_new_file"]
    assert approved["decision"] == "ask" and approved["status"] == "ok"
    who = os.environ.get("JUPYTERHUB_USER") or getpass.getuser()
    assert approved["approval"] == {"by": who, "approved": True, "scope": "session"}
    denied = calls["read_file"]
    assert (denied["decision"], denied["rule"], denied["status"]) == ("deny", "read_file(secret*)", "denied")
    assert calls["no_such_tool"]["decision"] is None and calls["no_such_tool"]["status"] == "error"
    assert all(r["session"] == session["id"] and r["user"] == who for r in records)
    models = [r for r in records if r["event"] == "model_call"]
    assert [m["model"] for m in models] == ["scripted", "scripted"]
    # The scripted stream reports no usage: the counts are estimated, and say so.
    assert all(m["prompt_tokens"] > 0 and m["completion_tokens"] > 0 and m["estimated"] for m in models)


def test_rotation_keeps_the_log_within_its_files_and_bytes(audit_path: Path) -> None:
    log = AuditLog(audit_path, max_bytes=4096, backups=2)
    for number in range(400):
        log.write({"event": "tool_call", "tool": "ls", "status": "ok", "number": number})
    log.close()
    files = audit_files(audit_path)
    assert [f.name for f in files] == ["audit.jsonl.2", "audit.jsonl.1", "audit.jsonl"]
    assert all(f.stat().st_size <= 4096 for f in files)
    numbers = [r["number"] for r in read_records(audit_path)]
    assert (
        numbers == sorted(numbers) and numbers[-1] == 399
    )  # oldest first, the newest kept, the oldest dropped
    assert numbers[0] > 0


def test_the_audit_command_sums_up_the_records_since_a_time(audit_path: Path) -> None:
    now = time.time()
    audit_path.parent.mkdir(parents=True)
    old = {"ts": now - 3 * 86400, "user": "alice", "event": "tool_call", "tool": "ls", "status": "ok"}
    recent = [
        {
            "ts": now - 60,
            "user": "alice",
            "event": "tool_call",
            "tool": "run_cell",
            "status": "ok",
            "decision": "ask",
            "approval": {"by": "alice", "approved": True, "scope": "once"},
        },
        {
            "ts": now - 50,
            "user": "alice",
            "event": "tool_call",
            "tool": "run_terminal_command",
            "status": "denied",
            "decision": "deny",
            "approval": {"by": "policy", "approved": False},
        },
        {
            "ts": now - 40,
            "user": "alice",
            "event": "model_call",
            "model": "m",
            "prompt_tokens": 100,
            "completion_tokens": 7,
        },
    ]
    audit_path.write_text("\n".join(json.dumps(r) for r in [old, *recent]) + "\n{torn line\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "hdsp_agent.cli",
            "audit",
            "--file",
            str(audit_path),
            "--since",
            "1d",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(run.stdout)
    assert [(c["tool"], c["status"]) for c in summary["tool_calls"]] == [
        ("run_cell", "ok"),
        ("run_terminal_command", "denied"),
    ]
    assert summary["decisions"] == {"ask": 1, "deny": 1}
    assert {(a["by"], a["scope"]) for a in summary["approvals"]} == {("alice", "once"), ("policy", "-")}
    assert summary["models"] == [{"model": "m", "calls": 1, "prompt_tokens": 100, "completion_tokens": 7}]
    as_text = subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", "audit", "--file", str(audit_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "ls" in as_text and "run_cell" in as_text  # no --since: everything
    bad = subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", "audit", "--file", str(audit_path), "--since", "yesterday"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "--since" in bad.stderr


def test_since_takes_durations_and_dates() -> None:
    assert parse_since("2h", now=10_000.0) == 10_000.0 - 7200
    assert parse_since("2026-11-25") < parse_since("2026-11-25T09:00")
    assert summarize([]).text() == "No audit records in this period."
