"""Fitting a conversation into a small window: what shrinks first, what is never cut, where compaction
cuts."""

from __future__ import annotations

from typing import Any

from hdsp_agent.agent.compaction import tail_start
from hdsp_agent.agent.context_budget import fit_to_context, fits, messages_tokens

SYSTEM = {"role": "system", "content": "You are an agent."}


def _step(call_id: str, output: str) -> list[dict[str, Any]]:
    call = {"id": call_id, "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


def _conversation(*outputs: str) -> list[dict[str, Any]]:
    messages = [SYSTEM, {"role": "user", "content": "go"}]
    for number, output in enumerate(outputs):
        messages += _step(f"call_{number}", output)
    return messages


def test_a_conversation_that_fits_is_sent_as_it_is() -> None:
    messages = _conversation("a" * 100, "b" * 100)
    assert fit_to_context(messages, [], 8_000) is messages


def test_old_outputs_shrink_to_head_and_tail_before_anything_is_elided() -> None:
    old = "first line\n" + "x" * 9_000 + "\nlast line"
    messages = _conversation(old, "latest " * 300)
    fitted = fit_to_context(messages, [], 3_000)
    shrunk = fitted[3]["content"]
    assert shrunk.startswith("first line") and shrunk.endswith("last line")
    assert "shortened to fit the context window" in shrunk and len(shrunk) <= 1_200
    assert fitted[5]["content"] == "latest " * 300, "the latest step's output is kept whole"
    assert messages[3]["content"] == old, "the conversation itself is not changed"
    assert fits(fitted, [], 3_000)


def test_old_outputs_are_elided_when_shrinking_is_not_enough() -> None:
    messages = _conversation(*["y" * 5_000 for _ in range(6)], "latest")
    fitted = fit_to_context(messages, [], 2_000)
    old = [m["content"] for m in fitted if m["role"] == "tool"][:-1]
    assert any(content.startswith("[earlier tool output elided") for content in old)
    assert fitted[-1]["content"] == "latest"


def test_the_latest_output_is_cut_only_when_nothing_else_is_left() -> None:
    latest = "head\n" + "z" * 20_000 + "\ntail"
    fitted = fit_to_context(_conversation(latest), [], 4_000)
    content = fitted[-1]["content"]
    assert content.startswith("head") and content.endswith("tail") and "cut from the middle" in content
    assert fits(fitted, [], 4_000)


def test_the_compaction_tail_starts_at_a_call_never_at_its_result() -> None:
    messages = _conversation(*["w" * 900 for _ in range(8)])[1:]  # without the system prompt
    start = tail_start(messages, budget=400)
    assert messages[start]["role"] in ("user", "assistant")
    assert start == len(messages) - 2, "at least the latest step, and here only it"
    wide = tail_start(messages, budget=messages_tokens(messages))
    assert wide == 0, "everything fits: nothing to compact"
