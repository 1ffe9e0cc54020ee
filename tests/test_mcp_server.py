"""Our tools as an MCP server: ``/hdsp-agent/mcp`` on a real Jupyter server and ``hdsp-agent mcp`` over stdio,
both exercised with the real ``mcp`` Python client; plus ``GET /hdsp-agent/mcp/servers`` and project trust.

Server tests run on pytest-jupyter's loop (no asyncio mark); requesting ``http_server_client`` is what makes
the server listen on ``jp_http_port`` for the MCP client. The stdio test carries its own asyncio mark.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import nbformat
import pytest
import tornado.httpclient
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from hdsp_agent.mcp.server import mcp_definition
from hdsp_agent.tools.builtin.ls import ListDirectoryTool

DEMO_SERVER = Path(__file__).parent / "mcp_servers" / "demo_server.py"
REPO = Path(__file__).parent.parent


@pytest.fixture
def jp_base_url() -> str:
    return "/"  # the MCP client gets a plain URL


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    demo = {"command": sys.executable, "args": [str(DEMO_SERVER)], "autoApprove": ["echo"]}
    return {
        **jp_server_config,
        "HdspAgentApp": {
            "store_path": str(tmp_path / "sessions.sqlite3"),
            "audit_log_path": str(tmp_path / "audit.jsonl"),
            "mcp_servers": {"mcpServers": {"demo": demo, "off": {**demo, "disabled": True}, "banned": demo}},
            "mcp_denied_servers": ["banned"],
            "custom_tools": [
                {
                    "name": "broken",
                    "entry": "no_such_module_for_hdsp",
                    "exports": [{"name": "x", "description": "x"}],
                }
            ],
        },
    }


def token_header(jp_serverapp: Any) -> dict[str, str]:
    return {"Authorization": f"token {jp_serverapp.identity_provider.token}"}


@asynccontextmanager
async def mcp_session(port: int, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        async with streamable_http_client(
            f"http://127.0.0.1:{port}/hdsp-agent/mcp", http_client=http
        ) as streams:
            async with ClientSession(*streams) as session:
                await session.initialize()
                yield session


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def test_endpoint_lists_tools_with_annotations(
    jp_serverapp: Any, http_server_client: Any, jp_http_port: int
) -> None:
    async with mcp_session(jp_http_port, token_header(jp_serverapp)) as session:
        assert session.server_info is not None and session.server_info.name == "hdsp-agent"
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert {"ls", "read_file", "create_new_file", "read_notebook", "run_cell"} <= set(listed)
    assert listed["ls"].annotations is not None and listed["ls"].annotations.read_only_hint is True
    assert listed["ls"].annotations.destructive_hint is False
    assert listed["create_new_file"].annotations is not None
    assert listed["create_new_file"].annotations.read_only_hint is False
    assert listed["ls"].input_schema == mcp_definition(ListDirectoryTool()).input_schema
    assert not any("__" in name for name in listed), "tools of MCP servers we use are not served again"


async def test_endpoint_calls_ls_and_read_notebook(
    jp_serverapp: Any, http_server_client: Any, jp_http_port: int, jp_root_dir: Path
) -> None:
    (jp_root_dir / "notes.txt").write_text("hello\n")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("answer = 6 * 7")])
    nbformat.write(notebook, jp_root_dir / "analysis.ipynb")
    async with mcp_session(jp_http_port, token_header(jp_serverapp)) as session:
        listing = await session.call_tool("ls", {"dirPath": "."})
        read = await session.call_tool("read_notebook", {"path": "analysis.ipynb", "format": "full"})
        missing = await session.call_tool("ls", {"dirPath": "no-such-dir"})
    assert not listing.is_error and {"notes.txt", "analysis.ipynb"} <= set(text_of(listing).splitlines())
    assert not read.is_error and "answer = 6 * 7" in text_of(read)
    assert missing.is_error and "E_PATH_NOT_FOUND" in text_of(missing)


async def test_unauthenticated_requests_are_refused(http_server_client: Any, jp_http_port: int) -> None:
    client = tornado.httpclient.AsyncHTTPClient()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    for headers in ({}, {"Authorization": "token not-the-token"}):
        with pytest.raises(tornado.httpclient.HTTPClientError) as refused:
            await client.fetch(
                f"http://127.0.0.1:{jp_http_port}/hdsp-agent/mcp",
                method="POST",
                body=body,
                headers={
                    **headers,
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                },
            )
        assert refused.value.code in (401, 403)


async def test_call_needing_approval_is_refused_without_a_sidebar(
    jp_serverapp: Any, http_server_client: Any, jp_http_port: int, jp_root_dir: Path, tmp_path: Path
) -> None:
    async with mcp_session(jp_http_port, token_header(jp_serverapp)) as session:
        result = await session.call_tool("create_new_file", {"filepath": "made.txt", "contents": "x"})
    assert result.is_error
    assert "E_TOOL_DENIED" in text_of(result) and "no hdsp-agent sidebar is connected" in text_of(result)
    assert not (jp_root_dir / "made.txt").exists()
    # Audited as what happened: nobody could be asked (not "declined by" the user).
    [record] = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert (record["tool"], record["status"]) == ("create_new_file", "denied")
    assert record["approval"]["by"] == "no one to ask" and record["approval"]["approved"] is False


async def test_call_needing_approval_is_asked_in_the_connected_sidebar(
    jp_serverapp: Any,
    jp_fetch: Any,
    jp_ws_fetch: Any,
    http_server_client: Any,
    jp_http_port: int,
    jp_root_dir: Path,
) -> None:
    created = json.loads((await jp_fetch("hdsp-agent", "sessions", method="POST", body="{}")).body)
    ws = await jp_ws_fetch("hdsp-agent", "sessions", created["id"], "ws")
    ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    async with mcp_session(jp_http_port, token_header(jp_serverapp)) as session:
        call = asyncio.ensure_future(
            session.call_tool("create_new_file", {"filepath": "approved.txt", "contents": "from MCP\n"})
        )
        while True:
            message = json.loads(await asyncio.wait_for(ws.read_message(), 20))
            if message.get("type") == "approval.request":
                break
        request = message["request"]
        assert request["tool"] == "create_new_file" and request["arguments"]["filepath"] == "approved.txt"
        assert not call.done(), "the call waits for the person"
        ws.write_message(json.dumps({"type": "approve", "call_id": request["call_id"]}))
        result = await asyncio.wait_for(call, 20)
    ws.close()
    assert not result.is_error, text_of(result)
    assert (jp_root_dir / "approved.txt").read_text() == "from MCP\n"


async def test_run_cell_over_mcp_runs_on_a_kernel_once_approved(
    jp_serverapp: Any,
    jp_fetch: Any,
    jp_ws_fetch: Any,
    http_server_client: Any,
    jp_http_port: int,
    jp_root_dir: Path,
) -> None:
    nbformat.write(nbformat.v4.new_notebook(), jp_root_dir / "calc.ipynb")
    created = json.loads((await jp_fetch("hdsp-agent", "sessions", method="POST", body="{}")).body)
    ws = await jp_ws_fetch("hdsp-agent", "sessions", created["id"], "ws")
    ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    async with mcp_session(jp_http_port, token_header(jp_serverapp)) as session:
        call = asyncio.ensure_future(
            session.call_tool("run_cell", {"path": "calc.ipynb", "code": "print(6 * 7)"})
        )
        while (message := json.loads(await asyncio.wait_for(ws.read_message(), 20))).get(
            "type"
        ) != "approval.request":
            pass
        assert message["request"]["tool"] == "run_cell"
        ws.write_message(json.dumps({"type": "approve", "call_id": message["request"]["call_id"]}))
        result = await asyncio.wait_for(call, 60)
    ws.close()
    assert not result.is_error, text_of(result)
    assert "42" in text_of(result)
    cells = nbformat.read(jp_root_dir / "calc.ipynb", as_version=4).cells
    assert [cell.source for cell in cells] == ["print(6 * 7)"]


async def test_servers_status_and_trusting_the_project_file(
    jp_serverapp: Any, jp_fetch: Any, jp_root_dir: Path
) -> None:
    project_file = jp_root_dir / ".hdsp" / "mcp.json"
    project_file.parent.mkdir()
    project_file.write_text(
        json.dumps({"mcpServers": {"proj": {"command": sys.executable, "args": [str(DEMO_SERVER)]}}})
    )

    report = json.loads((await jp_fetch("hdsp-agent", "mcp", "servers")).body)
    servers = {server["name"]: server for server in report["servers"]}
    assert servers["demo"]["state"] == "connected"
    assert {"demo__echo", "demo__picture", "demo__crash"} <= set(servers["demo"]["tools"])
    assert servers["demo"]["auto_approve"] == ["echo"]
    details = {tool["name"]: tool for tool in servers["demo"]["tool_details"]}
    assert details["demo__echo"] == {
        "name": "demo__echo",
        "remote_name": "echo",
        "description": "Repeat the text.",
        "auto_approved": True,
    }
    assert details["demo__picture"]["auto_approved"] is False
    assert servers["off"]["state"] == "disabled"
    assert servers["banned"]["state"] == "denied"
    assert servers["proj"]["state"] == "untrusted", "an untrusted project file starts nothing"
    assert servers["proj"]["launch"] == f"{sys.executable} {DEMO_SERVER}", "what trusting it would start"
    assert report["project"]["status"] == "untrusted"
    [declared_problem] = report["declared_tool_problems"]
    assert "no_such_module_for_hdsp" in declared_problem["message"], (
        "a bad declared tool is listed, not fatal"
    )
    assert "demo__echo" in jp_serverapp.web_app.settings["hdsp_agent"].registry

    with pytest.raises(tornado.httpclient.HTTPClientError) as stale:
        await jp_fetch("hdsp-agent", "mcp", "trust", method="POST", body=json.dumps({"sha256": "0" * 64}))
    assert stale.value.code == 409
    trusted = await jp_fetch(
        "hdsp-agent", "mcp", "trust", method="POST", body=json.dumps({"sha256": report["project"]["sha256"]})
    )
    assert json.loads(trusted.body)["project"]["status"] == "trusted"
    report = json.loads((await jp_fetch("hdsp-agent", "mcp", "servers")).body)
    servers = {server["name"]: server for server in report["servers"]}
    assert servers["proj"]["state"] == "connected" and "proj__echo" in servers["proj"]["tools"]

    project_file.write_text(project_file.read_text() + "\n")
    report = json.loads((await jp_fetch("hdsp-agent", "mcp", "servers")).body)
    assert report["project"]["status"] == "changed", "a changed file must be trusted again"
    assert {server["name"]: server["state"] for server in report["servers"]}["proj"] == "untrusted"
    assert "proj__echo" not in jp_serverapp.web_app.settings["hdsp_agent"].registry


@pytest.mark.asyncio
async def test_stdio_command_serves_the_same_tools(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    config_dir = tmp_path / "jupyter-config"
    config_dir.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hdsp_agent.cli", "mcp", "--root", str(tmp_path)],
        env={"PYTHONPATH": str(REPO), "JUPYTER_CONFIG_DIR": str(config_dir)},
    )
    async with stdio_client(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        listing = await session.call_tool("ls", {"dirPath": "."})
        refused = await session.call_tool("create_new_file", {"filepath": "new.txt", "contents": "x"})
    assert {"ls", "read_file", "read_notebook", "run_cell"} <= names
    assert text_of(listing).splitlines() == ["data.csv", "jupyter-config/"]
    assert refused.is_error and "--approve all" in text_of(refused)
    assert not (tmp_path / "new.txt").exists()
