"""The ``hdsp-agent`` command: the same registry, pipeline and configuration as the server, from a shell.

Exit codes: 0 success, 1 the tool reported an error or was denied, 2 a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hdsp-agent", description="hdsp-agent tools from the command line.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in SUBCOMMANDS.items():
        commands.add_parser(name, help=help_text, add_help=False)
    return parser


# Each subcommand's module is imported only when it runs: the MCP and notebook stacks take seconds to import,
# which `policy check` or `tools list` should not pay.
SUBCOMMANDS = {
    "tools": "list tool definitions or call a tool",
    "run": "run the agent on one prompt, headless",
    "mcp": "serve hdsp-agent's tools over MCP (stdio), or manage MCP servers",
    "policy": "check permission decisions and show the effective rules",
    "audit": "summarize the audit log (tool calls, approvals, tokens)",
    "replay": "replay a notebook in a fresh kernel and compare its outputs",
}
_MODULES = {
    "tools": "tools_command",
    "run": "run_command",
    "mcp": "mcp_command",
    "policy": "policy_command",
    "audit": "audit_command",
    "replay": "replay_command",
}


def _full_parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hdsp-agent", description="hdsp-agent tools from the command line.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    importlib.import_module(f"{__name__}.{_MODULES[command]}").add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    parser = _full_parser(command) if command in _MODULES else build_parser()
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
