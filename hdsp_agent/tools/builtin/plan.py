"""``todo``: the short plan the agent keeps for a multi-step task, shown to the user as a checklist.

The whole list is sent each time (no ids to keep in step); the sidebar shows the latest one. It changes
nothing
outside the conversation, so it runs without asking.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template
from ..base import Tool, ToolArgs, ToolContext, ToolOutput

MAX_ITEMS = 12
_MARKS = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]"}


class PlanItem(BaseModel):
    text: str = Field(min_length=1, max_length=200, description="One step, in a few words.")
    status: Literal["pending", "in_progress", "done"] = "pending"


class TodoArgs(ToolArgs):
    items: list[PlanItem] = Field(
        min_length=1,
        max_length=MAX_ITEMS,
        description="The whole plan, in order (replaces the previous one).",
    )


class TodoTool(Tool[TodoArgs]):
    name = "todo"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        words=ToolWords(
            question=user_template("Update the plan?"),
            statement=user_template("Update the plan"),
        ),
    )
    description = (
        "Keep a short plan for a task of several steps: send the whole list each time, the step you work on "
        "in_progress, finished ones done. The user sees it as a checklist. Skip it for one-step tasks."
    )
    args_model = TodoArgs
    read_only = True

    async def run(self, args: TodoArgs, ctx: ToolContext) -> ToolOutput:
        lines = [f"{_MARKS[item.status]} {item.text}" for item in args.items]
        done = sum(item.status == "done" for item in args.items)
        return ToolOutput(
            f"Plan ({done}/{len(args.items)} done):\n" + "\n".join(lines),
            {"plan": [item.model_dump() for item in args.items]},
        )
