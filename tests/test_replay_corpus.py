"""Replay against the corpus: planted hidden-state causes are found at their cells, clean notebooks pass.

Each notebook is replayed in a real ipykernel (a new kernel per notebook, as the tool does).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import nbformat
import pytest

from hdsp_agent.tools.jupyter.replay import ReplayReport, replay_notebook
from tests.replay_corpus import Case, build_notebook, clean_cases, planted_cases

# Replays at once: the machine's cores are shared, and each replay is mostly waiting on its kernel.
CONCURRENT_REPLAYS = 3


async def _replay_all(cases: list[Case], root: Path) -> dict[str, ReplayReport]:
    gate = asyncio.Semaphore(CONCURRENT_REPLAYS)

    async def one(case: Case) -> tuple[str, ReplayReport]:
        directory = root / case.name
        path = build_notebook(case, directory)
        async with gate:
            report = await replay_notebook(path.name, nbformat.read(path, as_version=4), directory, 60)
        return case.name, report

    return dict(await asyncio.gather(*(one(case) for case in cases)))


def _root_finding(report: ReplayReport) -> tuple[int, str] | None:
    """The first finding that is not a consequence of an earlier one."""
    roots = [f for f in report.findings if f.cause != "follows_from"]
    return (roots[0].index, roots[0].cause) if roots else None


@pytest.mark.asyncio
async def test_replay_names_the_planted_cause_at_its_cell(tmp_path: Path) -> None:
    cases = planted_cases()
    assert len(cases) >= 30 and len({c.cause for c in cases}) == 6
    reports = await _replay_all(cases, tmp_path)
    found = {c.name: _root_finding(reports[c.name]) for c in cases}
    right = [c.name for c in cases if found[c.name] == (c.planted_cell, c.cause)]
    wrong = {c.name: (found[c.name], (c.planted_cell, c.cause)) for c in cases if c.name not in right}
    assert len(right) >= 28, wrong


@pytest.mark.asyncio
async def test_replay_flags_no_clean_notebook(tmp_path: Path) -> None:
    cases = clean_cases()
    assert len(cases) >= 30
    reports = await _replay_all(cases, tmp_path)
    flagged = {name: report.compact_text() for name, report in reports.items() if not report.reproducible}
    assert flagged == {}
    assert all(report.cells_compared > 0 for report in reports.values())
