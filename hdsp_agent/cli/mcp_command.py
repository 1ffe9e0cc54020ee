"""``hdsp-agent mcp``: serve the tools over MCP stdio; ``--servers``, ``--trust-project`` for the client side.

Serving uses the same registry (``default_tools``), executor and policy as the Jupyter server, with Jupyter's
kernel, session and contents managers in this process, so notebook tools work. stdout carries the protocol, so
nothing else may print there. Nobody can answer an approval over stdio: calls that need one are declined with
a message saying so, unless the command runs with ``--approve all``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from ..assembly import assemble, mcp_manager
from ..config import HdspAgentConfig, load_cli_config
from ..mcp.manager import McpManager
from ..mcp.server import McpEndpoint
from ..permissions.approval import Approver, FixedApprover
from ..tools.base import ToolContext
from ..tools.jupyter import close_notebook_tools
from ..tools.jupyter.headless import headless_jupyter
from ..tools.registry import ToolRegistry

NOBODY_TO_ASK = (
    "this call needs the user's approval, and `hdsp-agent mcp` (stdio) has no one to ask; "
    "the administrator can "
    "allow the tool, or start the server with --approve all"
)


def add_parser(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="serve hdsp-agent's tools over MCP (stdio); or show / trust the MCP servers hdsp-agent uses",
        description="Without options: an MCP server on stdin/stdout with every hdsp-agent tool.",
    )
    mcp.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: cwd)")
    mcp.add_argument(
        "--approve",
        choices=("none", "all"),
        default="none",
        help="calls that need approval: decline them (default: nobody can be asked over stdio) or allow all",
    )
    action = mcp.add_mutually_exclusive_group()
    action.add_argument(
        "--servers",
        action="store_true",
        help="connect to the configured MCP servers and print their status (JSON)",
    )
    action.add_argument(
        "--trust-project",
        action="store_true",
        help="trust the project's .hdsp/mcp.json as it is now (it starts programs)",
    )
    mcp.set_defaults(handler=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    if not args.root.is_dir():
        print(f"hdsp-agent: --root {args.root} is not a directory", file=sys.stderr)
        return 2
    root = args.root.resolve()
    config = load_cli_config()
    # Logs go to stderr: stdout is the MCP channel.
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    if args.trust_project:
        return _trust_project(root, config)
    if args.servers:
        return asyncio.run(_print_servers(root, config))
    approver = FixedApprover(True) if args.approve == "all" else FixedApprover(False, reason=NOBODY_TO_ASK)
    asyncio.run(serve_stdio(root, config, approver))
    return 0


async def serve_stdio(root: Path, config: HdspAgentConfig, approver: Approver) -> None:
    from mcp.server.stdio import stdio_server

    async with headless_jupyter(root) as jupyter:

        def context(**overrides: Any) -> ToolContext:
            return ToolContext(
                root_dir=root,
                kernel_manager=jupyter.kernel_manager,
                session_manager=jupyter.session_manager,
                contents_manager=jupyter.contents_manager,
                **overrides,
            )

        # The same assembly as the server's (assembly.py): one sandbox, shared by the policy and the tools.
        built = assemble(config, root, context)
        registry = built.registry
        executor = built.executor(approver)
        server = McpEndpoint(executor, context, disabled=list(config.disabled_tools)).server()
        try:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            await close_notebook_tools(registry)


def _manager(root: Path, config: HdspAgentConfig) -> McpManager:
    return mcp_manager(ToolRegistry(), root, config)


async def _print_servers(root: Path, config: HdspAgentConfig) -> int:
    manager = _manager(root, config)
    try:
        await manager.refresh()
        print(json.dumps(manager.status(), indent=2, ensure_ascii=False))
    finally:
        await manager.close()
    return 0


def _trust_project(root: Path, config: HdspAgentConfig) -> int:
    manager = _manager(root, config)
    try:
        state = manager.trust_project()
    except FileNotFoundError as error:
        print(f"hdsp-agent: {error}", file=sys.stderr)
        return 1
    print(json.dumps({"project": state}, indent=2))
    return 0
