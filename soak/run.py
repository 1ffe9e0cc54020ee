"""``make soak``: load figures (faults and hostile input are pytest suites; see the README's reliability section)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from load import concurrent_sessions, sequential_turns


async def main() -> int:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    concurrent = await concurrent_sessions(50)
    sequential = await sequential_turns(turns)
    figures = {"concurrent": concurrent, "sequential": sequential}
    (Path(__file__).parent / "results.json").write_text(json.dumps(figures, indent=2))
    print(
        f"50 concurrent sessions x {5}-step loops: {concurrent['completed']}/50 completed "
        f"({concurrent['success_rate']:.0%}); step p50 {concurrent['p50_step_s'] * 1000:.0f} ms, "
        f"p99 {concurrent['p99_step_s'] * 1000:.0f} ms (single session p50 {concurrent['single_p50_step_s'] * 1000:.0f} ms)"
    )
    print(
        f"{sequential['turns']} sequential turns: {sequential['completed']} completed; RSS {sequential['rss_start_mb']:.0f} → "
        f"{sequential['rss_end_mb']:.0f} MB, growth {sequential['rss_growth_per_1000_turns_mb']:.1f} MB per 1,000 turns "
        f"(target < 20)"
    )
    healthy = concurrent["success_rate"] == 1 and sequential["completed"] == sequential["turns"]
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
