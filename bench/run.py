"""``make bench``: every figure, ours against its baseline in the same run; writes bench/results.json."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from figures_core import run_core_figures
from figures_server import startup, stream_relay
from figures_tools import edit_figures, run_cell_figures, search_figures
from harness import report


async def main() -> int:
    figures = await run_core_figures()
    with tempfile.TemporaryDirectory(prefix="hdsp-bench-tools-") as scratch:
        figures += await search_figures(Path(scratch))
        figures += await edit_figures(Path(scratch))
        figures += await run_cell_figures(Path(scratch))
    figures.append(await stream_relay())
    figures.append(startup())
    print(report(figures, Path(__file__).parent / "results.json"))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
