"""Tools declared in configuration: Python handlers (trait and entry points) and HTTP tools (a real local
server), called through the real executor and policy; bad declarations are reported and skipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest
from hdsp_agent.permissions.decision import ReadOnlyPolicy
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.declared import load_declared_tools
from hdsp_agent.tools.defaults import default_tools
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

REPO = Path(__file__).parent.parent

TEAM_TOOLS = """
from hdsp_agent.tools.base import ToolError, ToolOutput


async def greet(ctx, input):
    return f"Hello, {input['name']}! (root: {ctx.root_dir.name})"


async def stats(ctx, input):
    values = input["values"]
    return {"count": len(values), "total": sum(values)}


async def explode(ctx, input):
    raise ToolError("E_TEAM", "the team tool refused", "Ask the team.")


def not_async(ctx, input):
    return "sync"
"""

PLUGIN = """
async def shout(ctx, input):
    return input["text"].upper()

DECLARATION = {
    "exports": [
        {
            "name": "shout",
            "description": "Upper-case the text.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            "readOnly": True,
        }
    ]
}
"""

GREET = {
    "name": "greet",
    "description": "Greet someone by name.",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Who to greet."}},
        "required": ["name"],
    },
}
STATS = {
    "name": "stats",
    "description": "Count and sum numbers.",
    "parameters": {
        "type": "object",
        "properties": {"values": {"type": "array", "items": {"type": "number"}}},
    },
    "readOnly": True,
}


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on sys.path with a tools module and an installed distribution declaring entry points."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "team_tools.py").write_text(TEAM_TOOLS)
    (site / "shout_plugin.py").write_text(PLUGIN)
    dist_info = site / "shout_plugin-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        "[hdsp_agent.tools]\nshouter = shout_plugin:DECLARATION\n"
        "missing = no_such_plugin_module:DECLARATION\n"
    )
    monkeypatch.syspath_prepend(str(site))
    return site


class RecordingApprover:
    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self.requests.append(request)
        return ApprovalReply(approved=True)


async def call(
    config: HdspAgentConfig, name: str, arguments: Any, root: Path, approver: Any = None
) -> ToolResult:
    registry = ToolRegistry(load_declared_tools(config).tools)
    executor = ToolExecutor(registry, policy=ReadOnlyPolicy(), approver=approver or RecordingApprover())
    return await executor.execute(
        ToolCall(id="c1", name=name, arguments=json.dumps(arguments)), ToolContext(root_dir=root)
    )


def team_config(**extra: Any) -> HdspAgentConfig:
    explode = {"name": "explode", "description": "Always refuses."}
    declaration = {"name": "team", "entry": "team_tools", "exports": [GREET, STATS, explode]}
    return HdspAgentConfig(custom_tools=[declaration], **extra)


@pytest.mark.asyncio
async def test_custom_tool_is_called_with_ctx_and_input_after_approval(
    plugin_path: Path, tmp_path: Path
) -> None:
    approver = RecordingApprover()
    result = await call(team_config(), "team__greet", {"name": "Ada"}, tmp_path, approver)
    assert result.status == "ok" and result.content == f"Hello, Ada! (root: {tmp_path.name})"
    assert [(r.tool, r.action_kind, r.action_target) for r in approver.requests] == [
        ("team__greet", "Custom", "team__greet")
    ]


@pytest.mark.asyncio
async def test_read_only_export_runs_without_asking_and_json_is_returned(
    plugin_path: Path, tmp_path: Path
) -> None:
    approver = RecordingApprover()
    result = await call(team_config(), "team__stats", {"values": [1, 2, 3.5]}, tmp_path, approver)
    assert json.loads(result.content) == {"count": 3, "total": 6.5}
    assert approver.requests == []


@pytest.mark.asyncio
async def test_arguments_are_checked_against_the_schema_before_asking(
    plugin_path: Path, tmp_path: Path
) -> None:
    approver = RecordingApprover()
    result = await call(team_config(), "team__greet", {"nme": "typo"}, tmp_path, approver)
    assert result.status == "error" and result.error is not None
    assert (
        result.error.code == "E_TOOL_INVALID_ARGS" and "'name' is a required property" in result.error.message
    )
    assert approver.requests == [], "a malformed call is answered before the user is bothered"
    coerced = await call(team_config(), "team__stats", {"values": "[4, 5]"}, tmp_path, approver)
    assert json.loads(coerced.content) == {"count": 2, "total": 9}, (
        "a JSON string where an array belongs is decoded"
    )


@pytest.mark.asyncio
async def test_a_handler_tool_error_reaches_the_model(plugin_path: Path, tmp_path: Path) -> None:
    result = await call(team_config(), "team__explode", {}, tmp_path)
    assert result.status == "error" and result.error is not None
    assert (result.error.code, result.error.message, result.error.suggestion) == (
        "E_TEAM",
        "the team tool refused",
        "Ask the team.",
    )


def test_custom_tool_schema_is_the_declared_one(plugin_path: Path) -> None:
    tools = {tool.name: tool for tool in load_declared_tools(team_config()).tools}
    assert parameters_schema(tools["team__greet"]) == {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Who to greet."}},
        "required": ["name"],
    }
    assert tools["team__greet"].description == "Greet someone by name."
    assert tools["team__stats"].read_only and not tools["team__greet"].read_only


def test_entry_points_load_and_broken_ones_are_reported(plugin_path: Path) -> None:
    loaded = load_declared_tools(HdspAgentConfig())
    assert [tool.name for tool in loaded.tools] == ["shouter__shout"]
    assert len(loaded.problems) == 1
    assert "missing" in loaded.problems[0].source and "no_such_plugin_module" in loaded.problems[0].message


def test_bad_declarations_are_reported_and_skipped(plugin_path: Path) -> None:
    config = HdspAgentConfig(
        custom_tools=[
            {"name": "team", "entry": "team_tools", "exports": [GREET]},
            {"name": "ghost", "entry": "no_such_module_here", "exports": [GREET]},
            {"name": "nohandler", "entry": "team_tools", "exports": [{**GREET, "name": "absent"}]},
            {"name": "sync", "entry": "team_tools", "exports": [{**GREET, "name": "not_async"}]},
            {"name": "bad__group", "entry": "team_tools", "exports": [GREET]},
            {"name": "mute", "entry": "team_tools", "exports": [{"name": "greet", "parameters": {}}]},
            {
                "name": "odd",
                "entry": "team_tools",
                "exports": [{**GREET, "parameters": {"required": "name"}}],
            },
        ],
        http_tools=[{"name": "nourl", "description": "x"}],
    )
    loaded = load_declared_tools(config)
    assert [tool.name for tool in loaded.tools if tool.name.startswith("team")] == ["team__greet"]
    messages = " | ".join(f"{p.source}: {p.message}" for p in loaded.problems)
    for expected in (
        "no_such_module_here",
        "no handler 'absent'",
        "must be 'async def",
        "without '__'",
        "needs a 'description'",
        "'url' must be an http(s) URL",
        "'parameters' is not a valid JSON Schema",
    ):
        assert expected in messages
    assert "team__greet" in {tool.name for tool in default_tools(config)}, (
        "the server and CLI get what loaded"
    )


# -- HTTP tools ----------------------------------------------------------------------------------------------


class _ToolService(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _ToolService.received.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        if self.path == "/weather":
            self._reply(200, {"output": f"Sunny in {body['arguments']['city']}"})
        elif self.path == "/docs":
            self._reply(200, {"output": [{"name": "Guide", "description": "d", "content": "Step one."}]})
        else:
            self._reply(500, {"detail": "database is down " + "x" * 900})

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def tool_service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ToolService)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    _ToolService.received = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def http_config(base: str) -> HdspAgentConfig:
    parameters = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    return HdspAgentConfig(
        http_tools=[
            {
                "name": "weather",
                "description": "Weather now.",
                "parameters": parameters,
                "url": f"{base}/weather",
                "headers": {"Authorization": "Bearer svc"},
            },
            {"name": "kb__docs", "description": "Docs.", "url": f"{base}/docs"},
            {"name": "broken", "description": "Fails.", "url": f"{base}/broken"},
            {"name": "offline", "description": "Nobody home.", "url": "http://127.0.0.1:9/tool"},
        ]
    )


@pytest.mark.asyncio
async def test_http_tool_posts_arguments_and_returns_output(tool_service: str, tmp_path: Path) -> None:
    approver = RecordingApprover()
    result = await call(http_config(tool_service), "http__weather", {"city": "Seoul"}, tmp_path, approver)
    assert result.status == "ok" and result.content == "Sunny in Seoul"
    assert _ToolService.received == [
        {"path": "/weather", "body": {"arguments": {"city": "Seoul"}}, "auth": "Bearer svc"}
    ]
    assert [(r.action_kind, r.action_target) for r in approver.requests] == [
        ("Network", f"{tool_service}/weather")
    ]
    docs = await call(http_config(tool_service), "kb__docs", {}, tmp_path)
    assert docs.content == "## Guide\nStep one.", "Continue's context items are joined"


@pytest.mark.asyncio
async def test_http_tool_errors_carry_status_and_body_excerpt(tool_service: str, tmp_path: Path) -> None:
    broken = await call(http_config(tool_service), "http__broken", {}, tmp_path)
    assert broken.status == "error" and broken.error is not None
    assert broken.error.code == "E_HTTP_TOOL_FAILED"
    assert "answered HTTP 500" in broken.error.message and "database is down" in broken.error.message
    assert len(broken.error.message) < 700, "only an excerpt of the body"
    offline = await call(http_config(tool_service), "http__offline", {}, tmp_path)
    assert offline.error is not None and offline.error.code == "E_HTTP_TOOL_UNREACHABLE"


def test_http_tool_schema_snapshot(tool_service: str) -> None:
    tools = {tool.name: tool for tool in load_declared_tools(http_config(tool_service)).tools}
    assert parameters_schema(tools["http__weather"]) == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    assert parameters_schema(tools["kb__docs"]) == {"type": "object", "properties": {}}


def test_cli_calls_a_declared_tool_from_the_jupyter_config(plugin_path: Path, tmp_path: Path) -> None:
    config_dir = tmp_path / "jupyter-config"
    config_dir.mkdir()
    declaration = {"name": "team", "entry": "team_tools", "exports": [GREET]}
    (config_dir / "jupyter_server_config.json").write_text(
        json.dumps({"HdspAgentApp": {"custom_tools": [declaration]}})
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(plugin_path)]),
        "JUPYTER_CONFIG_DIR": str(config_dir),
    }
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "hdsp_agent.cli",
            "tools",
            "call",
            "team__greet",
            '{"name": "CLI"}',
            "--root",
            str(tmp_path),
            "--approve",
            "all",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["content"] == f"Hello, CLI! (root: {tmp_path.name})"
