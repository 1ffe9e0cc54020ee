"""``hdsp-agent audit [--since 1d] [--file PATH] [--json]``: sum up this user's audit log."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..audit.summary import parse_since, read_records, summarize
from ..config import load_cli_config
from . import EXIT_OK, EXIT_USAGE


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("audit", help="summarize the audit log (tool calls, approvals, tokens)")
    parser.add_argument("--since", help="only records from then on: 2h, 3d, 30m, or 2026-11-25[T09:00]")
    parser.add_argument("--file", help="the audit log (default: the server's, from its configuration)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    path = Path(args.file).expanduser() if args.file else load_cli_config().audit_log()
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as error:
        print(f"hdsp-agent: {error}", file=sys.stderr)
        return EXIT_USAGE
    summary = summarize(read_records(path, since))
    print(json.dumps(summary.public(), indent=1) if args.json else summary.text())
    return EXIT_OK
