"""Replay a notebook in a fresh kernel and say which cells do not reproduce their saved outputs, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .report import Finding, ReplayReport, build_report
from .runner import ReplayProgress, replay_in_fresh_kernel

__all__ = ["Finding", "ReplayReport", "replay_notebook"]


async def replay_notebook(
    path: str,
    notebook: Any,
    working_dir: Path,
    budget_seconds: float,
    progress: ReplayProgress | None = None,
    canceled: Any = lambda: False,
) -> ReplayReport:
    run = await replay_in_fresh_kernel(notebook, working_dir, budget_seconds, progress, canceled)
    return build_report(path, notebook, run)
