"""check_reproducibility: the agent's way to replay a notebook in a fresh kernel and read what differs."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from ....documents.gateway import notebook_path
from ....events import ToolProgressEvent
from ....tools.facts import ToolFacts, ToolWords
from ....user_text import user_template, user_text
from ...base import PermissionAction, PermissionKind, ToolArgs, ToolContext, ToolError, ToolOutput
from ..notebook_tool import NotebookTool, path_field
from . import replay_notebook

DEFAULT_BUDGET_SECONDS = 300.0
MAX_BUDGET_SECONDS = 3600.0
# Starting and stopping the kernel, reading the notebook: beyond the cells' own budget.
SETUP_ALLOWANCE_SECONDS = 90.0
E_REPLAY_FAILED = "E_REPLAY_FAILED"


class CheckReproducibilityArgs(ToolArgs):
    path: str | None = path_field()
    timeout: float = Field(
        default=DEFAULT_BUDGET_SECONDS,
        gt=0,
        le=MAX_BUDGET_SECONDS,
        description="Seconds all cells together may take; cells after it are not compared.",
    )


class CheckReproducibilityTool(NotebookTool[CheckReproducibilityArgs]):
    name = "check_reproducibility"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It runs the notebook's code again, in a new kernel"),
        changes="kernel",
        profiles=frozenset({"full", "standard"}),
        needs="notebook",
        words=ToolWords(
            question=user_template("Run the notebook again in a new kernel to check it reproduces?"),
            statement=user_template("Check that the notebook reproduces"),
            question_with_subject=user_template("Run %1 again in a new kernel to check it reproduces?"),
            statement_with_subject=user_template("Check that %1 reproduces"),
        ),
    )
    description = (
        "Replay the notebook top to bottom in a new kernel of its kernelspec (never the user's kernel) and"
        " compare each cell's outputs with the saved ones. Returns the cells that differ and the cause of"
        " each (a name used before its defining cell, a variable from a deleted or edited cell, out-of-order"
        " runs, a file read before it is written, unseeded randomness, the environment). Runs the code."
    )
    args_model = CheckReproducibilityArgs

    def time_limit(self, args: CheckReproducibilityArgs) -> float:
        return args.timeout + SETUP_ALLOWANCE_SECONDS

    def permission(self, args: CheckReproducibilityArgs, ctx: ToolContext) -> PermissionAction:
        path = notebook_path(ctx, args.path)
        return PermissionAction(PermissionKind.KERNEL, path, f"replay every cell of {path} in a new kernel")

    async def run(self, args: CheckReproducibilityArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        # The notebook as the user sees it: a live tab's outputs, else the file's.
        notebook = await self.runtime.read(ctx, path, "peek")
        working_dir = (Path(ctx.root_dir) / path).parent

        def progress(position: int, total: int, index: int) -> None:
            ctx.emit(
                ToolProgressEvent(
                    call_id=ctx.call_id,
                    message=user_text("replaying cell %1 (%2 of %3)", index, position + 1, total),
                )
            )

        try:
            report = await replay_notebook(
                path, notebook, working_dir, args.timeout, progress, lambda: ctx.cancel.cancelled
            )
        except (OSError, RuntimeError) as error:
            raise ToolError(
                E_REPLAY_FAILED, user_text("the replay could not start a kernel: %1", str(error))
            ) from error
        return ToolOutput(report.compact_text(), {"replay": report.as_dict()})
