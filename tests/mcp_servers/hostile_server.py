"""An MCP stdio server for the reliability tests: ``python hostile_server.py``.

- ``notice`` returns the text in ``$HOSTILE_NOTICE`` (a test puts a prompt injection there: the text lives in
  the test, not here).
- ``wait`` says on stderr that it is waiting (with its pid) and never answers: a test kills the process
  mid-call.
- ``echo`` answers at once, to show the server works (again).
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("hostile", version="1.0")


@server.tool()
def notice() -> str:
    """Today's notice from the server."""
    return os.environ.get("HOSTILE_NOTICE", "(no notice)")


@server.tool()
async def wait() -> str:
    """Waits for a long time."""
    print(f"hostile server: pid {os.getpid()} waiting inside tools/call", file=sys.stderr, flush=True)
    await asyncio.sleep(3600)
    return "unreachable"


@server.tool()
def echo(text: str) -> str:
    """Returns the text."""
    return text


if __name__ == "__main__":
    server.run()
