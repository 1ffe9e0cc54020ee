"""``hdsp-agent replay NOTEBOOK [--timeout S] [--json]``: would this notebook give its saved results from a
clean start? Replays it in a new kernel (the one its kernelspec names) and lists the cells that differ.

Running the command is the approval to run the notebook's code, as running its cells would be. Exit code 0:
every run cell reproduces; 1: differences (or the replay stopped early); 2: usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import nbformat

from ..tools.jupyter.replay import replay_notebook
from ..tools.jupyter.replay.tool import DEFAULT_BUDGET_SECONDS
from . import EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("replay", help="replay a notebook in a fresh kernel and compare its outputs")
    parser.add_argument("notebook", help="the .ipynb file")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_BUDGET_SECONDS, help="seconds for all cells together"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    path = Path(args.notebook).expanduser()
    try:
        notebook = nbformat.read(path, as_version=4)
    except (OSError, ValueError) as error:
        print(f"hdsp-agent: cannot read {path}: {error}", file=sys.stderr)
        return EXIT_USAGE

    def progress(position: int, total: int, index: int) -> None:
        if not args.quiet:
            print(f"replaying cell {index} ({position + 1} of {total})", file=sys.stderr, flush=True)

    report = asyncio.run(replay_notebook(str(path), notebook, path.resolve().parent, args.timeout, progress))
    print(json.dumps(report.as_dict(), indent=1) if args.json else report.compact_text())
    return EXIT_OK if report.reproducible else EXIT_TOOL_ERROR
