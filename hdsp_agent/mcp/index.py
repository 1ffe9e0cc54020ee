"""``mcp_tools``: what the compact and standard profiles send instead of every MCP tool's schema.

A server's schemas can be thousands of tokens (the reference ``server-everything`` alone is about 1,400);
on a 4k–32k model they would be paid on every step of every turn, needed or not. The index is one small
entry whose description names the configured servers; a call connects the servers it asks about (the first
time they are needed: a turn that needs no MCP tool starts no server) and answers one line per tool, with its
parameters, so a small model can call ``server__tool`` by name right away; ``tool`` shows one tool's full
schema. The call itself then passes the executor like any other (validation, policy, approval): the index
only lists, it never calls.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ..tools.base import ErrorCode, Tool, ToolArgs, ToolContext, ToolError
from ..tools.definitions import parameters_schema
from ..tools.profiles import TOOL_INDEX

if TYPE_CHECKING:
    from .manager import McpManager

# One line per tool: the server's description is cut to its first sentence, at most this long.
SUMMARY_CHARS = 100


class McpToolsArgs(ToolArgs):
    server: str | None = Field(None, description="Only this server.")
    tool: str | None = Field(None, description="Show this tool's full parameters.")


class McpToolIndex(Tool[McpToolsArgs]):
    """The index of the MCP servers' tools. Build with ``tool_index`` (its description names the servers)."""

    name = TOOL_INDEX
    description = "List the tools of the user's MCP servers."
    args_model = McpToolsArgs
    # It reads the tool lists of servers already started (or allowed to start by a rule): nothing to ask
    # about. A server not started is only named, with how to start it (``mcp_start_server``, which asks).
    # The tools it lists ask on their own when called.
    read_only = True
    manager: McpManager

    async def run(self, args: McpToolsArgs, ctx: ToolContext) -> str:
        servers = self.manager.server_names()
        if args.tool:
            return self._one_tool(args.tool)
        if args.server is not None and args.server not in servers:
            raise ToolError(
                ErrorCode.INVALID_ARGS.value,
                f"no MCP server named {args.server!r}",
                f"Servers: {', '.join(servers) or 'none'}.",
            )
        wanted = [args.server] if args.server else servers
        listing = await self.manager.list_servers(wanted)
        return "\n".join(listing_lines(listing))

    def _one_tool(self, name: str) -> str:
        tool = self.manager.registry.get(name)
        if tool is None or not tool.on_demand:
            # Not listed yet (its server was never asked) or a typo: list first, the name comes from there.
            raise ToolError(
                ErrorCode.NOT_FOUND.value,
                f"no MCP tool named {name!r} is listed",
                f"Call {TOOL_INDEX} without 'tool' (or with 'server') to list the tools first.",
            )
        return f"{name}: {tool.description}\nParameters (JSON Schema): {json.dumps(parameters_schema(tool))}"


def listing_lines(listing: dict[str, tuple[list[Any], str | None]]) -> list[str]:
    """The index's answer: a line per tool, a note per server without tools, and how to go on."""
    from .manager import NOT_STARTED
    from .start import START_TOOL

    lines: list[str] = []
    for server, (tools, problem) in listing.items():
        if problem == NOT_STARTED:
            lines.append(
                f"[{server}: not started; its program runs outside the sandbox, so starting it asks the "
                f'user: call {START_TOOL}(server="{server}") to start it and list its tools]'
            )
        elif problem:
            lines.append(f"[{server}: not available: {problem}]")
        elif not tools:
            lines.append(f"[{server}: no tools]")
        lines.extend(_line(tool) for tool in tools)
    lines.append(
        "Call a tool by its name with its parameters (? marks optional ones); "
        f'{TOOL_INDEX}(tool="NAME") shows one tool\'s full schema.'
    )
    return lines


def tool_index(manager: McpManager) -> McpToolIndex:
    servers = ", ".join(manager.server_names())
    description = (
        f"List the tools of the MCP servers ({servers}), a line each; then call a tool by its name "
        "(server__tool)."
    )
    bound = type(McpToolIndex.__name__, (McpToolIndex,), {"description": description})
    index: McpToolIndex = bound()
    index.manager = manager
    return index


def _line(tool: Any) -> str:
    """``server__tool(a, b?) — First sentence of its description.``"""
    schema = parameters_schema(tool)
    required = set(schema.get("required") or [])
    params = ", ".join(name if name in required else f"{name}?" for name in (schema.get("properties") or {}))
    summary = _first_sentence(getattr(tool, "remote_description", "") or tool.description)
    return f"{tool.name}({params}) — {summary}"


def _first_sentence(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    end = line.find(". ")
    if end != -1:
        line = line[: end + 1]
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1].rstrip() + "…"
