"""The MCP Streamable HTTP transport inside tornado: the SDK's session manager behind an ASGI adapter.

The SDK implements the transport (sessions and ``Mcp-Session-Id``, JSON and SSE answers, the GET stream for
server notifications, DELETE) as an ASGI app; Jupyter serves tornado. ``StreamableHttpBridge`` runs the SDK's
``StreamableHTTPSessionManager`` for the server's life in a task of its own (its task group outlives any one
request); ``TornadoAsgiExchange`` presents one tornado request to it as ASGI ``receive``/``send``, streaming
what it sends back. Authentication is the tornado handler's (Jupyter's token or cookie), before anything
reaches the SDK.
"""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

import tornado.iostream
import tornado.web
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

# Set by tornado per response: passing the SDK's would duplicate or contradict them.
_HOP_HEADERS = {"content-length", "transfer-encoding", "connection"}


class StreamableHttpBridge:
    """One session manager for the Jupyter server's life, started on the first request."""

    def __init__(self, server: Server[Any]) -> None:
        self.manager = StreamableHTTPSessionManager(app=server, json_response=False, stateless=False)
        self._task: asyncio.Task[None] | None = None
        self._started = asyncio.Event()
        self._stop = asyncio.Event()

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="hdsp-agent mcp endpoint")
        await self._started.wait()

    async def _run(self) -> None:
        async with self.manager.run():
            self._started.set()
            await self._stop.wait()

    async def handle(self, exchange: TornadoAsgiExchange) -> None:
        await self.start()
        await self.manager.handle_request(exchange.scope(), exchange.receive, exchange.send)

    async def close(self) -> None:
        if self._task is None:
            return
        self._stop.set()
        await asyncio.wait({self._task}, timeout=10)
        if not self._task.done():
            self._task.cancel()
        # The SDK's SSE responses (sse_starlette) start a poller that waits for uvicorn to shut down; under
        # tornado nothing ends it, so it is stopped here with the endpoint.
        for task in asyncio.all_tasks():
            if getattr(task.get_coro(), "__qualname__", "") == "_shutdown_watcher":
                task.cancel()


class TornadoAsgiExchange:
    """One tornado request as ASGI ``receive``/``send``; a closed connection reads as ``http.disconnect``."""

    def __init__(self, handler: tornado.web.RequestHandler) -> None:
        self.handler = handler
        self.disconnected = asyncio.Event()
        self.content_type = "application/json"
        self._body_sent = False

    def scope(self) -> dict[str, Any]:
        request = self.handler.request
        host, _, port = (request.host or "127.0.0.1").partition(":")
        headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.get_all()
        ]
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": request.version.removeprefix("HTTP/") if request.version else "1.1",
            "method": request.method or "GET",
            "scheme": request.protocol,
            "path": request.path,
            "raw_path": request.path.encode("latin-1"),
            "query_string": (request.query or "").encode("latin-1"),
            "root_path": "",
            "headers": headers,
            "client": (request.remote_ip or "127.0.0.1", 0),
            "server": (host, int(port) if port.isdigit() else 80),
        }

    async def receive(self) -> dict[str, Any]:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self.handler.request.body or b"", "more_body": False}
        await self.disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        handler = self.handler
        if message["type"] == "http.response.start":
            handler.set_status(int(message["status"]))
            for raw_name, raw_value in message.get("headers") or []:
                name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
                if name.lower() == "content-type":
                    self.content_type = value
                    handler.set_header(name, value)  # replaces tornado's default
                elif name.lower() not in _HOP_HEADERS:
                    handler.add_header(name, value)
        elif message["type"] == "http.response.body":
            body = message.get("body") or b""
            if body:
                handler.write(body)
            if message.get("more_body") and not self.disconnected.is_set():
                try:
                    await handler.flush()  # SSE: each event goes out as it is written
                except tornado.iostream.StreamClosedError:
                    self.disconnected.set()


def build_endpoint(app: Any) -> StreamableHttpBridge:
    """Our registry over Streamable HTTP: the same policy as the sidebar's, asking through a connected one."""
    from ..mcp.approvals import SidebarApprover
    from ..mcp.server import McpEndpoint
    from ..tools.executor import ToolExecutor

    runtime = app.runtime
    executor = ToolExecutor(
        app.registry,
        policy=runtime.policy,
        approver=SidebarApprover(app.sessions),
        settings=runtime.executor_settings,
        on_audit=runtime.audit,
    )
    served = McpEndpoint(executor, app.tool_context, disabled=list(app.disabled_tools))
    return StreamableHttpBridge(served.server())
