"""The system prompt and the tool list are byte-identical from step to step and turn to turn while nothing in
the context changes, so servers with prefix caching (vLLM, llama.cpp, OpenAI) reuse them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agent_harness import make_manager, make_runtime, run_turn
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.mcp.manager import McpManager
from hdsp_agent.permissions.policy import build_policy
from hdsp_agent.tools.builtin import builtin_tools
from hdsp_agent.tools.jupyter import notebook_tools

DEMO_SERVER = Path(__file__).parent / "mcp_servers" / "demo_server.py"


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


async def test_an_mcp_tool_used_in_a_turn_is_appended_at_the_next_turn(tmp_path: Path) -> None:
    """Tools loaded on demand join the list at a turn boundary, appended: within a turn the prefix is
    byte-identical, and the next turn's list begins with the same bytes as the previous one."""
    server = {"command": sys.executable, "args": [str(DEMO_SERVER)], "autoApprove": ["echo"]}
    script = [
        tool_calls(("mcp_tools", "{}")),
        tool_calls(("demo__echo", '{"text": "hi"}')),
        text("It said hi."),
        tool_calls(("ls", "{}")),
        text("Listed."),
    ]
    # Starting the server is pre-allowed by a rule (issue 24: a start is decided like a call).
    config = HdspAgentConfig(allow_rules=["mcp_start_server(demo)"])
    policy = build_policy(config, tmp_path, permissions_file=tmp_path / "permissions.json")
    with ScriptedModel(script) as model:
        runtime = make_runtime(tmp_path, model, builtin_tools(), context_window=8_192, policy=policy)
        mcp = McpManager(
            runtime.registry,
            root_dir=tmp_path,
            trait_servers={"mcpServers": {"demo": server}},
            config_dir=tmp_path / "config",
        )
        mcp.attach(runtime)
        sessions = make_manager(tmp_path, runtime)
        try:
            session = sessions.create()
            await run_turn(session, "say hi with the demo server")
            await run_turn(session, "what is here?")
        finally:
            await sessions.shutdown()
            await mcp.close()
    first_turn, second_turn = model.requests[:3], model.requests[3:]
    assert len({_prefix(request) for request in first_turn}) == 1, "no change within the turn"
    assert len({_prefix(request) for request in second_turn}) == 1
    before, after = first_turn[0]["tools"], second_turn[0]["tools"]
    assert [tool["function"]["name"] for tool in after] == [
        *(tool["function"]["name"] for tool in before),
        "demo__echo",
    ]
    assert json.dumps(after).startswith(json.dumps(before)[:-1]), "appended: earlier bytes unchanged"
    assert _prefix(first_turn[0])[0] == _prefix(second_turn[0])[0], "the system prompt is the same"
