"""MCP routes: ``/hdsp-agent/mcp`` (our tools over Streamable HTTP) and the status of the servers we use.

All behind Jupyter authentication: an MCP client sends the Jupyter token as ``Authorization: token <t>`` (or
``Bearer <t>``). The handlers only translate; ``mcp/`` decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import tornado.web

from .errors import RestError
from .rest_models import McpReport, McpServersQuery, McpTrustReply, McpTrustRequest
from .routes import _AgentHandler, route

if TYPE_CHECKING:
    from .mcp_endpoint import StreamableHttpBridge, TornadoAsgiExchange


def build_mcp_endpoint(app: Any) -> StreamableHttpBridge:
    """The ``/hdsp-agent/mcp`` endpoint (``McpServices`` calls this on the endpoint's first request)."""
    from .mcp_endpoint import build_endpoint  # the MCP SDK's server side loads only then

    return build_endpoint(app)


class McpEndpointHandler(_AgentHandler):
    """POST (JSON-RPC in), GET (the server's notification stream), DELETE (end the session)."""

    _exchange: TornadoAsgiExchange | None = None

    @tornado.web.authenticated
    async def post(self) -> None:
        await self._serve()

    @tornado.web.authenticated
    async def get(self) -> None:
        await self._serve()

    @tornado.web.authenticated
    async def delete(self) -> None:
        await self._serve()

    async def _serve(self) -> None:
        endpoint = self.agent.mcp.endpoint
        if endpoint is None:
            raise RestError("mcp_endpoint_disabled")
        from .mcp_endpoint import TornadoAsgiExchange  # the MCP SDK loads on the first request

        self._exchange = TornadoAsgiExchange(self)
        await endpoint.handle(self._exchange)
        if not self._finished:
            self.finish(set_content_type=self._exchange.content_type)

    def on_connection_close(self) -> None:
        if self._exchange is not None:
            self._exchange.disconnected.set()
        super().on_connection_close()


class McpServersHandler(_AgentHandler):
    """``GET /hdsp-agent/mcp/servers``: each server's state and tools.

    The configuration files are read again (edits apply without a restart) and the servers connected (a
    failed one tried again at once: someone asked), unless ``?refresh=0`` asks for the state as it is.
    """

    @tornado.web.authenticated
    async def get(self) -> None:
        if self.query(McpServersQuery).refresh != "0":
            self.agent.mcp.manager.reload()
            await self.agent.mcp.manager.refresh(retry_failed=True)
        self.reply(McpReport, self.agent.mcp.status())


class McpTrustHandler(_AgentHandler):
    """``POST /hdsp-agent/mcp/trust {"sha256"}``: trust the project's .hdsp/mcp.json as the user saw it."""

    @tornado.web.authenticated
    async def post(self) -> None:
        expected = self.body(McpTrustRequest).sha256
        try:
            state = self.agent.mcp.manager.trust_project(expected)
        except FileNotFoundError as error:
            raise RestError("mcp_project_file_missing", error) from None
        except ValueError as error:
            raise RestError("mcp_trust_changed", error) from None
        self.reply(McpTrustReply, {"project": state})


def build_mcp_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [
        (route("mcp"), McpEndpointHandler),
        (route("mcp/servers"), McpServersHandler),
        (route("mcp/trust"), McpTrustHandler),
    ]
