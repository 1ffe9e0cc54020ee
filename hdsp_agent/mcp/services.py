"""The MCP parts of the Jupyter server extension, built once by the app and closed at shutdown.

- ``manager``: the MCP servers we are a client of; the runtime awaits ``manager.refresh`` before a turn's
  catalog.
- ``endpoint``: our registry served at ``/hdsp-agent/mcp`` (None when ``mcp_endpoint_enabled`` is off); calls
  pass the same policy as the sidebar's and ask through a connected sidebar.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..tools.declared import load_declared_tools
from ..tools.executor import ToolExecutor
from .approvals import SidebarApprover
from .http_endpoint import StreamableHttpBridge
from .manager import McpManager
from .server import McpEndpoint


@dataclass
class McpServices:
    manager: McpManager
    endpoint: StreamableHttpBridge | None
    config: Any

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
        endpoint = None
        if app.mcp_endpoint_enabled:
            runtime = app.runtime
            executor = ToolExecutor(
                app.registry,
                policy=runtime.policy,
                approver=SidebarApprover(app.sessions),
                settings=runtime.executor_settings,
            )
            served = McpEndpoint(executor, app.tool_context, disabled=list(app.disabled_tools))
            endpoint = StreamableHttpBridge(served.server())
        return cls(manager=manager, endpoint=endpoint, config=app)

    def status(self) -> dict[str, Any]:
        """``GET /hdsp-agent/mcp/servers``: the servers, the project file's trust, and declared tools that
        failed."""
        report = self.manager.status()
        report["declared_tool_problems"] = [
            problem.public() for problem in load_declared_tools(self.config).problems
        ]
        report["endpoint"] = {"enabled": self.endpoint is not None, "path": "/hdsp-agent/mcp"}
        return report

    async def close(self) -> None:
        if self.endpoint is not None:
            await self.endpoint.close()
        await self.manager.close()
