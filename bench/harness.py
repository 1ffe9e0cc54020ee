"""Measuring ours against a baseline in the same run: interleaved repetitions, warm-up, medians, ratios."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

Timed = Callable[[], Awaitable[float]]


@dataclass
class Figure:
    name: str
    ours: str
    baseline: str
    ours_median: float
    baseline_median: float
    target: float
    unit: str = "s"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.ours_median / self.baseline_median if self.baseline_median else float("inf")

    @property
    def met(self) -> bool:
        return self.ratio <= self.target

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio, "met": self.met}


async def compare(ours: Timed, baseline: Timed, *, repeats: int, warmup: int = 3) -> tuple[float, float]:
    """Medians of ``repeats`` runs each, alternating ours and the baseline so drift hits both alike."""
    for _ in range(warmup):
        await ours()
        await baseline()
    ours_times, baseline_times = [], []
    for _ in range(repeats):
        ours_times.append(await ours())
        baseline_times.append(await baseline())
    return statistics.median(ours_times), statistics.median(baseline_times)


def clock() -> float:
    return time.perf_counter()


def report(figures: list[Figure], out: Path, *, merge: bool = False) -> str:
    """The table of ``figures``; writes them to ``out`` (if ``merge``, replacing only same-named figures)."""
    rows = [figure.as_dict() for figure in figures]
    if merge and out.exists():
        fresh = {row["name"] for row in rows}
        rows = [row for row in json.loads(out.read_text()) if row["name"] not in fresh] + rows
    out.write_text(json.dumps(rows, indent=2))
    lines = [
        f"{'figure':<22} {'ours':>11} {'baseline':>11} {'ratio':>7} {'target':>7}  met",
        "-" * 68,
    ]
    for f in figures:
        lines.append(
            f"{f.name:<22} {_fmt(f.ours_median, f.unit):>11} {_fmt(f.baseline_median, f.unit):>11} "
            f"{f.ratio:>7.3f} {('≤ ' + format(f.target, 'g')):>7}  {'yes' if f.met else 'NO'}"
        )
        for key, value in f.extra.items():
            lines.append(f"    {key}: {value}")
    return "\n".join(lines)


def _fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.3f} ms" if value < 1 else f"{value:.3f} s"
    return f"{value:.1f} {unit}"
