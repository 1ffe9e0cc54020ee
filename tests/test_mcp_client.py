"""MCP servers as tools: real servers (our MCPServer demo over stdio and Streamable HTTP, and the reference
``server-everything`` from npm), through the real executor and policy, plus the configuration they come from.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from agent_harness import make_manager, make_runtime, run_turn
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.mcp.config import load_mcp_config, parse_servers, project_trust
from hdsp_agent.mcp.manager import McpManager
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest, FixedApprover
from hdsp_agent.permissions.decision import ReadOnlyPolicy
from hdsp_agent.permissions.policy import build_policy
from hdsp_agent.tools.base import NoArgs, Tool, ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.definitions import parameters_schema, to_openai
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio

SERVERS = Path(__file__).parent / "mcp_servers"
DEMO = [sys.executable, str(SERVERS / "demo_server.py")]
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
Managers = Callable[..., McpManager]


def demo(**entry: Any) -> dict[str, Any]:
    return {"command": DEMO[0], "args": DEMO[1:], **entry}


@pytest_asyncio.fixture
async def managers(tmp_path: Path) -> AsyncIterator[Managers]:
    """Builds managers over fresh registries (user config in tmp_path/config), closed after the test."""
    built: list[McpManager] = []

    def build(servers: dict[str, Any], **options: Any) -> McpManager:
        manager = McpManager(
            ToolRegistry(),
            root_dir=tmp_path,
            trait_servers={"mcpServers": servers},
            config_dir=tmp_path / "config",
            **options,
        )
        built.append(manager)
        return manager

    yield build
    for manager in built:
        await manager.close()


class RecordingApprover:
    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self.requests.append(request)
        return ApprovalReply(approved=self.approve, reason=None if self.approve else "not now")


async def call(
    manager: McpManager, name: str, arguments: dict[str, Any], approver: Any = None, policy: Any = None
) -> ToolResult:
    executor = ToolExecutor(
        manager.registry, policy=policy or ReadOnlyPolicy(), approver=approver or FixedApprover(True)
    )
    tool_call = ToolCall(id=f"call-{name}", name=name, arguments=json.dumps(arguments))
    return await executor.execute(tool_call, ToolContext(root_dir=manager.root_dir))


def server_state(manager: McpManager, name: str) -> dict[str, Any]:
    return {server["name"]: server for server in manager.status()["servers"]}[name]


async def test_stdio_tools_are_named_by_server_and_keep_their_schema(managers: Managers) -> None:
    manager = managers({"demo": demo()})
    assert server_state(manager, "demo")["state"] == "idle", "nothing starts early"
    assert manager.registry.names() == ["mcp_tools", "mcp_start_server"], "index and start, until listed"
    await manager.refresh()
    assert server_state(manager, "demo")["state"] == "connected"
    assert {"demo__echo", "demo__fail", "demo__picture", "demo__grow", "demo__crash"} <= set(
        manager.registry.names()
    )
    echo = manager.registry.get("demo__echo")
    assert echo is not None
    assert parameters_schema(echo) == {
        "properties": {
            "text": {"title": "Text", "type": "string"},
            "times": {"default": 1, "title": "Times", "type": "integer"},
        },
        "required": ["text"],
        "type": "object",
    }
    assert to_openai(echo)["function"]["description"] == "Repeat the text.\n(From the MCP server 'demo'.)"


async def test_results_map_text_errors_images_and_resources(managers: Managers) -> None:
    manager = managers({"demo": demo()})
    await manager.refresh()
    echoed = await call(manager, "demo__echo", {"text": "hi", "times": 2})
    assert echoed.status == "ok" and echoed.content == "hi hi"
    failed = await call(manager, "demo__fail", {"reason": "bad input"})
    assert failed.status == "error" and failed.error is not None
    assert failed.error.code == "E_MCP_TOOL_ERROR" and "failed on purpose: bad input" in failed.error.message
    picture = await call(manager, "demo__picture", {})
    assert picture.status == "ok"
    assert picture.content.splitlines() == ["a 2x1 picture", "[image 1: image/png, 2x1, 70 bytes]"]
    [image] = picture.details["images"]
    assert (image["mime_type"], image["width"], image["height"]) == ("image/png", 2, 1)
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG")
    document = await call(manager, "demo__document", {})
    assert document.content == "[resource memo://one]\nmemo text"
    unknown_argument = await call(manager, "demo__echo", {"txt": "typo"})
    assert unknown_argument.status == "error" and "text" in (
        unknown_argument.error.message if unknown_argument.error else ""
    )


async def test_mcp_tools_ask_by_default_and_auto_approve_runs_them(managers: Managers) -> None:
    manager = managers({"demo": demo(autoApprove=["echo"])})
    await manager.refresh()
    approver = RecordingApprover(approve=False)
    # The policy the server and the CLI use, with no rules from the user: the defaults decide.
    policy = build_policy(
        HdspAgentConfig(), manager.root_dir, permissions_file=manager.root_dir / "none.json"
    )
    allowed = await call(manager, "demo__echo", {"text": "x"}, approver, policy)
    declined = await call(manager, "demo__picture", {}, approver, policy)
    assert allowed.status == "ok"
    assert declined.status == "denied" and declined.error is not None and "not now" in declined.error.message
    assert [(r.tool, r.action_kind, r.action_target) for r in approver.requests] == [
        ("demo__picture", "Custom", "demo__picture")
    ]


class _DeclaredEcho(Tool[NoArgs]):
    name = "demo__echo"
    description = "A tool the administrator declared under the same name."


async def test_a_server_cannot_replace_a_tool_declared_under_the_same_name(managers: Managers) -> None:
    manager = managers({"demo": demo()})
    declared = _DeclaredEcho()
    manager.registry.register(declared)
    await manager.refresh()
    assert manager.registry.get("demo__echo") is declared
    assert "demo__picture" in manager.registry
    skipped = server_state(manager, "demo")["skipped_tools"]
    assert skipped == ["'echo': a tool named demo__echo already exists"]


async def test_list_changed_brings_new_tools_into_the_registry(managers: Managers) -> None:
    manager = managers({"demo": demo()})
    await manager.refresh()
    assert "demo__added" not in manager.registry
    grown = await call(manager, "demo__grow", {})
    assert grown.content == "added a tool"
    deadline = time.monotonic() + 10
    while "demo__added" not in manager.registry and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    added = await call(manager, "demo__added", {})
    assert added.status == "ok" and added.content == "I was added"


@pytest.mark.fault
async def test_a_crashed_server_is_reported_with_its_stderr_and_restarted(managers: Managers) -> None:
    manager = managers({"demo": demo()})
    await manager.refresh()
    crashed = await call(manager, "demo__crash", {})
    assert crashed.status == "error" and crashed.error is not None
    assert crashed.error.code == "E_MCP_SERVER_DOWN"
    assert "crashing on purpose" in crashed.error.message, "the tail of the server's stderr explains it"
    state = server_state(manager, "demo")
    assert state["state"] == "error" and "crashing on purpose" in state["message"]
    again = await call(manager, "demo__echo", {"text": "back"})
    assert again.status == "ok" and again.content == "back"
    assert server_state(manager, "demo")["state"] == "connected"


async def test_silence_times_out_but_progress_keeps_a_call_alive(managers: Managers) -> None:
    manager = managers({"demo": demo(timeout=0.6)})
    await manager.refresh()
    started = time.monotonic()
    hung = await call(manager, "demo__hang", {})
    assert hung.status == "error" and hung.error is not None and hung.error.code == "E_TOOL_TIMEOUT"
    assert time.monotonic() - started < 5
    slow = await call(manager, "demo__slow", {"seconds": 1.5})
    assert slow.status == "ok" and slow.content == "finished after 1.5 s", (
        "progress every 0.1 s extends the limit"
    )
    still_usable = await call(manager, "demo__echo", {"text": "ok"})
    assert still_usable.content == "ok"


async def test_streamable_http_server_with_headers_and_its_loss(managers: Managers) -> None:
    process = await asyncio.create_subprocess_exec(
        *DEMO, "http", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        assert process.stdout is not None
        announced = (await asyncio.wait_for(process.stdout.readline(), 30)).decode().split()
        url = f"http://127.0.0.1:{announced[1]}/mcp"
        manager = managers({"web": {"url": url, "headers": {"X-Team": "blue"}}})
        await manager.refresh()
        assert server_state(manager, "web")["transport"] == "http"
        echoed = await call(manager, "web__echo", {"text": "over http"})
        header = await call(manager, "web__header", {"name": "X-Team"})
        assert (echoed.content, header.content) == ("over http", "blue")
    finally:
        process.kill()
        await process.wait()
    lost = await call(manager, "web__echo", {"text": "anyone?"})
    assert lost.status == "error" and lost.error is not None and lost.error.code == "E_MCP_SERVER_DOWN"
    assert server_state(manager, "web")["state"] == "error"


async def test_a_server_that_cannot_start_is_reported_not_raised(managers: Managers, tmp_path: Path) -> None:
    script = tmp_path / "broken_server.py"
    script.write_text("import sys\nprint('missing API key FOO_TOKEN', file=sys.stderr)\nsys.exit(1)\n")
    manager = managers(
        {
            "broken": {"command": sys.executable, "args": [str(script)]},
            "absent": {"command": str(tmp_path / "no-such-program")},
            "demo": demo(),
        }
    )
    await manager.refresh()
    broken, absent = server_state(manager, "broken"), server_state(manager, "absent")
    assert broken["state"] == "error" and "missing API key FOO_TOKEN" in broken["message"]
    assert absent["state"] == "error" and "FileNotFoundError" in absent["message"]
    assert server_state(manager, "demo")["state"] == "connected", "one bad server does not stop the others"
    assert not any(name.startswith(("broken__", "absent__")) for name in manager.registry.names())


async def test_a_failed_server_waits_before_a_retry_unless_the_user_asks(
    managers: Managers, tmp_path: Path
) -> None:
    ready = tmp_path / "ready"
    script = tmp_path / "late_server.py"
    script.write_text(
        "import os, runpy, sys\n"
        f"if not os.path.exists({str(ready)!r}):\n"
        "    sys.exit('not ready yet')\n"
        f"runpy.run_path({str(DEMO[1])!r}, run_name='__main__')\n"
    )
    manager = managers({"late": {"command": sys.executable, "args": [str(script)]}}, retry_seconds=600)
    await manager.refresh()
    assert server_state(manager, "late")["state"] == "error"

    ready.touch()
    await manager.refresh()
    assert server_state(manager, "late")["state"] == "error", "a turn does not wait on a failed server again"
    await manager.refresh(retry_failed=True)
    late = server_state(manager, "late")
    assert late["state"] == "connected" and "late__echo" in late["tools"]


@pytest.mark.parametrize(("window", "eager"), [(32_768, False), (131_072, True)], ids=["standard", "full"])
async def test_a_turn_connects_lazily_and_calls_an_mcp_tool(tmp_path: Path, window: int, eager: bool) -> None:
    with ScriptedModel() as model:
        model.add(tool_calls(("demo__echo", '{"text": "from the model"}')), text("Echoed."))
        # The administrator pre-allowed starting this server (issue 24: nothing starts undecided).
        config = HdspAgentConfig(allow_rules=["mcp_start_server(demo)"])
        policy = build_policy(config, tmp_path, permissions_file=tmp_path / "permissions.json")
        runtime = make_runtime(tmp_path, model, [], context_window=window, policy=policy)
        mcp = McpManager(
            runtime.registry,
            root_dir=tmp_path,
            trait_servers={"mcpServers": {"demo": demo(autoApprove=["echo"])}},
            config_dir=tmp_path / "config",
        )
        mcp.attach(runtime)
        sessions = make_manager(tmp_path, runtime)
        try:
            events = await run_turn(sessions.create(), "echo something")
        finally:
            await sessions.shutdown()
            await mcp.close()
    assert [e for e in events if e["type"] == "turn.end"][0]["reason"] == "completed"
    offered = [tool["function"]["name"] for tool in model.requests[0]["tools"]]
    # The full profile sends every schema; standard sends the index and the call by name connects.
    assert ("demo__echo" in offered) is eager and ("mcp_tools" in offered) is not eager
    tool_message = [m for m in model.requests[1]["messages"] if m["role"] == "tool"][0]
    assert "from the model" in tool_message["content"]


async def test_server_everything_from_npm(managers: Managers) -> None:
    assert EVERYTHING.exists(), "installed by `npm ci --prefix tests/mcp_servers` (make test)"
    manager = managers({"everything": {"command": "node", "args": [str(EVERYTHING), "stdio"]}})
    await manager.refresh()
    assert {"everything__echo", "everything__get-tiny-image", "everything__get-sum"} <= set(
        manager.registry.names()
    )
    echoed = await call(manager, "everything__echo", {"message": "hi"})
    assert echoed.content == "Echo: hi"
    summed = await call(manager, "everything__get-sum", {"a": 2, "b": 3})
    assert summed.status == "ok" and "5" in summed.content
    image = await call(manager, "everything__get-tiny-image", {})
    assert image.status == "ok" and image.details["images"][0]["mime_type"] == "image/png"


# -- configuration -------------------------------------------------------------------------------------------


async def test_config_entries_are_parsed_and_bad_ones_reported() -> None:
    specs, problems = parse_servers(
        {
            "mcpServers": {
                "files": {
                    "command": "npx",
                    "args": ["-y", "server"],
                    "env": {"K": "v"},
                    "autoApprove": ["read"],
                },
                "web": {
                    "url": "https://example.org/mcp",
                    "headers": {"Authorization": "Bearer t"},
                    "disabled": True,
                },
                "both": {"command": "x", "url": "http://x"},
                "bad__name": {"command": "x"},
                "ftp": {"url": "ftp://x"},
            }
        },
        "user",
    )
    by_name = {spec.name: spec for spec in specs}
    assert set(by_name) == {"files", "web"}
    assert by_name["files"].transport == "stdio" and by_name["files"].auto_approve == frozenset({"read"})
    assert by_name["web"].transport == "http" and by_name["web"].disabled and by_name["web"].timeout == 60.0
    assert sorted(problem.server or "" for problem in problems) == ["bad__name", "both", "ftp"]


async def test_sources_merge_and_an_untrusted_project_file_starts_nothing(tmp_path: Path) -> None:
    config_dir, root = tmp_path / "config", tmp_path / "project"
    (root / ".hdsp").mkdir(parents=True)
    config_dir.mkdir()
    (config_dir / "mcp.json").write_text(
        json.dumps({"mcpServers": {"mine": {"command": "a"}, "shared": {"command": "b"}}})
    )
    project_file = root / ".hdsp" / "mcp.json"
    project_file.write_text(
        json.dumps({"mcpServers": {"proj": {"command": "c"}, "mine": {"command": "evil"}}})
    )
    trait = {"mcpServers": {"shared": {"command": "admin"}, "blocked": {"command": "d"}}}

    untrusted = load_mcp_config(root, trait, denied=["blocked"], config_dir=config_dir)
    assert {spec.name: spec.command for spec in untrusted.servers} == {"mine": "a", "shared": "admin"}
    assert [spec.name for spec in untrusted.denied] == ["blocked"]
    assert [spec.name for spec in untrusted.untrusted] == ["proj"]
    assert untrusted.project is not None and untrusted.project.status == "untrusted"

    project_trust(config_dir).trust(project_file)
    trusted = load_mcp_config(root, trait, denied=["blocked"], config_dir=config_dir)
    assert {spec.name: spec.command for spec in trusted.servers} == {
        "mine": "a",
        "shared": "admin",
        "proj": "c",
    }
    assert any("already configured" in problem.message for problem in trusted.problems), (
        "a project cannot replace"
    )

    project_file.write_text(project_file.read_text().replace('"c"', '"changed"'))
    changed = load_mcp_config(root, trait, config_dir=config_dir)
    assert changed.project is not None and changed.project.status == "changed"
    assert "proj" not in {spec.name for spec in changed.servers}
    with pytest.raises(ValueError):
        project_trust(config_dir).trust(project_file, expected_sha256="0" * 64)
