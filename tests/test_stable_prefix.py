"""The system prompt and the tool list are byte-identical from step to step and turn to turn while nothing in
the context changes, so servers with prefix caching (vLLM, llama.cpp, OpenAI) reuse them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_harness import make_manager, make_runtime, run_turn
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.tools.builtin import builtin_tools
from hdsp_agent.tools.jupyter import notebook_tools


def _prefix(request: dict[str, Any]) -> tuple[str, str]:
    return json.dumps(request["messages"][0], ensure_ascii=False), json.dumps(
        request["tools"], ensure_ascii=False
    )


async def test_the_prefix_is_byte_identical_across_steps_and_turns(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    script = [
        tool_calls(("ls", "{}")),
        tool_calls(("read_file", '{"filepath": "data.csv"}')),
        tool_calls(("grep_search", '{"query": "a"}')),
        text("Two columns."),
        tool_calls(("read_file", '{"filepath": "data.csv"}')),
        text("Still two."),
    ]
    with ScriptedModel(script) as model:
        runtime = make_runtime(tmp_path, model, builtin_tools(), context_window=8_192)
        session = make_manager(tmp_path, runtime).create()
        await run_turn(session, "what is in data.csv?")
        await run_turn(session, "and now?")
    assert len(model.requests) == 6
    prefixes = {_prefix(request) for request in model.requests}
    assert len(prefixes) == 1, "system prompt and tools changed between steps or turns"
    assert [m["role"] for m in model.requests[-1]["messages"][:2]] == ["system", "user"]


async def test_the_tool_list_changes_once_when_a_notebook_is_named_then_stays(tmp_path: Path) -> None:
    script = [text("Hello."), tool_calls(("ls", "{}")), text("Found it."), text("Sure.")]
    with ScriptedModel(script) as model:
        runtime = make_runtime(tmp_path, model, [*builtin_tools(), *notebook_tools()], context_window=8_192)
        session = make_manager(tmp_path, runtime).create()
        await run_turn(session, "hi")
        await run_turn(session, "look at report.ipynb")
        await run_turn(session, "thanks")
    tools = [json.dumps(request["tools"]) for request in model.requests]
    assert tools[0] != tools[1] and tools[1] == tools[2] == tools[3]
    names = [tool["function"]["name"] for tool in model.requests[1]["tools"]]
    assert "run_cell" in names and "run_cell" not in tools[0]
