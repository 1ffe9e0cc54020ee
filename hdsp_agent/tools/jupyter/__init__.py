"""Notebook tools that work on the user's live notebook and kernel (see DESIGN.md §5).

``notebook_tools(runtime)`` returns them all, sharing one ``NotebookRuntime`` (conflict stamps, undo history,
executions still running after their call answered).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...documents.gateway import NotebookGateway, NotebookSnapshot
from ..base import Tool
from .kernel_control import InterruptKernelTool, RestartKernelTool
from .kernel_tools import ExecuteCodeTool, GetCellOutputTool, InspectVariablesTool, RunCellTool
from .notebook import (
    DeleteCellTool,
    EditCellTool,
    InsertCellTool,
    MoveCellTool,
    ReadCellTool,
    ReadNotebookTool,
)
from .notebook_runtime import NotebookRuntime
from .notebook_tool import NotebookTool
from .replay.tool import CheckReproducibilityTool

__all__ = ["NotebookGateway", "NotebookRuntime", "NotebookSnapshot", "close_notebook_tools", "notebook_tools"]


def notebook_tools(runtime: NotebookRuntime | None = None) -> list[Tool[Any]]:
    shared = runtime or NotebookRuntime()
    return [
        ReadNotebookTool(shared),
        ReadCellTool(shared),
        InsertCellTool(shared),
        EditCellTool(shared),
        DeleteCellTool(shared),
        MoveCellTool(shared),
        RunCellTool(shared),
        ExecuteCodeTool(shared),
        GetCellOutputTool(shared),
        InspectVariablesTool(shared),
        InterruptKernelTool(shared),
        RestartKernelTool(shared),
        CheckReproducibilityTool(shared),
    ]


async def close_notebook_tools(tools: Iterable[Tool[Any]]) -> None:
    """Stop waiting on executions still running (before the kernels go away at shutdown)."""
    runtimes = {id(tool.runtime): tool.runtime for tool in tools if isinstance(tool, NotebookTool)}
    for runtime in runtimes.values():
        await runtime.aclose()
