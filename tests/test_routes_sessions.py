"""Sessions over the real Jupyter server: REST for the list, the WebSocket for the conversation.

These tests run on pytest-jupyter's own event loop (no asyncio mark: with it, requests to the server hang).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import tornado.httpclient
import tornado.websocket
from scripted_model import ScriptedModel, text, tool_calls


@pytest.fixture
def jp_server_config(
    jp_server_config: dict[str, Any], scripted_model: ScriptedModel, tmp_path: Path
) -> dict[str, Any]:
    return {
        **jp_server_config,
        "HdspAgentApp": {
            "model": "scripted",
            "base_url": scripted_model.base_url,
            "api_key": "sk-secret-never-shown",
            "max_retries": 0,
            "store_path": str(tmp_path / "sessions.sqlite3"),
        },
    }


async def create_session(jp_fetch: Any, title: str = "") -> dict[str, Any]:
    response = await jp_fetch("hdsp-agent", "sessions", method="POST", body=json.dumps({"title": title}))
    assert response.code == 201
    return json.loads(response.body)


async def receive_until(ws: Any, predicate: Any, timeout: float = 20) -> list[dict[str, Any]]:
    received: list[dict[str, Any]] = []
    while True:
        raw = await asyncio.wait_for(ws.read_message(), timeout)
        assert raw is not None, "the socket closed"
        message = json.loads(raw)
        received.append(message)
        if predicate(message):
            return received


def is_turn_end(message: dict[str, Any]) -> bool:
    return message.get("type") == "turn.end"


async def test_session_rest_lifecycle(jp_fetch: Any) -> None:
    created = await create_session(jp_fetch, "First")
    listed = json.loads((await jp_fetch("hdsp-agent", "sessions")).body)["sessions"]
    assert [s["id"] for s in listed] == [created["id"]]
    renamed = await jp_fetch(
        "hdsp-agent", "sessions", created["id"], method="PATCH", body=json.dumps({"title": "Second"})
    )
    assert json.loads(renamed.body)["title"] == "Second"
    deleted = await jp_fetch("hdsp-agent", "sessions", created["id"], method="DELETE")
    assert deleted.code == 204
    with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
        await jp_fetch("hdsp-agent", "sessions", created["id"])
    assert caught.value.code == 404


async def test_conversation_over_the_websocket(
    jp_fetch: Any, jp_ws_fetch: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(tool_calls(("ls", '{"dirPath": "."}')), text("All listed."))
    session = await create_session(jp_fetch)
    ws = await jp_ws_fetch("hdsp-agent", "sessions", session["id"], "ws")
    ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    context = {"active_document": {"path": "analysis.ipynb"}}
    ws.write_message(json.dumps({"type": "send", "content": "list files", "id": "r1", "context": context}))
    received = await receive_until(ws, is_turn_end)
    replies = [m for m in received if m["type"] == "command.ok"]
    assert {(r["command"], r.get("id")) for r in replies} >= {("send", "r1")}
    events = [m for m in received if "seq" in m]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "turn.end" and events[-1]["reason"] == "completed"
    assert any(e["type"] == "tool.status" and e["status"] == "done" for e in events)
    assert "sk-secret-never-shown" not in json.dumps(received)
    ws.close()
    # The conversation knows the notebook it was started in: the history list shows it.
    listed = json.loads((await jp_fetch("hdsp-agent", "sessions")).body)["sessions"]
    assert [s["notebooks"] for s in listed] == [["analysis.ipynb"]]

    exported = await jp_fetch(
        "hdsp-agent", "sessions", session["id"], "export", params={"format": "markdown"}
    )
    assert "All listed." in exported.body.decode()


@pytest.mark.fault
async def test_reconnect_replays_missed_events_exactly_once(
    jp_fetch: Any, jp_ws_fetch: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(text("slow answer " * 10, pieces=20, delay=0.05))
    session = await create_session(jp_fetch)
    first = await jp_ws_fetch("hdsp-agent", "sessions", session["id"], "ws")
    first.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    first.write_message(json.dumps({"type": "send", "content": "talk"}))
    seen = await receive_until(first, lambda m: m.get("type") == "assistant.delta")
    last_seen = max(m["seq"] for m in seen if "seq" in m)
    first.close()  # the browser reloads mid-turn

    second = await jp_ws_fetch("hdsp-agent", "sessions", session["id"], "ws")
    second.write_message(json.dumps({"type": "resume", "since_seq": last_seen}))
    rest = await receive_until(second, is_turn_end)
    seqs = [m["seq"] for m in rest if "seq" in m]
    assert seqs == list(range(last_seen + 1, last_seen + 1 + len(seqs))), "no gap, no duplicate"
    full = json.loads((await jp_fetch("hdsp-agent", "sessions", session["id"], "events")).body)["events"]
    assert [e["seq"] for e in full] == list(range(1, len(full) + 1))
    assert [m for m in seen + rest if "seq" in m] == full[: seqs[-1]]
    text_seen = "".join(m["text"] for m in seen + rest if m.get("type") == "assistant.delta")
    assert text_seen == "slow answer " * 10
    second.close()


async def test_two_tabs_see_the_same_events(
    jp_fetch: Any, jp_ws_fetch: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(text("shared"))
    session = await create_session(jp_fetch)
    tabs = [await jp_ws_fetch("hdsp-agent", "sessions", session["id"], "ws") for _ in range(2)]
    for tab in tabs:
        tab.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    tabs[0].write_message(json.dumps({"type": "send", "content": "hi"}))
    streams = [await receive_until(tab, is_turn_end) for tab in tabs]
    events = [[m for m in stream if "seq" in m] for stream in streams]
    assert events[0] == events[1]
    for tab in tabs:
        tab.close()


async def test_bad_commands_get_clear_errors(jp_fetch: Any, jp_ws_fetch: Any) -> None:
    session = await create_session(jp_fetch)
    ws = await jp_ws_fetch("hdsp-agent", "sessions", session["id"], "ws")
    ws.write_message("{not json")
    ws.write_message(json.dumps({"type": "approve", "call_id": "never-issued", "id": "a1"}))
    ws.write_message(json.dumps({"type": "explode"}))
    replies = [json.loads(await asyncio.wait_for(ws.read_message(), 10)) for _ in range(3)]
    errors = [r for r in replies if r["type"] == "command.error"]
    assert len(errors) == 3
    assert any("never-issued" in r["message"] and r.get("id") == "a1" for r in errors)
    ws.close()


async def test_websocket_requires_authentication(jp_fetch: Any, jp_ws_fetch: Any) -> None:
    session = await create_session(jp_fetch)
    with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
        await jp_ws_fetch(
            "hdsp-agent", "sessions", session["id"], "ws", headers={"Authorization": "token wrong"}
        )
    assert caught.value.code == 403


async def test_models_endpoint_hides_keys(jp_fetch: Any) -> None:
    overview = json.loads((await jp_fetch("hdsp-agent", "models")).body)
    assert overview["configured"] is True
    assert overview["models"][0]["model"] == "scripted"
    assert "sk-secret-never-shown" not in json.dumps(overview)
