"""Per-turn usage: the server's own counts (``stream_options.include_usage``), split by part, adding up."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn
from o200k import prompt_tokens
from scripted_model import ScriptedModel, error, text, tool_calls

from hdsp_agent.agent.usage_breakdown import PARTS, prompt_breakdown
from hdsp_agent.tools.builtin.ls import ListDirectoryTool


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["native", "text"])
async def test_each_steps_breakdown_adds_up_to_what_the_server_reported(tmp_path: Path, mode: str) -> None:
    (tmp_path / "a.txt").write_text("a")
    call = (
        tool_calls(("ls", "{}"))
        if mode == "native"
        else text('<tool_call>{"name": "ls", "arguments": {}}</tool_call>')
    )
    with ScriptedModel([call, text("One file.")], report_usage=True) as model:
        runtime = make_runtime(tmp_path, model, [ListDirectoryTool()])
        runtime.models.models[0].tool_calls = mode
        events = await run_turn(make_manager(tmp_path, runtime).create(), "what is here?")
    assert all(request["stream_options"] == {"include_usage": True} for request in model.requests)
    usages = [event["usage"] for event in of_type(events, "assistant.message")]
    assert [u["prompt_tokens"] for u in usages] == [prompt_tokens(r) for r in model.requests]
    for usage in usages:
        assert usage["estimated"] is False
        assert sum(usage["breakdown"].values()) == usage["prompt_tokens"]
        assert set(usage["breakdown"]) == set(PARTS)
    first, second = (u["breakdown"] for u in usages)
    assert first["tools"] > 0 and first["system"] > 0 and first["tool_results"] == 0
    assert second["tool_results"] > 0, "the second step carries the ls result"


@pytest.mark.asyncio
async def test_an_endpoint_that_refuses_stream_options_gets_estimates(tmp_path: Path) -> None:
    refusal = error(400, "Unrecognized request argument supplied: stream_options")
    with ScriptedModel([refusal, text("Hi.")]) as model:
        runtime = make_runtime(tmp_path, model, [])
        events = await run_turn(make_manager(tmp_path, runtime).create(), "hi")
    assert "stream_options" in model.requests[0] and "stream_options" not in model.requests[1]
    usage = of_type(events, "assistant.message")[0]["usage"]
    assert usage["estimated"] is True and sum(usage["breakdown"].values()) == usage["prompt_tokens"]


def test_the_parts_are_apportioned_exactly() -> None:
    request = [
        {"role": "system", "content": "s" * 300},
        {"role": "user", "content": "u" * 100},
        {"role": "tool", "tool_call_id": "c", "content": "r" * 100},
    ]
    split = prompt_breakdown(request, [], 1001)
    assert sum(split.values()) == 1001 and split["system"] > split["history"] and split["tools"] == 0
    assert prompt_breakdown([], [], 0) == dict.fromkeys(PARTS, 0)
