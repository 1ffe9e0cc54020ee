"""The readiness check behind the setup form's Test: one verdict per line, with scripted models for each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_model import Reply, ScriptedModel, error, text, tool_calls

from hdsp_agent.agent.context_budget import estimate_tokens
from hdsp_agent.agent.llm import ModelSettings
from hdsp_agent.agent.readiness import (
    MAX_CHECK_TOKENS,
    ReadinessReport,
    ReadinessStore,
    check_readiness,
)

STREAMED = text("1 2 3 4 5 6 7 8", pieces=8, delay=0.02)
NATIVE_CALL = tool_calls(("report_status", '{"status": "ready"}'))


async def _check(model: ScriptedModel, prompt_tokens: int = 1_000, **options: Any) -> ReadinessReport:
    settings = ModelSettings(model="scripted", base_url=model.base_url, max_retries=0, **options)
    return await check_readiness(settings, lambda profile, mode: prompt_tokens)


def _line(report: ReadinessReport, check: str) -> Any:
    return next(line for line in report.lines if line.check == check)


@pytest.mark.asyncio
async def test_a_capable_model_gets_every_line_ok_and_native_mode() -> None:
    with ScriptedModel([STREAMED, NATIVE_CALL], max_prompt_tokens=32_768) as model:
        report = await _check(model)
    assert (report.streaming, report.tools, report.tool_mode) == ("streamed", "native", "native")
    assert (report.context_window, report.window_source, report.profile) == (32_768, "server", "standard")
    assert report.verdict == "ok" and [line.verdict for line in report.lines] == ["ok"] * 4


@pytest.mark.asyncio
async def test_a_buffering_gateway_is_named_with_what_to_do() -> None:
    buffered = text("1 2 3 4 5 6 7 8", pieces=8)
    buffered.buffered = True
    with ScriptedModel([buffered, NATIVE_CALL]) as model:
        report = await _check(model)
    line = _line(report, "streaming")
    assert report.streaming == "buffered" and line.verdict == "warn"
    assert "buffers" in line.text and "proxy_buffering off" in line.action


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "reply, verdict",
    [
        (error(400, "registry.ollama.ai/library/gemma3:1b does not support tools"), "refused"),
        (text("I am ready! Status: ready."), "none"),
        (text('<tool_call>{"name": "report_status", "arguments": {"status": "ready"}}</tool_call>'), "text"),
    ],
)
async def test_a_model_without_native_tool_calls_is_told_apart_and_gets_text_mode(
    reply: Reply, verdict: str
) -> None:
    with ScriptedModel([STREAMED, reply]) as model:
        report = await _check(model)
    line = _line(report, "tools")
    assert (report.tools, report.tool_mode, line.verdict) == (verdict, "text", "warn")
    assert "describe the tools in the prompt" in line.action and "expect weaker results" in line.action


@pytest.mark.asyncio
async def test_a_malformed_native_call_is_still_native_with_a_warning() -> None:
    with ScriptedModel([STREAMED, tool_calls(("report_status", '{"status": '))]) as model:
        report = await _check(model)
    assert (report.tools, report.tool_mode, _line(report, "tools").verdict) == ("malformed", "native", "warn")


@pytest.mark.asyncio
async def test_a_server_that_rejects_required_is_asked_plainly() -> None:
    with ScriptedModel(
        [STREAMED, error(400, "tool_choice 'required' is not supported"), NATIVE_CALL]
    ) as model:
        report = await _check(model)
    assert report.tools == "native"
    assert [r.get("tool_choice") for r in model.requests[1:]] == ["required", "auto"]


@pytest.mark.asyncio
async def test_the_configured_mode_wins_and_the_line_says_so() -> None:
    with ScriptedModel([STREAMED, NATIVE_CALL]) as model:
        report = await _check(model, tool_calls="text")
    assert report.tools == "native" and report.tool_mode == "text"
    assert "Mode set in the configuration: text" in _line(report, "tools").text


@pytest.mark.asyncio
async def test_the_window_says_where_it_came_from() -> None:
    with ScriptedModel([STREAMED, NATIVE_CALL]) as model:
        configured = await _check(model, context_window=4_096)
    with ScriptedModel([STREAMED, NATIVE_CALL]) as model:
        assumed = await _check(model)
    assert (configured.window_source, _line(configured, "window").verdict) == ("configuration", "ok")
    assert (assumed.window_source, _line(assumed, "window").verdict) == ("default", "warn")
    assert "context_window" in _line(assumed, "window").action


@pytest.mark.asyncio
@pytest.mark.parametrize("prompt_tokens, verdict", [(1_000, "ok"), (2_500, "warn"), (3_900, "fail")])
async def test_the_profiles_prompt_is_weighed_against_the_window(prompt_tokens: int, verdict: str) -> None:
    with ScriptedModel([STREAMED, NATIVE_CALL], max_prompt_tokens=4_096) as model:
        report = await _check(model, prompt_tokens)
    line = _line(report, "prompt")
    assert line.verdict == verdict and report.profile == "compact"
    assert f"{prompt_tokens:,}" in line.text


@pytest.mark.asyncio
async def test_an_unreachable_endpoint_fails_with_the_reason() -> None:
    settings = ModelSettings(model="m", base_url="http://127.0.0.1:9/v1", max_retries=0)
    report = await check_readiness(settings, lambda profile, mode: 100)
    assert report.verdict == "fail" and report.streaming == "failed"
    assert "Is the server running" in _line(report, "streaming").action


@pytest.mark.asyncio
async def test_a_check_never_bills_more_than_it_promises() -> None:
    with ScriptedModel([STREAMED, NATIVE_CALL]) as model:
        await _check(model)
    caps = [request["max_tokens"] for request in model.requests]
    prompts = [estimate_tokens([request["messages"], request.get("tools", [])]) for request in model.requests]
    assert len(model.requests) == 2 and sum(caps) + sum(prompts) <= MAX_CHECK_TOKENS


@pytest.mark.asyncio
async def test_the_result_is_kept_per_model(tmp_path: Path) -> None:
    store = ReadinessStore(tmp_path / "readiness.json")
    with ScriptedModel([STREAMED, text("prose")]) as model:
        report = await _check(model)
        store.save(report)
        kept = store.get(model.base_url + "/", "scripted")
    assert kept is not None and kept["tool_mode"] == "text" and kept["verdict"] == "warn"
    assert json.loads((tmp_path / "readiness.json").read_text())
    assert (tmp_path / "readiness.json").stat().st_mode & 0o077 == 0
