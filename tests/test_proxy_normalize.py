"""Normalizing model output into well-formed tool calls for clients that run them (Continue)."""

from __future__ import annotations

import json

from scripted_model import text, tool_calls

from hdsp_agent.agent.llm import ModelSettings
from hdsp_agent.agent.models import ModelCatalog
from hdsp_agent.proxy.normalize import StreamNormalizer, normalize_completion, resolve_name
from hdsp_agent.proxy.upstream import Upstream

OFFERED = ["Read", "List", "read_file", "run_terminal_command"]


def run_stream(chunks: list[dict], offered: list[str] = OFFERED) -> list[dict]:
    normalizer = StreamNormalizer(offered)
    out: list[dict] = []
    for chunk in chunks:
        out.extend(normalizer.feed(chunk))
    out.extend(normalizer.finish())
    return out


def calls_in(chunks: list[dict]) -> list[dict]:
    return [call for chunk in chunks for call in chunk["choices"][0]["delta"].get("tool_calls") or []]


def content_of(chunks: list[dict]) -> str:
    return "".join(chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks)


def test_resolve_name() -> None:
    assert resolve_name("Read", OFFERED) == "Read"
    assert resolve_name("read-file", OFFERED) == "read_file"
    assert resolve_name("READ_FILE", OFFERED) == "read_file"
    assert resolve_name("Write", OFFERED) is None
    assert resolve_name("anything", []) == "anything"  # no tools offered: nothing to check against


def test_stream_with_repeated_names_and_broken_json_becomes_well_formed_calls() -> None:
    reply = tool_calls(("Read", "{'filepath': 'notes.txt',}"), ("list", '{"dirpath": "."}'), repeat_name=True)
    out = run_stream(reply.chunks)
    calls = calls_in(out)
    assert [(c["index"], c["function"]["name"]) for c in calls] == [(0, "Read"), (1, "List")]
    assert all(c["id"] and c["type"] == "function" for c in calls)
    assert json.loads(calls[0]["function"]["arguments"]) == {"filepath": "notes.txt"}
    assert out[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert sum(1 for chunk in out if chunk["choices"][0]["finish_reason"]) == 1


def test_stop_with_calls_and_missing_index_are_fixed() -> None:
    reply = tool_calls(("Read", '{"filepath": "a"}'), finish_reason="stop", omit_index=True)
    out = run_stream(reply.chunks)
    assert calls_in(out)[0]["index"] == 0
    assert out[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_unknown_tool_and_unrepairable_arguments_become_text() -> None:
    reply = tool_calls(("Explode", "{}"), ("Read", '{"filepath": '), content="Let me look.")
    out = run_stream(reply.chunks)
    assert calls_in(out) == []
    content = content_of(out)
    assert content.startswith("Let me look.")
    assert "unknown tool 'Explode'" in content and "could not be repaired" in content
    assert out[-1]["choices"][0]["finish_reason"] == "stop"


def test_text_passes_through_as_it_streams() -> None:
    out = run_stream(text("Hello there", pieces=3).chunks)
    assert content_of(out) == "Hello there"
    assert out[-1]["choices"][0]["finish_reason"] == "stop"


def test_usage_chunks_pass_through() -> None:
    usage = {"id": "x", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 3}}
    assert StreamNormalizer(OFFERED).feed(usage) == [usage]


def test_non_streaming_completion_is_normalized() -> None:
    completion = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "read-file", "arguments": "{filepath: 'x'}"},
                        },
                        {"type": "function", "function": {"name": "Nope", "arguments": "{}"}},
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "List", "arguments": {"dirpath": "."}},
                        },
                    ],
                },
            }
        ]
    }
    choice = normalize_completion(completion, OFFERED)["choices"][0]
    calls = choice["message"]["tool_calls"]
    assert [(c["id"], c["function"]["name"]) for c in calls] == [("a", "read_file"), ("c", "List")]
    assert all(isinstance(c["function"]["arguments"], str) for c in calls)
    assert json.loads(calls[0]["function"]["arguments"]) == {"filepath": "x"}
    assert choice["finish_reason"] == "tool_calls"
    assert "unknown tool 'Nope'" in choice["message"]["content"]


def test_prepare_strips_disabled_and_empty_tools_and_null_content() -> None:
    upstream = Upstream(
        ModelCatalog([ModelSettings(model="real-model")]), frozenset({"run_terminal_command"})
    )
    request = {
        "model": "whatever-the-client-says",
        "messages": [{"role": "assistant", "content": None, "tool_calls": []}],
        "tools": [{"type": "function", "function": {"name": "run_terminal_command", "parameters": {}}}],
        "tool_choice": "auto",
    }
    _, body = upstream.prepare(request)
    assert body["model"] == "real-model"
    assert "tools" not in body and "tool_choice" not in body
    assert body["messages"][0]["content"] == ""
