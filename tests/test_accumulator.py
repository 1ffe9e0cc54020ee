"""Chunk assembly against the quirks of real OpenAI-compatible servers, plus random re-chunkings."""

from __future__ import annotations

import json
import random

from hdsp_agent.agent.accumulator import StreamAccumulator


def chunk(delta: dict, finish_reason: str | None = None, index: int = 0) -> dict:
    return {"choices": [{"index": index, "delta": delta, "finish_reason": finish_reason}]}


def call(index: int | None, *, id: str | None = None, name: str | None = None, arguments: str = "") -> dict:
    fragment: dict = {"function": {"arguments": arguments}}
    if index is not None:
        fragment["index"] = index
    if id:
        fragment["id"] = id
    if name:
        fragment["function"]["name"] = name
    return fragment


def assemble(chunks: list[dict]):
    accumulator = StreamAccumulator()
    for item in chunks:
        accumulator.add(item)
    return accumulator.result()


def test_text_and_reasoning_are_kept_apart() -> None:
    message = assemble(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"reasoning_content": "think "}),
            chunk({"reasoning": "more"}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk({}, "stop"),
        ]
    )
    assert (message.content, message.reasoning, message.finish_reason) == ("Hello", "think more", "stop")
    assert message.to_openai() == {"role": "assistant", "content": "Hello"}


def test_split_arguments_and_parallel_calls() -> None:
    message = assemble(
        [
            chunk({"tool_calls": [call(0, id="a", name="ls", arguments='{"dir')]}),
            chunk({"tool_calls": [call(0, arguments='Path": "."}')]}),
            chunk({"tool_calls": [call(1, id="b", name="read_file", arguments='{"filepath": "x"}')]}),
            chunk({}, "tool_calls"),
        ]
    )
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("a", "ls", '{"dirPath": "."}'),
        ("b", "read_file", '{"filepath": "x"}'),
    ]
    sent = message.to_openai()
    assert sent["content"] == "" and sent["tool_calls"][1]["function"]["name"] == "read_file"


def test_name_and_id_repeated_in_every_chunk_like_llama_cpp() -> None:
    message = assemble(
        [
            chunk({"tool_calls": [call(0, id="c1", name="get_weather", arguments='{"city":')]}),
            chunk({"tool_calls": [call(0, id="c1", name="get_weather", arguments=' "Seoul"}')]}),
            chunk({}, "tool_calls"),
        ]
    )
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("c1", "get_weather", '{"city": "Seoul"}')
    ]


def test_name_split_across_chunks() -> None:
    message = assemble(
        [
            chunk({"tool_calls": [call(0, id="c1", name="read_")]}),
            chunk({"tool_calls": [call(0, name="file", arguments="{}")]}),
        ]
    )
    assert message.tool_calls[0].name == "read_file"


def test_whole_arguments_repeated_are_not_doubled() -> None:
    message = assemble(
        [
            chunk({"tool_calls": [call(0, id="c1", name="ls", arguments='{"dirPath": "."}')]}),
            chunk({"tool_calls": [call(0, arguments='{"dirPath": "."}')]}),
        ]
    )
    assert message.tool_calls[0].arguments == '{"dirPath": "."}'


def test_missing_index_uses_ids_to_tell_calls_apart() -> None:
    message = assemble(
        [
            chunk({"tool_calls": [call(None, id="a", name="ls", arguments='{"dirPath"')]}),
            chunk({"tool_calls": [call(None, arguments=': "src"}')]}),
            chunk({"tool_calls": [call(None, id="b", name="ls", arguments='{"dirPath": "docs"}')]}),
        ]
    )
    assert [(c.id, c.arguments) for c in message.tool_calls] == [
        ("a", '{"dirPath": "src"}'),
        ("b", '{"dirPath": "docs"}'),
    ]


def test_finish_reason_missing_or_stop_with_calls_means_tool_calls() -> None:
    missing = assemble([chunk({"tool_calls": [call(0, id="a", name="ls", arguments="{}")]})])
    assert missing.finish_reason == "tool_calls"
    stop = assemble([chunk({"tool_calls": [call(0, id="a", name="ls", arguments="{}")]}), chunk({}, "stop")])
    assert stop.finish_reason == "tool_calls"


def test_calls_without_ids_get_unique_ids() -> None:
    message = assemble(
        [
            chunk(
                {"tool_calls": [call(0, name="ls", arguments="{}"), call(1, name="ls", arguments='{"a": 1}')]}
            )
        ]
    )
    ids = [c.id for c in message.tool_calls]
    assert all(ids) and len(set(ids)) == 2


def test_other_choices_are_ignored() -> None:
    message = assemble([chunk({"content": "mine"}), chunk({"content": "theirs"}, index=1)])
    assert message.content == "mine"


def test_random_rechunking_gives_the_same_message() -> None:
    """Fuzz: any split of the same stream into fragments assembles to the same message."""
    arguments = [json.dumps({"code": "for i in range(3):\n    print(i)", "n": k}) for k in range(3)]
    text = "Let me run that for you — 한국어 too."
    rng = random.Random(1234)
    for _ in range(200):
        chunks = [chunk({"content": part}) for part in _random_split(text, rng)]
        for index, args in enumerate(arguments):
            pieces = _random_split(args, rng)
            chunks.append(
                chunk({"tool_calls": [call(index, id=f"id{index}", name="run_cell", arguments=pieces[0])]})
            )
            chunks += [chunk({"tool_calls": [call(index, arguments=piece)]}) for piece in pieces[1:]]
        chunks.append(chunk({}, "tool_calls"))
        message = assemble(chunks)
        assert message.content == text
        assert [c.arguments for c in message.tool_calls] == arguments
        assert [c.name for c in message.tool_calls] == ["run_cell"] * 3


def _random_split(value: str, rng: random.Random) -> list[str]:
    cuts = sorted(rng.sample(range(1, len(value)), k=min(len(value) - 1, rng.randint(0, 8))))
    bounds = [0, *cuts, len(value)]
    return [value[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
