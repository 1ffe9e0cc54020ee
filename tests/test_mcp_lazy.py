"""MCP tools loaded on demand (issue 17): in the compact and standard profiles a turn that needs no MCP tool
starts no server, the model finds tools through the ``mcp_tools`` index and calls them by name through the
same validation, policy and approval as any call, and the first request does not carry the servers' schemas.

Real MCP servers (tests/mcp_servers: our demo server, which writes its pid to ``DEMO_PID_FILE`` when it
starts, and the reference ``server-everything`` from npm), a real session and the scripted model.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn
from o200k import prompt_tokens
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.agent.conversation import Conversation
from hdsp_agent.agent.conversations import ConversationManager
from hdsp_agent.agent.runtime import AgentRuntime
from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.mcp.manager import McpManager
from hdsp_agent.permissions.approval import ApprovalReply
from hdsp_agent.permissions.broker import ApprovalBroker
from hdsp_agent.permissions.policy import build_policy
from hdsp_agent.tools.builtin import builtin_tools

pytestmark = pytest.mark.asyncio

SERVERS = Path(__file__).parent / "mcp_servers"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
COMPACT_WINDOW, STANDARD_WINDOW, FULL_WINDOW = 8_192, 32_768, 131_072


def demo(pid_file: Path, **entry: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [str(SERVERS / "demo_server.py")],
        "env": {"DEMO_PID_FILE": str(pid_file)},
        **entry,
    }


@asynccontextmanager
async def agent(
    root: Path, model: ScriptedModel | None, servers: dict[str, Any], window: int, **options: Any
) -> AsyncIterator[tuple[AgentRuntime, McpManager, ConversationManager]]:
    """A runtime with the built-in tools and ``servers`` wired as the server wires them, and its sessions
    (stored under ``root``: a second ``agent`` over the same root is the same server after a restart)."""
    runtime = make_runtime(root, model, builtin_tools(), context_window=window, **options)
    mcp = McpManager(
        runtime.registry,
        root_dir=root,
        trait_servers={"mcpServers": servers},
        config_dir=root / ".config",
    )
    mcp.attach(runtime)
    sessions = make_manager(root, runtime)
    try:
        yield runtime, mcp, sessions
    finally:
        await sessions.shutdown()
        await mcp.close()


def offered(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools") or []]


def tool_results(request: dict[str, Any]) -> list[str]:
    return [message["content"] for message in request["messages"] if message["role"] == "tool"]


@pytest.mark.parametrize("window", [COMPACT_WINDOW, STANDARD_WINDOW], ids=["compact", "standard"])
async def test_a_turn_that_needs_no_mcp_tool_starts_no_server(tmp_path: Path, window: int) -> None:
    pid_file = tmp_path / "pids"
    (tmp_path / "a.txt").write_text("a\n")
    script = [tool_calls(("ls", "{}")), text("One file."), text("Still one.")]
    with ScriptedModel(script) as model:
        async with agent(tmp_path, model, {"demo": demo(pid_file)}, window) as (_, mcp, sessions):
            session = sessions.create()
            await run_turn(session, "what is here?")
            await run_turn(session, "and now?")
            state = mcp.status()["servers"][0]["state"]
    assert not pid_file.exists(), "no MCP server process was started"
    assert state == "idle"
    assert all("mcp_tools" in offered(r) for r in model.requests), "the index stands in for the server"
    assert not any(name.startswith("demo__") for r in model.requests for name in offered(r))


async def test_the_full_profile_connects_at_the_start_a_server_a_rule_allows(tmp_path: Path) -> None:
    """Eager in the full profile, for servers the administrator pre-allowed (or the user allowed always)."""
    pid_file = tmp_path / "pids"
    config = HdspAgentConfig(allow_rules=["mcp_start_server(demo)"])
    policy = build_policy(config, tmp_path, permissions_file=tmp_path / "permissions.json")
    with ScriptedModel([text("Hello.")]) as model:
        async with agent(tmp_path, model, {"demo": demo(pid_file)}, FULL_WINDOW, policy=policy) as (
            _,
            _mcp,
            sessions,
        ):
            await run_turn(sessions.create(), "hi")
    assert pid_file.exists(), "eager: the server started before the first request"
    names = offered(model.requests[0])
    assert {"demo__echo", "demo__picture"} <= set(names) and "mcp_tools" not in names


async def test_the_full_profile_starts_no_server_nobody_allowed(tmp_path: Path) -> None:
    """Issue 24: the full profile's eager start at a turn's start ran every configured server's program
    before any decision. Now a server nobody allowed stays down; the model is offered mcp_start_server."""
    pid_file = tmp_path / "pids"
    policy = build_policy(HdspAgentConfig(), tmp_path, permissions_file=tmp_path / "permissions.json")
    with ScriptedModel([text("Hello.")]) as model:
        async with agent(tmp_path, model, {"demo": demo(pid_file)}, FULL_WINDOW, policy=policy) as (
            _,
            mcp,
            sessions,
        ):
            await run_turn(sessions.create(), "hi")
            state = mcp.status()["servers"][0]["state"]
    assert not pid_file.exists(), "the server started without a decision"
    assert state == "idle"
    names = offered(model.requests[0])
    assert "mcp_start_server" in names and not any(name.startswith("demo__") for name in names)


async def test_the_model_lists_the_tools_then_calls_one_by_name_through_approval(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    echo = json.dumps({"text": "hi", "times": 2})
    script = [
        tool_calls(("mcp_tools", "{}")),  # a read: names the server, starts nothing
        tool_calls(("mcp_start_server", '{"server": "demo"}')),  # asks; the user approves
        tool_calls(("demo__echo", '{"times": 2}')),  # invalid: no text
        tool_calls(("demo__picture", "{}")),  # denied by a rule
        tool_calls(("demo__echo", echo)),  # the user declines
        tool_calls(("demo__echo", echo + " ")),  # the user approves
        text("It said hi hi."),
    ]
    config = HdspAgentConfig(deny_rules=["demo__picture"])
    policy = build_policy(config, tmp_path, permissions_file=tmp_path / "permissions.json")
    with ScriptedModel(script) as model:
        async with agent(tmp_path, model, {"demo": demo(pid_file)}, COMPACT_WINDOW, policy=policy) as (
            _,
            _mcp,
            sessions,
        ):
            session = sessions.create()
            session.send("say hi twice with the demo server")
            replies = [
                ApprovalReply(approved=True),
                ApprovalReply(approved=False, reason="not now"),
                ApprovalReply(approved=True),
            ]
            asked = await answer_approvals(session, replies)
            events = list(session.events)
    assert [request["tool"] for request in asked] == ["mcp_start_server", "demo__echo", "demo__echo"], (
        "the start and the valid calls ask"
    )
    assert "demo_server.py" in (asked[0]["preview"] or ""), "the card names the server's command"
    index, started, invalid, denied, declined, done = tool_results(model.requests[-1])
    assert "demo: not started" in index and "mcp_start_server" in index
    assert "demo__echo(text, times?) — Repeat the text." in started
    assert "demo__picture() — A caption and a tiny image." in started
    assert "E_TOOL_INVALID_ARGS" in invalid and "text" in invalid
    assert "E_TOOL_DENIED" in denied or "not allowed" in denied
    assert "declined" in declined and "not now" in declined
    assert "hi hi" in done
    statuses = [
        (e["name"], e["status"]) for e in of_type(events, "tool.status") if e["status"] != "generated"
    ]
    assert ("demo__echo", "awaiting_approval") in statuses and ("demo__echo", "done") in statuses
    assert of_type(events, "turn.end")[-1]["reason"] == "completed"
    assert all("demo__echo" not in offered(r) for r in model.requests), "listed, called, not offered yet"


async def test_a_tool_named_by_the_model_starts_its_server_once_the_call_is_approved(tmp_path: Path) -> None:
    """The call is decided first (its server's autoApprove does not count for a server not running: the
    card asks and names the program); approved, the server starts and the name resolves."""
    pid_file = tmp_path / "pids"
    script = [tool_calls(("demo__echo", '{"text": "direct"}')), text("Done.")]
    policy = build_policy(HdspAgentConfig(), tmp_path, permissions_file=tmp_path / "permissions.json")
    with ScriptedModel(script) as model:
        servers = {"demo": demo(pid_file, autoApprove=["echo"])}
        async with agent(tmp_path, model, servers, STANDARD_WINDOW, policy=policy) as (_, _mcp, sessions):
            session = sessions.create()
            session.send("echo direct with demo__echo")
            while not of_type(session.events, "approval.request"):
                await asyncio.sleep(0.02)
            assert not pid_file.exists(), "started before the call was decided"
            asked = await answer_approvals(session, [ApprovalReply(approved=True)])
            events = list(session.events)
    assert [request["tool"] for request in asked] == ["demo__echo"]
    assert "not started" in (asked[0]["preview"] or "") and "demo_server.py" in (asked[0]["preview"] or "")
    assert pid_file.exists()
    assert [e["status"] for e in of_type(events, "tool.status") if e["name"] == "demo__echo"][-1] == "done"
    assert "direct" in tool_results(model.requests[1])[0]


async def test_a_tool_used_before_a_restart_is_offered_again_with_its_server(tmp_path: Path) -> None:
    """After a restart the conversation's tool stays offered; its server starts again only when allowed: by
    a rule here (issue 24: before, the new process started it at the turn's start, nobody asked)."""
    pid_file = tmp_path / "pids"
    servers = {"demo": demo(pid_file, autoApprove=["echo"])}
    script = [tool_calls(("demo__echo", '{"text": "one"}')), text("Done."), text("Again."), text("Third.")]
    config = HdspAgentConfig(allow_rules=["mcp_start_server(demo)"])
    allowed = build_policy(config, tmp_path, permissions_file=tmp_path / "permissions.json")
    asking = build_policy(HdspAgentConfig(), tmp_path, permissions_file=tmp_path / "permissions.json")
    with ScriptedModel(script) as model:
        async with agent(tmp_path, model, servers, COMPACT_WINDOW, policy=allowed) as (_, _mcp, sessions):
            session_id = sessions.create().id
            await run_turn(await sessions.get(session_id), "echo one")
        # A new process: nothing connected, the conversation read back from the store.
        async with agent(tmp_path, model, servers, COMPACT_WINDOW, policy=asking) as (_, _mcp, sessions):
            await run_turn(await sessions.get(session_id), "again")
        assert len(pid_file.read_text().split()) == 1, "not allowed in this process: not started"
        async with agent(tmp_path, model, servers, COMPACT_WINDOW, policy=allowed) as (_, _mcp, sessions):
            await run_turn(await sessions.get(session_id), "third")
    assert "demo__echo" not in offered(model.requests[0])
    assert "demo__echo" in offered(model.requests[-2]), "used in the conversation: offered from then on"
    assert "demo__echo" in offered(model.requests[-1])
    assert len(pid_file.read_text().split()) == 2, "the third process connected the server a rule allows"


async def answer_approvals(session: Conversation, replies: list[ApprovalReply]) -> list[dict[str, Any]]:
    """Answer the turn's approval requests in order with ``replies``; returns the requests."""
    answered: list[dict[str, Any]] = []
    while session.running:
        requests = [event["request"] for event in of_type(session.events, "approval.request")]
        for request in requests[len(answered) :]:
            session.resolve_approval(request["call_id"], replies[len(answered)])
            answered.append(request)
        await asyncio.sleep(0.02)
    return answered


@pytest.mark.parametrize("window", [COMPACT_WINDOW, STANDARD_WINDOW], ids=["compact", "standard"])
async def test_the_first_request_does_not_grow_by_the_servers_schemas(tmp_path: Path, window: int) -> None:
    assert EVERYTHING.exists(), "installed by `npm ci --prefix tests/mcp_servers` (make test)"
    everything = {"everything": {"command": "node", "args": [str(EVERYTHING), "stdio"]}}

    async def first_request(servers: dict[str, Any], window: int) -> dict[str, Any]:
        root = tmp_path / f"root-{len(servers)}-{window}"
        root.mkdir()
        # Allowed to start (the full profile's eager listing starts only what a rule allows).
        config = HdspAgentConfig(allow_rules=["mcp_start_server"])
        policy = build_policy(config, root, permissions_file=root / "permissions.json")
        with ScriptedModel([text("Hello.")]) as model:
            async with agent(root, model, servers, window, policy=policy) as (_, _mcp, sessions):
                await run_turn(sessions.create(), "hi")
        return model.requests[0]

    without = prompt_tokens(await first_request({}, window))
    lazy = prompt_tokens(await first_request(everything, window))
    eager = prompt_tokens(await first_request(everything, FULL_WINDOW))
    eager_without = prompt_tokens(await first_request({}, FULL_WINDOW))
    schemas = eager - eager_without
    assert schemas > 1_000, f"the server's schemas are large ({schemas} tokens): the test means something"
    # The index entry (about 100 tokens: mostly JSON Schema's own syntax) and nothing else.
    assert lazy - without < min(150, schemas / 10), f"{lazy - without} tokens added, schemas {schemas}"


async def test_read_only_mode_offers_no_index_of_tools_it_would_not_run(tmp_path: Path) -> None:
    policy = build_policy(HdspAgentConfig(), tmp_path, permissions_file=tmp_path / "permissions.json")
    async with agent(tmp_path, None, {"demo": demo(tmp_path / "pids")}, COMPACT_WINDOW, policy=policy) as (
        runtime,
        _mcp,
        _sessions,
    ):
        runtime.set_mode("s1", "read-only")
        read_only = runtime.catalog(runtime.tool_context(session_id="s1"), "compact")
        default = runtime.catalog(runtime.tool_context(session_id="s2"), "compact")
    assert "mcp_tools" not in read_only and "mcp_tools" in default.names()


async def test_a_server_of_an_untrusted_project_file_is_never_started_by_name(tmp_path: Path) -> None:
    """Attacker's text in a hostile repository: its ``.hdsp/mcp.json`` names a server, and the model (prompted
    by a file it read) calls that server's tool by name. The user never trusted the file: nothing starts, and
    the call is an error for the model."""
    pid_file = tmp_path / "pids"
    (tmp_path / ".hdsp").mkdir()
    (tmp_path / ".hdsp" / "mcp.json").write_text(json.dumps({"mcpServers": {"proj": demo(pid_file)}}))
    script = [tool_calls(("proj__echo", '{"text": "x"}')), text("Done.")]
    with ScriptedModel(script) as model:
        async with agent(tmp_path, model, {}, STANDARD_WINDOW) as (_, mcp, sessions):
            assert await mcp.load(["proj__echo"]) is False
            events = await run_turn(sessions.create(), "use proj__echo")
    assert not pid_file.exists(), "the untrusted project's server was started"
    statuses = [e["status"] for e in of_type(events, "tool.status") if e["name"] == "proj__echo"]
    assert statuses and statuses[-1] != "done"


# -- issue 24: a server's program starts only after the policy decided ---------------------------------------


def trusted_project(root: Path, pid_file: Path) -> None:
    """A project ``.hdsp/mcp.json`` the user trusted: its server is configured, not yet started."""
    from hdsp_agent.mcp.config import project_trust

    (root / ".hdsp").mkdir()
    path = root / ".hdsp" / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"proj": demo(pid_file, autoApprove=["echo"])}}))
    project_trust(root / ".config").trust(path)


@pytest.mark.parametrize("how", ["index", "by-name"])
@pytest.mark.parametrize("where", ["configured", "trusted-project"])
async def test_no_server_program_runs_until_its_start_is_approved(
    tmp_path: Path, how: str, where: str
) -> None:
    """The model lists the tools (a read) or names ``server__tool``: no process until the card is answered;
    declined, it never starts. Before issue 24 both started the server at once, outside the sandbox."""
    pid_file = tmp_path / "started-marker"
    if where == "trusted-project":
        trusted_project(tmp_path, pid_file)
        servers: dict[str, Any] = {}
        name = "proj"
    else:
        servers = {"demo": demo(pid_file, autoApprove=["echo"])}
        name = "demo"
    calls = (
        [tool_calls(("mcp_tools", "{}")), tool_calls(("mcp_start_server", json.dumps({"server": name})))]
        if how == "index"
        else [tool_calls((f"{name}__echo", '{"text": "x"}'))]
    )
    policy = build_policy(HdspAgentConfig(), tmp_path, permissions_file=tmp_path / "permissions.json")
    with ScriptedModel([*calls, text("Fine.")]) as model:
        async with agent(tmp_path, model, servers, STANDARD_WINDOW, policy=policy) as (_, mcp, sessions):
            session = sessions.create()
            session.send("use the server")
            while not of_type(session.events, "approval.request"):
                assert session.running
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)  # a process started by the listing would have written its marker by now
            assert not pid_file.exists(), "the server's program ran before its start was decided"
            asked = await answer_approvals(session, [ApprovalReply(approved=False, reason="no")])
            state = {s["name"]: s for s in mcp.status()["servers"]}[name]["state"]
    assert len(asked) == 1 and name in (asked[0]["preview"] or "")
    assert not pid_file.exists(), "declined: never started"
    assert state == "idle"
    if how == "index":
        assert f"{name}: not started" in tool_results(model.requests[1])[0]


async def test_always_allowing_a_start_is_kept_for_the_next_process(tmp_path: Path) -> None:
    """ "Always" on the start card saves ``mcp_start_server(demo)`` in the user's permissions file: the next
    process starts the server when it is needed, without asking."""
    pid_file = tmp_path / "pids"
    servers = {"demo": demo(pid_file, autoApprove=["echo"])}
    permissions = tmp_path / "permissions.json"
    script = [
        tool_calls(("mcp_start_server", '{"server": "demo"}')),
        text("Started."),
        tool_calls(("demo__echo", '{"text": "again"}')),
        text("Echoed."),
    ]
    with ScriptedModel(script) as model:
        policy = build_policy(HdspAgentConfig(), tmp_path, permissions_file=permissions)
        brokers = lambda emit: ApprovalBroker(on_reply=policy.grants.record)  # noqa: E731 (as the app's)
        async with agent(
            tmp_path, model, servers, STANDARD_WINDOW, policy=policy, broker_factory=brokers
        ) as (_, _mcp, sessions):
            session = sessions.create()
            session.send("start demo")
            await answer_approvals(session, [ApprovalReply(approved=True, scope="always")])
        assert "mcp_start_server(demo)" in json.loads(permissions.read_text())["allow"]
        policy = build_policy(HdspAgentConfig(), tmp_path, permissions_file=permissions)
        async with agent(tmp_path, model, servers, STANDARD_WINDOW, policy=policy) as (_, _mcp, sessions):
            events = await run_turn(sessions.create(), "echo again")
    assert not of_type(events, "approval.request")
    assert len(pid_file.read_text().split()) == 2
    assert "again" in tool_results(model.requests[-1])[0]


async def test_a_malformed_name_of_a_configured_server_is_left_unknown(tmp_path: Path) -> None:
    """The model's typo (``demo__bad name!``) gets no stand-in (no tool could have that name) and starts
    nothing; the turn goes on."""
    pid_file = tmp_path / "pids"
    script = [tool_calls(("demo__bad name!", "{}")), text("Sorry.")]
    with ScriptedModel(script) as model:
        async with agent(tmp_path, model, {"demo": demo(pid_file)}, STANDARD_WINDOW) as (_, mcp, sessions):
            assert await mcp.load(["demo__bad name!"]) is False
            events = await run_turn(sessions.create(), "go")
    assert of_type(events, "turn.end")[-1]["reason"] == "completed"
    assert not pid_file.exists()
