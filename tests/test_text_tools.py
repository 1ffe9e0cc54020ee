"""Models without native tool calls: tools described in the prompt, calls read from the streamed text, run
through the same executor, policy and approvals, in the same tool cards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn
from scripted_model import ScriptedModel, error, text, tool_calls

from hdsp_agent.agent.llm import ModelSettings
from hdsp_agent.agent.models import catalog_from_config
from hdsp_agent.agent.text_tools import TextToolCallParser, as_text_history, describe_tools, parse_call
from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.tools.builtin import builtin_tools
from hdsp_agent.tools.builtin.ls import ListDirectoryTool

BLOCK = '<tool_call>\n{"name": "ls", "arguments": {"dirPath": "."}}\n</tool_call>'


def _parse(pieces: list[str], known: set[str] | None = None) -> TextToolCallParser:
    parser = TextToolCallParser(known or {"ls", "read_file"})
    for piece in pieces:
        parser.feed(piece)
    parser.finish()
    return parser


def _split(text_: str, size: int) -> list[str]:
    return [text_[i : i + size] for i in range(0, len(text_), size)]


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_a_tagged_block_is_a_call_and_not_prose_however_the_stream_splits_it(size: int) -> None:
    parser = _parse(_split(f"Let me look.\n{BLOCK}\n", size))
    assert [(c.name, json.loads(c.arguments)) for c in parser.calls] == [("ls", {"dirPath": "."})]
    assert parser.content.strip() == "Let me look."


@pytest.mark.parametrize(
    "written, name, arguments",
    [
        # a fence instead of the tag
        ('```json\n{"name": "ls", "arguments": {"dirPath": "src"}}\n```', "ls", {"dirPath": "src"}),
        ('```tool_call\n{"name": "ls", "arguments": {}}\n```', "ls", {}),
        # no closing tag at the end of the answer
        ('<tool_call>\n{"name": "ls", "arguments": {"dirPath": "."}}', "ls", {"dirPath": "."}),
        # parameters for arguments, single quotes, trailing comma
        ("<tool_call>{'name': 'ls', 'parameters': {'dirPath': '.',},}</tool_call>", "ls", {"dirPath": "."}),
        # arguments as a JSON string
        (
            '<tool_call>{"name": "ls", "arguments": "{\\"dirPath\\": \\"a\\"}"}</tool_call>',
            "ls",
            {"dirPath": "a"},
        ),
        # the name before the arguments
        ('<tool_call>ls {"dirPath": "b"}</tool_call>', "ls", {"dirPath": "b"}),
        # OpenAI's own shape
        (
            '<tool_call>{"function": {"name": "ls", "arguments": {"dirPath": "c"}}}</tool_call>',
            "ls",
            {"dirPath": "c"},
        ),
    ],
)
def test_the_usual_small_model_slips_still_make_a_call(written: str, name: str, arguments: Any) -> None:
    parser = _parse(_split(written, 5))
    assert [(c.name, json.loads(c.arguments)) for c in parser.calls] == [(name, arguments)]


def test_an_ordinary_code_block_stays_prose() -> None:
    answer = "Use this:\n```python\nprint({'name': 'x'})\n```\nDone."
    parser = _parse(_split(answer, 4))
    assert parser.calls == []
    assert parser.content == answer


def test_ordinary_code_streams_at_once_even_if_its_fence_never_closes() -> None:
    parser = TextToolCallParser({"ls"})
    shown = "".join(parser.feed(piece).text for piece in ["Files:\n```", "\n# 1.\n", "# 2.\n", "# 3.\n"])
    assert shown == "Files:\n```\n# 1.\n# 2.\n# 3.\n"
    shown = "".join(parser.feed(piece).text for piece in ["```python\n", "x = 1\n```\nDone"])
    parser.finish()
    assert parser.calls == [] and parser.content.endswith("x = 1\n```\nDone")


def test_the_tool_card_can_appear_while_the_block_still_streams() -> None:
    parser = TextToolCallParser({"ls"})
    touched = [
        parser.feed(piece).calls_touched for piece in ["<tool_call>\n", '{"name": "ls", ', '"arguments": {']
    ]
    assert touched[0] == [] and touched[1] and touched[1][0].name == "ls"


def test_parse_call_refuses_what_names_no_tool() -> None:
    assert parse_call('{"arguments": {}}') is None
    assert parse_call("just words") is None


def test_the_history_is_written_as_text_for_templates_without_tools() -> None:
    history = [
        {"role": "user", "content": "list"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    ]
    converted = as_text_history(history)
    assert [m["role"] for m in converted] == ["user", "assistant", "user"]
    assert "<tool_call>" in converted[1]["content"] and '"name": "ls"' in converted[1]["content"]
    assert "a.txt" in converted[2]["content"] and "tool_calls" not in converted[1]


@pytest.mark.asyncio
async def test_text_mode_sends_no_tools_describes_them_and_runs_the_call(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    script = [text(f"I will list the files.\n{BLOCK}", pieces=9), text("There is notes.txt.")]
    with ScriptedModel(script) as model:
        runtime = make_runtime(tmp_path, model, [ListDirectoryTool()])
        runtime.models.models[0].tool_calls = "text"
        session = make_manager(tmp_path, runtime).create()
        events = await run_turn(session, "what files are here?")
    first, second = model.requests
    assert "tools" not in first and "tool_choice" not in first
    assert "<tool_call>" in first["messages"][0]["content"] and "## ls" in first["messages"][0]["content"]
    statuses = [e["status"] for e in of_type(events, "tool.status")]
    assert statuses[0] == "generating" and statuses[-1] == "done"
    assert "notes.txt" in second["messages"][-1]["content"]  # the result, as a user message
    shown = "".join(e["text"] for e in of_type(events, "assistant.delta"))
    assert "<tool_call>" not in shown and "I will list the files." in shown
    assert of_type(events, "turn.end")[0]["reason"] == "completed"


@pytest.mark.asyncio
async def test_a_refusal_of_tools_switches_to_text_mode_and_the_turn_goes_on(tmp_path: Path) -> None:
    refusal = error(400, "registry.ollama.ai/library/gemma3:1b does not support tools")
    script = [refusal, text(BLOCK), text("Done.")]
    with ScriptedModel(script) as model:
        runtime = make_runtime(tmp_path, model, [ListDirectoryTool()])
        session = make_manager(tmp_path, runtime).create()
        events = await run_turn(session, "list")
    assert "tools" in model.requests[0] and "tools" not in model.requests[1]
    assert [e["status"] for e in of_type(events, "tool.status")][-1] == "done"
    assert not of_type(events, "error")


@pytest.mark.asyncio
async def test_the_servers_word_that_the_model_has_no_tool_calls_chooses_text_mode(tmp_path: Path) -> None:
    with ScriptedModel([text("Hi.")], tool_calls_supported=False) as model:
        runtime = make_runtime(tmp_path, model, [ListDirectoryTool()])
        await run_turn(make_manager(tmp_path, runtime).create(), "hi")
    assert "tools" not in model.requests[0]


@pytest.mark.asyncio
async def test_native_stays_native_when_the_server_says_the_model_calls_tools(tmp_path: Path) -> None:
    with ScriptedModel([tool_calls(("ls", "{}")), text("ok")], tool_calls_supported=True) as model:
        runtime = make_runtime(tmp_path, model, [ListDirectoryTool()])
        await run_turn(make_manager(tmp_path, runtime).create(), "hi")
    assert "tools" in model.requests[0]


@pytest.mark.asyncio
async def test_the_stable_prefix_holds_in_text_mode(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    block = '<tool_call>{"name": "read_file", "arguments": {"filepath": "data.csv"}}</tool_call>'
    script = [text('<tool_call>{"name": "ls", "arguments": {}}</tool_call>'), text(block), text("Two."),
              text(block), text("Still two.")]  # fmt: skip
    with ScriptedModel(script) as model:
        runtime = make_runtime(tmp_path, model, builtin_tools(), context_window=8_192)
        runtime.models.models[0].tool_calls = "text"
        session = make_manager(tmp_path, runtime).create()
        await run_turn(session, "what is in data.csv?")
        await run_turn(session, "and now?")
    assert len(model.requests) == 5
    systems = {json.dumps(request["messages"][0]) for request in model.requests}
    assert len(systems) == 1, "the system prompt with the tool descriptions changed between steps or turns"
    # Lean context: described in the prompt, the tools cost no more than their schemas would.
    ctx = runtime.tool_context()
    for profile in ("compact", "standard", "full"):
        native = runtime.prompt_tokens(ctx, profile, "native")
        assert runtime.prompt_tokens(ctx, profile, "text") <= native * 1.1, profile
    # Each request begins with the previous one's messages (a server's cache can reuse them).
    for before, after in zip(model.requests, model.requests[1:], strict=False):
        assert after["messages"][: len(before["messages"])] == before["messages"]


def test_descriptions_are_deterministic_and_grow_only_at_the_end() -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "a", "description": "A.", "parameters": {"type": "object"}},
        },
        {
            "type": "function",
            "function": {"name": "b", "description": "B.", "parameters": {"type": "object"}},
        },
    ]
    assert describe_tools(tools) == describe_tools([dict(t) for t in tools])
    assert describe_tools(tools).startswith(describe_tools(tools[:1]))


def test_tool_calls_is_set_per_model_and_globally() -> None:
    config = HdspAgentConfig(
        model="m",
        base_url="http://127.0.0.1:1/v1",
        tool_calls="text",
        models=[{"name": "n", "model": "native-one", "tool_calls": "native", "price_per_mtok_in": 0.5}],
    )
    catalog = catalog_from_config(config)
    modes = {settings.model: settings.tool_calls for settings in catalog.models}
    assert modes == {"m": "text", "native-one": "native"}
    assert catalog.find("n") is not None and catalog.find("n").price_per_mtok_in == 0.5  # type: ignore[union-attr]
    assert ModelSettings(model="x").tool_calls == "auto"
