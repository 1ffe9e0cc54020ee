"""Starting an MCP server is a call the policy decides, not a side effect of listing or naming its tools.

A stdio server is a program that runs outside the sandbox, with the user's rights. The model's turn starts one
only through a call that passed the executor (policy, approval card, audit):

- ``mcp_start_server(server)``: what the ``mcp_tools`` index (and, in the full profile, this tool's own
  description) points the model to for a server not started yet. Its rule subject is the server's name, so
  "allow for this session" and "always" (saved as ``mcp_start_server(<server>)`` in the user's permissions
  file) work as for any call, and an administrator may pre-allow a server with the same rule in
  ``allow_rules``.
- a stand-in for ``server__tool`` called by name before its server started (``McpUnstartedTool``): the call
  is decided first, as an MCP tool's (it asks by default; the server's ``autoApprove`` does not apply to a
  server that is not running), and only once it is allowed does ``run`` start the server, resolve the name
  against what the server lists and run the real tool.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ..tools.base import (
    ErrorCode,
    PermissionAction,
    PermissionKind,
    Tool,
    ToolArgs,
    ToolContext,
    ToolError,
    ToolOutput,
)
from ..tools.declared import PassThroughArgs, SchemaTool
from ..tools.facts import ToolFacts, ToolWords
from ..tools.naming import split_tool_name
from ..user_text import user_template, user_text
from .config import McpServerSpec

if TYPE_CHECKING:
    from .manager import McpManager

START_TOOL = "mcp_start_server"


def launch_text(spec: McpServerSpec) -> str:
    """What starting ``spec`` runs, as the user reads it on the approval card."""
    if spec.url:
        return spec.url
    command = shlex.join([spec.command, *spec.args])
    return f"{command} (in {spec.cwd})" if spec.cwd else command


def start_action(spec: McpServerSpec) -> PermissionAction:
    """The policy's view of starting ``spec``: its name is the rule subject; the card shows the command."""
    return PermissionAction(
        PermissionKind.CUSTOM,
        spec.name,
        user_text(
            "starts the MCP server %1 (from %2): runs %3 outside the sandbox",
            repr(spec.name),
            spec.source,
            launch_text(spec),
        ),
    )


class McpStartArgs(ToolArgs):
    server: str = Field(description="The MCP server to start (a name from mcp_tools).")


class McpStartServer(Tool[McpStartArgs]):
    """``mcp_start_server``. Build with ``start_tool`` (its description names the servers)."""

    name = START_TOOL
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It starts an MCP server's program, outside the sandbox"),
        changes="other",
        profiles=frozenset({"compact", "standard", "full"}),
        words=ToolWords(
            question=user_template("Start an MCP server?"),
            statement=user_template("Start an MCP server"),
        ),
    )
    description = "Start one of the user's MCP servers so its tools can be called (asks the user)."
    args_model = McpStartArgs
    read_only = False
    # Loaded on demand: the compact and standard profiles do not send it; mcp_tools names it when needed.
    on_demand = True
    manager: McpManager

    def permission(self, args: McpStartArgs, ctx: ToolContext) -> PermissionAction | None:
        connection = self.manager.connections.get(args.server)
        if connection is None:
            raise ToolError(
                ErrorCode.INVALID_ARGS.value,
                f"no MCP server named {args.server!r}",
                f"Servers: {', '.join(self.manager.server_names()) or 'none'}.",
            )
        return start_action(connection.spec)

    async def run(self, args: McpStartArgs, ctx: ToolContext) -> str:
        from .index import listing_lines

        await self.manager.start(args.server)
        listing = await self.manager.list_servers([args.server])
        return "\n".join(listing_lines(listing))


def start_tool(manager: McpManager) -> McpStartServer:
    servers = ", ".join(manager.server_names())
    description = (
        f"Start one of the user's MCP servers ({servers}) so its tools can be called; the user is asked "
        "first. Returns the server's tools."
    )
    bound = type(McpStartServer.__name__, (McpStartServer,), {"description": description})
    tool: McpStartServer = bound()
    tool.manager = manager
    return tool


class McpUnstartedTool(SchemaTool):
    """A ``server__tool`` called by name whose server is not started. Build with ``unstarted_tool``."""

    manager: McpManager
    spec: McpServerSpec
    on_demand = True

    def permission(self, args: PassThroughArgs, ctx: ToolContext) -> PermissionAction | None:
        # The same subject as the real tool's (so its rules and grants apply), the start on the card.
        return PermissionAction(
            PermissionKind.CUSTOM,
            self.name,
            user_text(
                "MCP server %1 is not started: allowing this call first %2",
                repr(self.spec.name),
                start_action(self.spec).detail,
            ),
        )

    async def run(self, args: PassThroughArgs, ctx: ToolContext) -> ToolOutput | str:
        await self.manager.start(self.spec.name)
        real = self.manager.registry.get(self.name)
        if real is None or isinstance(real, McpUnstartedTool):
            listing = await self.manager.list_servers([self.spec.name])
            tools, problem = listing.get(self.spec.name, ([], None))
            known = ", ".join(tool.name for tool in tools) or "none"
            raise ToolError(
                ErrorCode.NOT_FOUND.value,
                f"the MCP server {self.spec.name!r} has no tool {split_tool_name(self.name)[1]!r}"
                + (f" ({problem})" if problem else ""),
                f"Its tools: {known}.",
            )
        # The real tool's schema now applies; the call itself was decided above.
        checked: Any = real
        if isinstance(real, SchemaTool):
            real.check_arguments(real.arguments(args))
        result: ToolOutput | str = await checked.run(args, ctx)
        return result


def unstarted_tool(manager: McpManager, spec: McpServerSpec, name: str) -> McpUnstartedTool:
    return McpUnstartedTool.create(
        name=name,
        description=f"A tool of the MCP server {spec.name!r}, which is not started yet (calling it asks).",
        read_only=False,
        manager=manager,
        spec=spec,
    )
