"""The user's MCP servers in a command-line run, from the same sources as the Jupyter server.

Those sources are the user's ``<jupyter config dir>/hdsp_agent/mcp.json``, the ``mcp_servers`` trait from the
Jupyter config files, and the project's ``.hdsp/mcp.json`` once trusted (``hdsp-agent mcp --trust-project``).
Nothing starts until a tool list is needed (lazy, as in the server), and every server started is stopped when
the command ends, so no MCP server process outlives it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from ..assembly import mcp_manager
from ..config import HdspAgentConfig
from ..mcp.manager import McpManager
from ..tools.registry import ToolRegistry


@asynccontextmanager
async def mcp_servers(
    registry: ToolRegistry, root: Path, config: HdspAgentConfig
) -> AsyncIterator[McpManager]:
    """The configured servers' tools go into ``registry`` on ``refresh()``; all are closed on the way out."""
    manager = mcp_manager(registry, root, config)
    try:
        yield manager
    finally:
        report_failures(manager)
        await manager.close()


def report_failures(manager: McpManager) -> None:
    """Say on stderr (the log) which servers could not be used and why, with their stderr tail."""
    for server in manager.status()["servers"]:
        if server["state"] == "error":
            message = server.get("message") or "failed"
            manager.log.warning("hdsp-agent: MCP server %s %s", server["name"], message)
