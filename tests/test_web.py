"""fetch_url_content and search_web against real HTTP servers on 127.0.0.1 (and 127.0.0.2)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest, FixedApprover
from hdsp_agent.tools.base import Tool, ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.web import FetchUrlTool, SearchWebTool
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio

PAGE = b"""<!doctype html><html><head><title>Docs &amp; Guide</title><style>.x{color:red}</style>
<script>var secret = 1;</script></head><body><h1>Install</h1><p>Run <code>pip install hdsp</code>.</p>
<a href="/next">Next page</a></body></html>"""


@dataclass
class Server:
    host: str
    port: int
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    redirect_target: str = ""

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"


def _search_results(query: str) -> bytes:
    results = [
        {
            "title": f"Result {i} for {query}",
            "url": f"https://example.org/{i}",
            "content": f"snippet  {i}\n text",
        }
        for i in range(12)
    ]
    return json.dumps({"query": query, "results": results}).encode()


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def _send(
            self, status: int, content_type: str, body: bytes, headers: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            server.requests.append((self.path, dict(self.headers)))
            path = urlsplit(self.path).path
            redirects = {"/redirect": "/page", "/redirect-away": server.redirect_target, "/loop": "/loop"}
            if path in redirects:
                self._send(302, "text/plain", b"", {"Location": redirects[path]})
            elif path == "/page":
                self._send(200, "text/html; charset=utf-8", PAGE)
            elif path == "/text":
                self._send(200, "text/plain", "plain text ünïcode\n".encode())
            elif path == "/data.json":
                self._send(200, "application/json", b'{"ok": true}')
            elif path == "/image.png":
                self._send(200, "image/png", b"\x89PNG\r\n\x1a\n\0\0\0")
            elif path == "/host":
                self._send(200, "text/plain", self.headers.get("Host", "").encode())
            elif path == "/big":
                self._send(200, "text/plain", b"x" * 300_000)
            elif path == "/search":
                self._send(
                    200, "application/json", _search_results(parse_qs(urlsplit(self.path).query)["q"][0])
                )
            else:
                self._send(404, "text/plain", b"no such page")

    return Handler


def _serve(host: str) -> Iterator[Server]:
    state = Server(host, 0)
    httpd = ThreadingHTTPServer((host, 0), _handler(state))
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    yield from _serve("127.0.0.1")


@pytest.fixture
def second_server() -> Iterator[Server]:
    yield from _serve("127.0.0.2")


async def call(tool: Tool[Any], arguments: dict[str, Any], root: Path) -> ToolResult:
    executor = ToolExecutor(ToolRegistry([tool]), approver=FixedApprover(True))
    tool_call = ToolCall(id="c1", name=tool.name, arguments=json.dumps(arguments))
    return await executor.execute(tool_call, ToolContext(root))


async def test_local_server_is_refused_by_default_without_a_request(server: Server, tmp_path: Path) -> None:
    result = await call(FetchUrlTool(), {"url": server.url("/page")}, tmp_path)
    assert result.status == "error" and result.error is not None
    assert result.error.code == "E_URL_BLOCKED" and "loopback" in result.error.message
    assert server.requests == []


async def test_localhost_name_is_refused_too(server: Server, tmp_path: Path) -> None:
    result = await call(FetchUrlTool(), {"url": f"http://localhost:{server.port}/page"}, tmp_path)
    assert result.error is not None and result.error.code == "E_URL_BLOCKED"
    assert server.requests == []


async def test_allowlisted_server_html_becomes_markdown(server: Server, tmp_path: Path) -> None:
    result = await call(FetchUrlTool(allowlist=["127.0.0.1"]), {"url": server.url("/page")}, tmp_path)
    assert result.status == "ok", result.error
    assert "Title: Docs & Guide" in result.content
    assert "# Install" in result.content and "`pip install hdsp`" in result.content
    assert f"[Next page]({server.url('/next')})" in result.content
    assert "secret" not in result.content and "color:red" not in result.content


async def test_text_and_json_are_returned_as_is(server: Server, tmp_path: Path) -> None:
    tool = FetchUrlTool(allowlist=["127.0.0.1"])
    text = await call(tool, {"url": server.url("/text")}, tmp_path)
    assert text.content.endswith("plain text ünïcode") and "Content-Type: text/plain" in text.content
    data = await call(tool, {"url": server.url("/data.json")}, tmp_path)
    assert data.content.endswith('{"ok": true}')


async def test_binary_content_is_refused(server: Server, tmp_path: Path) -> None:
    result = await call(FetchUrlTool(allowlist=["127.0.0.1"]), {"url": server.url("/image.png")}, tmp_path)
    assert result.error is not None and result.error.code == "E_BINARY_CONTENT"
    assert "image/png" in result.error.message


async def test_connection_is_pinned_but_keeps_the_host_name(server: Server, tmp_path: Path) -> None:
    tool = FetchUrlTool(allowlist=["127.0.0.1"])
    result = await call(tool, {"url": f"http://localhost:{server.port}/host"}, tmp_path)
    assert result.content.endswith(f"localhost:{server.port}")


async def test_redirects_are_followed_and_rechecked(server: Server, tmp_path: Path) -> None:
    result = await call(FetchUrlTool(allowlist=["127.0.0.1"]), {"url": server.url("/redirect")}, tmp_path)
    assert result.status == "ok" and f"URL: {server.url('/page')}" in result.content
    assert [path for path, _ in server.requests] == ["/redirect", "/page"]


async def test_redirect_to_a_private_address_not_allowlisted_is_refused(
    server: Server, second_server: Server, tmp_path: Path
) -> None:
    server.redirect_target = second_server.url("/page")
    result = await call(
        FetchUrlTool(allowlist=["127.0.0.1"]), {"url": server.url("/redirect-away")}, tmp_path
    )
    assert result.error is not None and result.error.code == "E_URL_BLOCKED"
    assert (
        "127.0.0.2 is a loopback address" in result.error.message
        and "redirected from" in result.error.message
    )
    assert second_server.requests == []


async def test_redirect_to_metadata_is_refused(server: Server, tmp_path: Path) -> None:
    server.redirect_target = "http://169.254.169.254/latest/meta-data/"
    result = await call(
        FetchUrlTool(allowlist=["127.0.0.0/8"]), {"url": server.url("/redirect-away")}, tmp_path
    )
    assert result.error is not None and "cloud metadata" in result.error.message


async def test_redirect_loops_stop_after_five(server: Server, tmp_path: Path) -> None:
    result = await call(FetchUrlTool(allowlist=["127.0.0.1"]), {"url": server.url("/loop")}, tmp_path)
    assert result.error is not None and "redirected more than 5 times" in result.error.message
    assert len(server.requests) == 6


async def test_body_is_capped(server: Server, tmp_path: Path) -> None:
    tool = FetchUrlTool(allowlist=["127.0.0.1"], max_bytes=100_000)
    result = await call(tool, {"url": server.url("/big")}, tmp_path)
    assert result.status == "ok" and result.details["truncated"] is True
    assert "stopped reading after" in result.content


async def test_http_errors_are_reported(server: Server, tmp_path: Path) -> None:
    result = await call(FetchUrlTool(allowlist=["127.0.0.1"]), {"url": server.url("/missing")}, tmp_path)
    assert (
        result.error is not None
        and "HTTP 404" in result.error.message
        and "no such page" in result.error.message
    )


async def test_other_schemes_are_refused(tmp_path: Path) -> None:
    result = await call(FetchUrlTool(), {"url": "file:///etc/passwd"}, tmp_path)
    assert result.error is not None and result.error.code == "E_URL_BLOCKED"
    assert "scheme 'file'" in result.error.message


async def test_fetch_asks_the_policy_with_a_network_action(tmp_path: Path) -> None:
    requests: list[ApprovalRequest] = []

    class Recorder:
        async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
            requests.append(request)
            return ApprovalReply(approved=False)

    executor = ToolExecutor(ToolRegistry([FetchUrlTool()]), approver=Recorder())
    tool_call = ToolCall(id="c", name="fetch_url_content", arguments='{"url": "https://example.org/"}')
    result = await executor.execute(tool_call, ToolContext(tmp_path))
    assert result.status == "denied"
    assert requests[0].action_kind == "Network" and requests[0].action_target == "https://example.org/"


async def test_search_web_queries_the_searxng_backend(server: Server, tmp_path: Path) -> None:
    tool = SearchWebTool(backend_url=server.url("/search"))
    result = await call(tool, {"query": "jupyter agents"}, tmp_path)
    assert result.status == "ok"
    first = result.content.split("\n\n")[0]
    assert first == "1. Result 0 for jupyter agents\n   https://example.org/0\n   snippet 0 text"
    assert result.content.count("https://example.org/") == 8
    path, _ = server.requests[0]
    assert parse_qs(urlsplit(path).query) == {"q": ["jupyter agents"], "format": ["json"]}


async def test_search_web_is_only_offered_with_a_backend(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    unconfigured = ToolRegistry([SearchWebTool()])
    assert "search_web" not in unconfigured.catalog(ctx)
    executor = ToolExecutor(unconfigured, approver=FixedApprover(True))
    tool_call = ToolCall(id="c", name="search_web", arguments='{"query": "x"}')
    result = await executor.execute(tool_call, ctx, unconfigured.catalog(ctx))
    assert result.error is not None and result.error.code == "E_TOOL_NOT_IN_CATALOG"
    assert "search_web" in ToolRegistry([SearchWebTool("http://127.0.0.1:1/search")]).catalog(ctx)


async def test_fetch_url_content_schema_snapshot() -> None:
    assert parameters_schema(FetchUrlTool()) == {
        "additionalProperties": False,
        "properties": {"url": {"description": "An http(s) URL.", "type": "string"}},
        "required": ["url"],
        "type": "object",
    }


async def test_search_web_schema_snapshot() -> None:
    assert parameters_schema(SearchWebTool()) == {
        "additionalProperties": False,
        "properties": {"query": {"description": "What to search for.", "type": "string"}},
        "required": ["query"],
        "type": "object",
    }
