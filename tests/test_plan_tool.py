"""The ``todo`` tool: the agent's plan, returned as a checklist and as data the sidebar shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hdsp_agent.permissions.decision import ReadOnlyPolicy
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.plan import MAX_ITEMS, TodoTool
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio


async def call(arguments: object, tmp_path: Path) -> ToolResult:
    executor = ToolExecutor(ToolRegistry([TodoTool()]), policy=ReadOnlyPolicy())
    call = ToolCall(id="c1", name="todo", arguments=json.dumps(arguments))
    return await executor.execute(call, ToolContext(root_dir=tmp_path))


async def test_the_plan_comes_back_as_a_checklist_without_asking(tmp_path: Path) -> None:
    result = await call(
        {
            "items": [
                {"text": "Load the CSV", "status": "done"},
                {"text": "Plot", "status": "in_progress"},
                {"text": "Explain"},
            ]
        },
        tmp_path,
    )
    assert result.status == "ok"
    assert "Plan (1/3 done):\n[x] Load the CSV\n[~] Plot\n[ ] Explain" in result.content
    assert result.details["plan"][1] == {"text": "Plot", "status": "in_progress"}


async def test_a_bad_plan_is_refused_with_what_is_wrong(tmp_path: Path) -> None:
    too_long = await call({"items": [{"text": f"step {i}"} for i in range(MAX_ITEMS + 1)]}, tmp_path)
    assert too_long.status == "error" and too_long.error.code == "E_TOOL_INVALID_ARGS"
    bad_status = await call({"items": [{"text": "x", "status": "finished"}]}, tmp_path)
    assert bad_status.status == "error" and "status" in bad_status.error.message
