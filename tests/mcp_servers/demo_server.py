"""A small MCP server (the SDK's MCPServer) the tests talk to: ``python demo_server.py stdio|http``.

Over HTTP it listens on 127.0.0.1, port 0, and prints ``PORT <n>`` on stdout once it accepts connections. Its
tools cover what the client must handle: text, an error, an image, an embedded resource, a tool list that
changes, progress, a call that hangs, a crash (with a last word on stderr) and the request's headers.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import EmbeddedResource, ImageContent, TextContent, TextResourceContents

# A 2x1 PNG (red, blue).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4zwAE/wEHAAH/4iOeWQAAAABJRU5ErkJggg=="
)

server = MCPServer("demo", version="1.0")


@server.prompt()
def review(path: str, focus: str = "bugs") -> str:
    """Review a file (a prompt: the sidebar's /mcp:demo:review)."""
    return f"Review {path}, looking for {focus}."


@server.tool()
def echo(text: str, times: int = 1) -> str:
    """Repeat the text."""
    return " ".join([text] * times)


@server.tool()
def fail(reason: str) -> str:
    """Always fails, saying why."""
    raise ToolError(f"failed on purpose: {reason}")


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A caption and a tiny image."""
    return [TextContent(type="text", text="a 2x1 picture"), Image(data=PNG, format="png").to_image_content()]


@server.tool()
def document() -> EmbeddedResource:
    """An embedded text resource."""
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(uri="memo://one", mime_type="text/plain", text="memo text"),
    )


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds a tool named 'added' and tells the client its tool list changed."""
    server.add_tool(lambda: "I was added", name="added", description="Added at run time.")
    await ctx.request_context.session.send_tool_list_changed()
    return "added a tool"


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Works for `seconds`, reporting progress every 0.1 s."""
    steps = max(1, int(seconds / 0.1))
    for step in range(steps):
        await asyncio.sleep(0.1)
        await ctx.report_progress(step + 1, steps, "working")
    return f"finished after {seconds} s"


@server.tool()
async def hang() -> str:
    """Never answers (until canceled)."""
    await asyncio.sleep(3600)
    return "unreachable"


@server.tool()
def crash() -> str:
    """Exits the server process at once."""
    print("demo server: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of a request header (HTTP only)."""
    headers = ctx.headers or {}
    return str(headers.get(name.lower(), "(none)"))


async def serve_http() -> None:
    import uvicorn

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http_server = uvicorn.Server(config)

    async def announce() -> None:
        while not http_server.started:
            await asyncio.sleep(0.02)
        print(f"PORT {listener.getsockname()[1]}", flush=True)

    await asyncio.gather(http_server.serve(sockets=[listener]), announce())


if __name__ == "__main__":
    if os.environ.get("DEMO_PID_FILE"):  # lets a test check that the process is gone afterwards
        with open(os.environ["DEMO_PID_FILE"], "a") as pid_file:
            pid_file.write(f"{os.getpid()}\n")
    if sys.argv[1:] == ["http"]:
        asyncio.run(serve_http())
    else:
        server.run()
