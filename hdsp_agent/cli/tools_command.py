"""``hdsp-agent tools list`` and ``hdsp-agent tools call``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import uuid
from pathlib import Path
from typing import Any

from ..assembly import assemble
from ..config import HdspAgentConfig, load_cli_config
from ..permissions.approval import Approver
from ..tools.base import ToolCall, ToolContext, ToolResult
from ..tools.defaults import default_registry
from ..tools.definitions import EXPORT_FORMATS, export
from ..tools.jupyter import close_notebook_tools
from ..tools.jupyter.headless import headless_jupyter
from .approvers import approver_for
from .mcp_servers import mcp_servers


def add_parser(commands: Any) -> None:
    tools = commands.add_parser("tools", help="list tool definitions or call a tool")
    actions = tools.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser("list", help="print every tool's definition")
    listing.add_argument("--format", choices=EXPORT_FORMATS, default="openai")
    listing.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: cwd)")
    listing.set_defaults(handler=list_tools)

    call = actions.add_parser(
        "call", help="run one tool call through the full pipeline; prints the result JSON"
    )
    call.add_argument("name", help="tool name")
    call.add_argument("arguments", help="the arguments as a JSON object (as a model would send them)")
    call.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: cwd)")
    call.add_argument(
        "--approve",
        choices=("ask", "all", "none"),
        default="ask",
        help="answer approval requests: ask on the terminal (default), approve all, or decline all",
    )
    call.set_defaults(handler=call_tool)


def _check_root(root: Path) -> Path | None:
    if not root.is_dir():
        print(f"hdsp-agent: --root {root} is not a directory", file=sys.stderr)
        return None
    return root.resolve()


def list_tools(args: argparse.Namespace) -> int:
    if _check_root(args.root) is None:
        return 2
    config = load_cli_config()
    registry = default_registry(config)
    catalog = registry.catalog(disabled=config.disabled_tools)
    print(export(catalog, args.format), end="" if args.format == "markdown" else "\n")
    return 0


async def _execute_with_jupyter(
    call: ToolCall, root: Path, config: HdspAgentConfig, approver: Approver
) -> ToolResult:
    """One call with Jupyter's managers (notebook tools) and the user's MCP servers (`server__tool`) at hand.

    Kernels and MCP servers it starts are shut down after. The MCP servers are started only when the tool is
    not one of ours, so calling a built-in tool starts no program.
    """
    async with headless_jupyter(root) as jupyter:
        built = assemble(
            config,
            root,
            lambda **overrides: ToolContext(
                root_dir=root,
                kernel_manager=jupyter.kernel_manager,
                session_manager=jupyter.session_manager,
                contents_manager=jupyter.contents_manager,
                **overrides,
            ),
        )
        registry = built.registry
        async with mcp_servers(registry, root, config) as servers:
            if registry.get(call.name) is None:
                await servers.refresh()
            ctx = built.runtime.tool_context()
            catalog = registry.catalog(ctx, disabled=config.disabled_tools)
            try:
                return await built.executor(approver).execute(call, ctx, catalog)
            finally:
                await close_notebook_tools(registry)


def call_tool(args: argparse.Namespace) -> int:
    root = _check_root(args.root)
    if root is None:
        return 2
    config = load_cli_config()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    call = ToolCall(id=f"cli-{uuid.uuid4().hex[:12]}", name=args.name, arguments=args.arguments)
    # The same assembly as the server's (assembly.py): one sandbox, shared by the policy and the tools.
    result = asyncio.run(_execute_with_jupyter(call, root, config, approver_for(args.approve)))
    print(json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=2))
    return 0 if result.ok else 1
