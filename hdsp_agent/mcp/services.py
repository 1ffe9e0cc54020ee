"""The MCP parts of the Jupyter server extension, built once by the app and closed at shutdown.

- ``manager``: the MCP servers we are a client of; the runtime awaits ``manager.refresh`` before a turn in
  the full profile, ``manager.load`` for tools loaded on demand in the others.
- ``endpoint``: our registry served at ``/hdsp-agent/mcp`` (None when ``mcp_endpoint_enabled`` is off); calls
  pass the same policy as the sidebar's and ask through a connected sidebar.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..tools.declared import load_declared_tools
from .manager import McpManager


@dataclass
class McpServices:
    manager: McpManager
    config: Any
    # Builds the endpoint on its first request: the MCP SDK's server side costs ~0.5 s of imports, which a
    # server nobody connects to should not pay at startup. The endpoint is HTTP (``web.mcp_endpoint``): the
    # web layer hands the factory in, this layer only keeps and closes what it built.
    endpoint_factory: Callable[[], Any] | None = None
    _endpoint: Any = field(default=None, init=False)

    @property
    def endpoint_enabled(self) -> bool:
        return self.endpoint_factory is not None

    @property
    def endpoint(self) -> Any:
        if self._endpoint is None and self.endpoint_factory is not None:
            self._endpoint = self.endpoint_factory()
        return self._endpoint

    @classmethod
    def for_app(cls, app: Any, manager: McpManager, endpoint_factory: Callable[[Any], Any]) -> McpServices:
        """From an ``HdspAgentApp`` whose registry, runtime and sessions are built, and its ``manager``
        (``assembly.mcp_manager``); ``endpoint_factory(app)`` builds the ``/hdsp-agent/mcp`` endpoint when it
        is enabled."""
        return cls(
            manager=manager,
            config=app,
            endpoint_factory=(lambda: endpoint_factory(app)) if app.mcp_endpoint_enabled else None,
        )

    def status(self) -> dict[str, Any]:
        """``GET /hdsp-agent/mcp/servers``: the servers, the project file's trust, and declared tools that
        failed."""
        report = self.manager.status()
        report["declared_tool_problems"] = [
            problem.public() for problem in load_declared_tools(self.config).problems
        ]
        report["endpoint"] = {"enabled": self.endpoint_enabled, "path": "/hdsp-agent/mcp"}
        return report

    async def close(self) -> None:
        if self._endpoint is not None:
            await self._endpoint.close()
        await self.manager.close()
