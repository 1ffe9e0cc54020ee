"""Per-user quotas on the server: turns at once and model tokens per day, refused with an ``error`` event (the
sidebar shows it as an error item) and the turn ended; a real Jupyter server and the scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_model import ScriptedModel, text, tool_calls
from test_routes_sessions import create_session, is_turn_end, receive_until

from hdsp_agent.agent.quotas import E_QUOTA_TOKENS, E_QUOTA_TURNS, QuotaExceeded, Quotas


@pytest.fixture
def limits() -> dict[str, int]:
    """The quota settings; each test sets its own with ``parametrize("limits", ...)``."""
    return {}


@pytest.fixture
def jp_server_config(
    jp_server_config: dict[str, Any], scripted_model: ScriptedModel, tmp_path: Path, limits: dict[str, int]
) -> dict[str, Any]:
    return {
        **jp_server_config,
        "HdspAgentApp": {
            "model": "scripted",
            "base_url": scripted_model.base_url,
            "max_retries": 0,
            "store_path": str(tmp_path / "sessions.sqlite3"),
            **limits,
        },
    }


async def start_turn(jp_fetch: Any, jp_ws_fetch: Any, content: str) -> Any:
    session = await create_session(jp_fetch)
    ws = await jp_ws_fetch("hdsp-agent", "sessions", session["id"], "ws")
    ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    ws.write_message(json.dumps({"type": "send", "content": content}))
    return ws


@pytest.mark.parametrize("limits", [{"max_concurrent_turns": 1}])
async def test_a_turn_beyond_the_concurrent_limit_is_refused_with_a_clear_message(
    jp_fetch: Any, jp_ws_fetch: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(text("slow answer", pieces=8, delay=0.3))
    first = await start_turn(jp_fetch, jp_ws_fetch, "one")
    await receive_until(first, lambda m: m.get("type") == "assistant.delta")
    second = await start_turn(jp_fetch, jp_ws_fetch, "two")
    refused = await receive_until(second, is_turn_end)
    [error] = [m for m in refused if m["type"] == "error"]
    assert error["code"] == E_QUOTA_TURNS and "1 turn(s) running" in error["message"]
    assert refused[-1]["reason"] == "error"
    finished = await receive_until(first, is_turn_end)
    assert finished[-1]["reason"] == "completed"
    # The slot is free again once the first turn ended.
    scripted_model.add(text("now it runs"))
    third = await start_turn(jp_fetch, jp_ws_fetch, "three")
    assert (await receive_until(third, is_turn_end))[-1]["reason"] == "completed"
    for ws in (first, second, third):
        ws.close()


@pytest.mark.parametrize("limits", [{"daily_token_limit": 50}])
async def test_the_daily_token_limit_stops_a_turn_between_steps_and_refuses_the_next(
    jp_fetch: Any, jp_ws_fetch: Any, scripted_model: ScriptedModel, jp_data_dir: Path
) -> None:
    scripted_model.add(tool_calls(("ls", json.dumps({"dirPath": "."}))), text("never reached"))
    ws = await start_turn(jp_fetch, jp_ws_fetch, "list")
    events = await receive_until(ws, is_turn_end)
    ws.close()
    # The first model call went through (the allowance was not used up yet); its tool ran; then it stopped.
    assert [m["status"] for m in events if m["type"] == "tool.status" and m["name"] == "ls"][-1] == "done"
    [error] = [m for m in events if m["type"] == "error"]
    assert error["code"] == E_QUOTA_TOKENS and "allowance is used up" in error["message"]
    assert scripted_model.pending == 1, "the second model call must not have been made"
    usage = json.loads((jp_data_dir / "hdsp_agent" / "usage.json").read_text())
    assert usage["tokens"] >= 50

    again = await start_turn(jp_fetch, jp_ws_fetch, "more")
    refused = await receive_until(again, is_turn_end)
    again.close()
    assert [m["code"] for m in refused if m["type"] == "error"] == [E_QUOTA_TOKENS]
    assert scripted_model.pending == 1


def test_the_days_count_survives_a_restart_and_renews_the_next_day(tmp_path: Path) -> None:
    usage = tmp_path / "usage.json"
    quotas = Quotas(daily_tokens=100, usage_path=usage)
    quotas.add_tokens(120)
    with pytest.raises(QuotaExceeded):
        Quotas(daily_tokens=100, usage_path=usage).start_turn()
    usage.write_text(json.dumps({"day": "2000-01-01", "tokens": 10_000}))
    Quotas(daily_tokens=100, usage_path=usage).start_turn()  # another day: counted from 0
