"""hdsp-agent against a real model server: llama.cpp's llama-server serving SmolLM2-135M-Instruct
(tests/llama_server.py).

Everything else in the suite talks to scripted models; these tests prove the same code copes with what a real
local server does: how it names its model, where it says its window, how it streams, what it answers to a
prompt that does not fit, and what happens when it dies mid-answer. ``make llama-server`` builds it (once per
machine); without it these tests skip, except under CI, where they fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agent_harness import make_manager, of_type, run_turn
from llama_server import LlamaServer

from hdsp_agent.agent.context_window import detect_context_window
from hdsp_agent.agent.inline_completion import CompletionContext, InlineCompleter
from hdsp_agent.agent.llm import E_MODEL_CONTEXT, ModelClient, ModelError, ModelSettings
from hdsp_agent.agent.model_setup import endpoint_models
from hdsp_agent.agent.models import ModelCatalog
from hdsp_agent.agent.readiness import check_readiness
from hdsp_agent.agent.runtime import AgentRuntime
from hdsp_agent.assembly import assemble
from hdsp_agent.permissions.decision import ReadOnlyPolicy
from hdsp_agent.tools.base import ToolContext
from hdsp_agent.tools.builtin.ls import ListDirectoryTool

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    """One server (8,192-token window) for the module: starting one takes about a second."""
    with LlamaServer(context=8192) as server:
        yield server


@pytest.fixture(scope="module")
def small_llama() -> Iterator[LlamaServer]:
    """A 2,048-token window, and a server the last test may kill."""
    with LlamaServer(context=2048) as server:
        yield server


def _settings(server: LlamaServer, **options: Any) -> ModelSettings:
    return ModelSettings(model=server.model, base_url=server.base_url, max_retries=0, **options)


def _runtime(root: Path, settings: ModelSettings) -> AgentRuntime:
    return assemble(
        None,
        root,
        lambda **overrides: ToolContext(root_dir=root, **overrides),
        tools=[ListDirectoryTool()],
        policy=ReadOnlyPolicy(),
        models=ModelCatalog([settings]),
    ).runtime


async def _slow_turn(session: Any, content: str) -> list[dict[str, Any]]:
    """A turn with room for a few steps of a CPU-bound model on a busy machine (run_turn allows 30 s)."""
    start = session.last_seq
    session.send(content)
    await asyncio.wait_for(session.wait(), 180)
    return list(session.events_since(start))


@pytest.mark.asyncio
async def test_the_model_list_names_the_gguf(llama: LlamaServer) -> None:
    listed = await endpoint_models(llama.base_url)
    assert len(listed) == 1 and listed[0].endswith(MODEL_FILE)


@pytest.mark.asyncio
async def test_the_window_comes_from_props(llama: LlamaServer) -> None:
    assert await detect_context_window(_settings(llama)) == 8192


@pytest.mark.asyncio
async def test_a_turn_streams_an_answer_with_the_servers_window(llama: LlamaServer, tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, _settings(llama))
    events = await run_turn(make_manager(tmp_path, runtime).create(), "Say hello in one short sentence.")
    start = of_type(events, "turn.start")[0]
    assert (start["context_window"], start["profile"]) == (8192, "compact")
    deltas = [e["text"] for e in of_type(events, "assistant.delta")]
    assert deltas and "".join(deltas).strip(), "the answer streamed in"
    assert of_type(events, "turn.end")[0]["reason"] == "completed" and not of_type(events, "error")
    usage = of_type(events, "assistant.message")[0]["usage"]
    assert usage["estimated"] is False and usage["prompt_tokens"] > 0, "the server's own counts"


@pytest.mark.asyncio
async def test_the_readiness_check_finds_no_native_tool_calls_and_chooses_text_mode(
    llama: LlamaServer,
) -> None:
    report = await check_readiness(_settings(llama), lambda profile, mode: 1_500)
    assert report.streaming == "streamed"
    assert (report.context_window, report.window_source, report.profile) == (8192, "server", "compact")
    assert report.tools in ("none", "text") and report.tool_mode == "text"
    assert [line.verdict for line in report.lines] == ["ok", "warn", "ok", "ok"]


@pytest.mark.asyncio
async def test_text_mode_is_chosen_from_the_servers_metadata_and_its_requests_are_accepted(
    llama: LlamaServer, tmp_path: Path
) -> None:
    settings = _settings(llama)
    runtime = _runtime(tmp_path, settings)
    # llama-server's /props: the chat template cannot make tool calls.
    assert await runtime.resolve_tool_mode(settings) == "text"
    session = make_manager(tmp_path, runtime).create()
    first = await _slow_turn(session, "List the files here.")
    second = await _slow_turn(session, "Thanks. Answer in one word.")
    for events in (first, second):
        assert of_type(events, "turn.end")[0]["reason"] == "completed", of_type(events, "error")


@pytest.mark.asyncio
async def test_a_prompt_longer_than_the_window_is_refused_cleanly(
    small_llama: LlamaServer, tmp_path: Path
) -> None:
    long_prompt = "Summarize these words. " + " ".join(f"word{i}" for i in range(4000))
    client = ModelClient(_settings(small_llama))
    try:
        with pytest.raises(ModelError) as refused:
            await client.stream([{"role": "user", "content": long_prompt}], [], lambda step: None)
    finally:
        await client.close()
    assert refused.value.code == E_MODEL_CONTEXT
    runtime = _runtime(tmp_path, _settings(small_llama))
    events = await run_turn(make_manager(tmp_path, runtime).create(), long_prompt)
    assert [e["code"] for e in of_type(events, "error")] == ["E_CONTEXT_FULL"]
    assert of_type(events, "turn.end")[0]["reason"] == "error"


@pytest.mark.asyncio
async def test_the_server_stopped_mid_stream_is_a_clear_error_and_nothing_is_lost(
    small_llama: LlamaServer, tmp_path: Path
) -> None:
    runtime = _runtime(tmp_path, _settings(small_llama))
    session = make_manager(tmp_path, runtime).create()
    killed = asyncio.Event()

    async def kill_on_first_words() -> None:
        for _ in range(600):
            if any(e.get("type") == "assistant.delta" for e in session.events_since(0)):
                small_llama.stop()
                killed.set()
                return
            await asyncio.sleep(0.05)

    killer = asyncio.create_task(kill_on_first_words())
    events = await run_turn(session, "Write a long story about a lighthouse keeper, at least 500 words.")
    await killer
    assert killed.is_set()
    errors = of_type(events, "error")
    assert [e["code"] for e in errors] == ["E_MODEL_STREAM"] and "broke off" in errors[0]["message"]
    assert "".join(e["text"] for e in of_type(events, "assistant.delta")), "what arrived is still shown"
    assert session.messages[0]["content"].startswith("Write a long story"), "the user's message is kept"
    # The server comes back: the same conversation goes on.
    small_llama.start()
    with httpx.Client() as probe:
        assert probe.get(f"{small_llama.root}/health").status_code == 200
    again = await run_turn(session, "Say OK.")
    assert of_type(again, "turn.end")[0]["reason"] == "completed"


@pytest.mark.asyncio
async def test_inline_completion_asks_infill_then_falls_back_when_the_model_has_no_fill_in_tokens(
    small_llama: LlamaServer,
) -> None:
    # llama-server answers /props, so /infill is tried first; SmolLM2 has no prefix/suffix/middle tokens and
    # the server says so with 501: the completion comes from /v1/completions instead, and that way is kept
    # for the endpoint (the next keystroke pause does not pay for the refused /infill again).
    completer = InlineCompleter(ModelCatalog([_settings(small_llama)]))
    context = CompletionContext(
        prefix="def add(a, b):\n    return ", suffix="\n", language="python", path="calc.py"
    )
    try:
        assert await completer._candidates(completer.settings()) == ("infill", "fim", "chat")
        refused = httpx.post(
            small_llama.base_url.rsplit("/v1", 1)[0] + "/infill",
            json={"input_prefix": context.prefix, "input_suffix": context.suffix, "n_predict": 4},
            timeout=60,
        )
        assert refused.status_code == 501 and "not supported" in refused.text
        first = await completer.complete(context)
        assert first.mode == "fim" and first.text.strip()
        assert list(completer.modes.values()) == ["fim"]
        again = await completer.complete(context)
        assert again.mode == "fim"
    finally:
        await completer.aclose()
