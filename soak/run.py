"""``make soak``: the fault, hostile-input, prompt-injection and access suites, then the load figures.

``python soak/run.py [--turns N] [--only suites|concurrent|sequential]``; the figures of the parts that ran
replace theirs in ``soak/results.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from load import STEPS, concurrent_sessions, sequential_turns
from suites import run_suites, suites_healthy, suites_lines

RESULTS = Path(__file__).parent / "results.json"


def concurrent_line(figures: dict[str, Any]) -> str:
    ms = {key: figures[key] * 1000 for key in ("p50_step_s", "p99_step_s", "single_p50_step_s")}
    return (
        f"{figures['sessions']} concurrent sessions x {STEPS}-step loops: "
        f"{figures['completed']}/{figures['sessions']} completed ({figures['success_rate']:.0%}); "
        f"step p50 {ms['p50_step_s']:.0f} ms, p99 {ms['p99_step_s']:.0f} ms "
        f"(single session p50 {ms['single_p50_step_s']:.0f} ms)"
    )


def sequential_line(figures: dict[str, Any]) -> str:
    return (
        f"{figures['turns']} sequential turns: {figures['completed']} completed; "
        f"the {figures['measured_turns']} measured after warm-up: RSS {figures['rss_start_mb']:.0f} → "
        f"{figures['rss_end_mb']:.0f} MB (samples {figures['rss_samples_mb']}), "
        f"growth {figures['rss_growth_per_1000_turns_mb']:.1f} MB per 1,000 turns (target < 20); "
        f"before, the warm-up that fills the bounded cache of live conversations took RSS from "
        f"{figures['rss_cold_mb']:.0f} to {figures['rss_start_mb']:.0f} MB"
    )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000, help="measured sequential turns")
    parser.add_argument("--only", choices=("suites", "concurrent", "sequential"), help="run one part only")
    args = parser.parse_args()
    figures: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    healthy = True
    if args.only in (None, "suites"):
        figures["suites"] = suites = await asyncio.to_thread(run_suites)
        print("\n".join(suites_lines(suites)), flush=True)
        healthy &= suites_healthy(suites)
    if args.only in (None, "concurrent"):
        figures["concurrent"] = concurrent = await concurrent_sessions(50)
        print(concurrent_line(concurrent))
        healthy &= concurrent["success_rate"] == 1
    if args.only in (None, "sequential"):
        figures["sequential"] = sequential = await sequential_turns(args.turns)
        print(sequential_line(sequential))
        healthy &= sequential["completed"] == sequential["turns"]
    RESULTS.write_text(json.dumps(figures, indent=2))
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
