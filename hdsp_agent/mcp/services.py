"""The MCP parts of the Jupyter server extension, built once by the app and closed at shutdown.

- ``manager``: the MCP servers we are a client of; the runtime awaits ``manager.refresh`` before a turn's
  catalog.
- ``endpoint``: our registry served at ``/hdsp-agent/mcp`` (None when ``mcp_endpoint_enabled`` is off); calls
  pass the same policy as the sidebar's and ask through a connected sidebar.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..tools.declared import load_declared_tools
from .manager import McpManager

if TYPE_CHECKING:
    from ..web.mcp_endpoint import StreamableHttpBridge


@dataclass
class McpServices:
    manager: McpManager
    config: Any
    # Builds the endpoint on its first request: the MCP SDK's server side costs ~0.5 s of imports, which a
    # server nobody connects to should not pay at startup.
    endpoint_factory: Callable[[], StreamableHttpBridge] | None = None
    _endpoint: StreamableHttpBridge | None = field(default=None, init=False)

    @property
    def endpoint_enabled(self) -> bool:
        return self.endpoint_factory is not None

    @property
    def endpoint(self) -> StreamableHttpBridge | None:
        if self._endpoint is None and self.endpoint_factory is not None:
            self._endpoint = self.endpoint_factory()
        return self._endpoint

    @classmethod
    def for_app(cls, app: Any) -> McpServices:
        """From an ``HdspAgentApp`` whose registry, runtime and sessions are built."""
        manager = McpManager(
            app.registry,
            root_dir=Path(app.root_dir),
            trait_servers=dict(app.mcp_servers),
            denied=list(app.mcp_denied_servers),
            logger=app.log,
        )
        return cls(
            manager=manager,
            config=app,
            endpoint_factory=(lambda: _build_endpoint(app)) if app.mcp_endpoint_enabled else None,
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


def _build_endpoint(app: Any) -> StreamableHttpBridge:
    """Our registry over Streamable HTTP: the same policy as the sidebar's, asking through a connected one."""
    from ..tools.executor import ToolExecutor
    from .approvals import SidebarApprover
    from ..web.mcp_endpoint import StreamableHttpBridge
    from .server import McpEndpoint

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
