"""Can I trust this result? Replay's speed against ``jupyter nbconvert --execute`` on the same notebook, and
the detection rates on the test corpora (planted hidden state, clean notebooks, fabricated numbers)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import nbformat
from harness import Figure, clock, compare

TESTS = Path(__file__).resolve().parent.parent / "tests"
if str(TESTS.parent) not in sys.path:
    sys.path.insert(0, str(TESTS.parent))

from hdsp_agent.agent.answer_numbers import check_numbers  # noqa: E402
from hdsp_agent.tools.jupyter.replay import replay_notebook  # noqa: E402
from tests.answer_corpus import answer_cases  # noqa: E402
from tests.replay_corpus import Case, Run, build_notebook, clean_cases, planted_cases  # noqa: E402

# A notebook of a typical analysis's length: 25 cells, some work in each, text and table-like outputs.
_BENCH_CELLS = [
    "import math, random, json\nrandom.seed(1)",
    *[
        f"block_{i} = [math.sin(x / {i + 1}) for x in range(20_000)]\n"
        f"print('block {i}', round(sum(block_{i}), 6), len(block_{i}))"
        for i in range(24)
    ],
]


async def _run(*command: str) -> float:
    start = clock()
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    await process.wait()
    return clock() - start


async def replay_speed(workdir: Path) -> Figure:
    case = Case("bench_replay", _BENCH_CELLS, [Run(i) for i in range(len(_BENCH_CELLS))])
    path = build_notebook(case, workdir)
    copy = workdir / "nbconvert_out.ipynb"

    async def ours() -> float:
        return await _run(sys.executable, "-m", "hdsp_agent.cli", "replay", str(path), "--quiet", "--json")

    async def baseline() -> float:
        return await _run(
            sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", str(path),
            "--output", str(copy),
        )  # fmt: skip

    ours_median, baseline_median = await compare(ours, baseline, repeats=5, warmup=1)
    return Figure(
        "replay vs nbconvert",
        "hdsp-agent replay (run + compare + causes)",
        "jupyter nbconvert --execute",
        ours_median,
        baseline_median,
        1.2,
        extra={"cells": len(_BENCH_CELLS)},
    )


async def replay_detection(workdir: Path) -> list[Figure]:
    planted, clean = planted_cases(), clean_cases()
    gate = asyncio.Semaphore(3)

    async def replay(case: Case) -> tuple[Case, list[tuple[int, str]]]:
        directory = workdir / case.name
        path = build_notebook(case, directory)
        async with gate:
            report = await replay_notebook(path.name, nbformat.read(path, as_version=4), directory, 60)
        return case, [(f.index, f.cause) for f in report.findings if f.cause != "follows_from"]

    results = await asyncio.gather(*(replay(case) for case in planted + clean))
    found = sum(1 for case, roots in results if case.cause and roots[:1] == [(case.planted_cell, case.cause)])
    flagged = sum(1 for case, roots in results if not case.cause and roots)
    by_cause: dict[str, str] = {}
    for cause in sorted({c.cause for c in planted if c.cause}):
        of_cause = [(c, roots) for c, roots in results if c.cause == cause]
        hits = sum(1 for c, roots in of_cause if roots[:1] == [(c.planted_cell, c.cause)])
        by_cause[cause] = f"{hits}/{len(of_cause)}"
    return [
        Figure(
            "replay: planted missed",
            "planted causes not named at their cell",
            "planted causes",
            len(planted) - found,
            len(planted),
            2 / 30,
            unit="nb",
            extra={"found": f"{found}/{len(planted)}", **by_cause},
        ),
        Figure(
            "replay: clean flagged",
            "clean notebooks with a finding",
            "clean notebooks",
            flagged,
            len(clean),
            0.0,
            unit="nb",
        ),
    ]


def number_detection() -> list[Figure]:
    cases = answer_cases()
    fabricated = [c for c in cases if c.fabricated]
    faithful_marks = [m for c in cases if not c.fabricated for m in check_numbers(c.answer, c.sources)]
    missed = 0
    for case in fabricated:
        marks = {m.text.strip(): m.found for m in check_numbers(case.answer, case.sources)}
        missed += marks.get((case.fabricated or "").strip(), True)
    wrongly = sum(1 for m in faithful_marks if not m.found)
    return [
        Figure("numbers: fabricated missed", "unmarked", "fabricated", missed, len(fabricated), 2 / 50, "n"),
        Figure("numbers: faithful marked", "marked", "faithful", wrongly, len(faithful_marks), 0.02, "n"),
    ]


async def trust_figures(workdir: Path) -> list[Figure]:
    return [
        await replay_speed(workdir / "speed"),
        *await replay_detection(workdir / "corpus"),
        *number_detection(),
    ]
