"""``make bench``: every figure, ours against its baseline in the same run; writes bench/results.json."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from figures_core import run_core_figures
from figures_server import startup, stream_relay
from harness import report


async def main() -> int:
    figures = await run_core_figures()
    figures.append(await stream_relay())
    figures.append(startup())
    print(report(figures, Path(__file__).parent / "results.json"))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
