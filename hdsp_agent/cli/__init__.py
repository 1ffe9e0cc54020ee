"""The ``hdsp-agent`` command: the same registry, pipeline and configuration as the server, from a shell.

Exit codes: 0 success, 1 the tool reported an error or was denied, 2 a usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import mcp_command, policy_command, run_command, tools_command

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hdsp-agent", description="hdsp-agent tools from the command line.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    tools_command.add_parser(commands)
    run_command.add_parser(commands)
    mcp_command.add_parser(commands)
    policy_command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
