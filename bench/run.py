"""``make bench``: every figure, ours against its baseline in the same run; writes bench/results.json.

``bench/run.py glob edit`` runs only the named groups (for measuring one fix); their figures replace the
same-named ones in results.json and the others are kept.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from figures_completion import completion_figures
from figures_core import loop_overhead, pipeline_overhead
from figures_lean import lean_figures
from figures_mentions import mention_figures
from figures_scale import scale_figures
from figures_server import startup, stream_relay
from figures_shell import shell_figures
from figures_tools import edit_figures, run_cell_figures, search_figures
from figures_trust import trust_figures
from figures_ttft import ttft_small_model
from harness import Figure, report


async def _startup(_: Path) -> list[Figure]:
    return [startup()]


async def _stream(_: Path) -> list[Figure]:
    return [await stream_relay()]


async def _ttft(_: Path) -> list[Figure]:
    return [await ttft_small_model()]


async def _one(make: Callable[[Path], Awaitable[Figure]], workdir: Path) -> list[Figure]:
    return [await make(workdir)]


GROUPS: dict[str, Callable[[Path], Awaitable[list[Figure]]]] = {
    "pipeline": lambda workdir: _one(pipeline_overhead, workdir),
    "loop": lambda workdir: _one(loop_overhead, workdir),
    "search": search_figures,  # grep, glob, codebase query (one 20,000-file tree)
    "mentions": mention_figures,  # the first "@" suggestions on a 20,000-file project vs a plain listing
    "edit": edit_figures,
    "shell": shell_figures,  # a small command on a 20,000-file project with its change capture vs without
    "run_cell": run_cell_figures,
    "stream": _stream,
    "startup": _startup,
    "lean": lean_figures,  # prompt tokens: first request per profile (vs the Continue CLI; with MCP); a task
    "ttft": _ttft,  # a new chat's first token over the session WebSocket on a 4k model
    "trust": trust_figures,  # replay vs nbconvert --execute; replay and numbers-check detection rates
    "completion": completion_figures,  # POST complete vs the raw FIM request; requests per 100 keystrokes
    "scale": scale_figures,  # 2,000 cells, 50 MB open in Chromium: the agent's live ops vs JupyterLab's
}


async def main(selected: list[str]) -> int:
    figures: list[Figure] = []
    for name in selected:
        with tempfile.TemporaryDirectory(prefix=f"hdsp-bench-{name}-") as scratch:
            figures += await GROUPS[name](Path(scratch))
    print(report(figures, Path(__file__).parent / "results.json", merge=selected != list(GROUPS)))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "groups", nargs="*", metavar="group", help=f"any of {', '.join(GROUPS)} (default: all)"
    )
    args = parser.parse_args()
    if unknown := set(args.groups) - set(GROUPS):
        parser.error(f"unknown group(s): {', '.join(sorted(unknown))}")
    sys.exit(asyncio.run(main(args.groups or list(GROUPS))))
