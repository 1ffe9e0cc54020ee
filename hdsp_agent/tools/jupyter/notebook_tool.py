"""What every notebook tool shares: the runtime, the ``path`` argument, and how runs are reported."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, Field

from ...documents.edits import cell_source, cell_words
from ...events import ToolProgressEvent
from ...user_text import UserText, user_text
from ..base import Tool, ToolContext, ToolError, ToolOutput
from .executions import ExecutionRecord, ProgressHandler
from .kernel import E_KERNEL_DIED, E_NO_KERNEL
from .notebook_runtime import NotebookRuntime
from .outputs import render_outputs, stdin_was_requested

ArgsT = TypeVar("ArgsT", bound=BaseModel)

PATH_DESCRIPTION = "Notebook path (default: the active notebook)."
# Budgets for outputs in a run result (characters); get_cell_output pages the rest.
OUTPUT_CHARS_PER_OUTPUT = 8_000
OUTPUT_CHARS_PER_CALL = 20_000


def path_field() -> Any:
    return Field(default=None, description=PATH_DESCRIPTION)


class NotebookTool(Tool[ArgsT]):
    """A tool working on notebooks through the shared ``NotebookRuntime``."""

    def __init__(self, runtime: NotebookRuntime) -> None:
        self.runtime = runtime

    async def live_cell(self, ctx: ToolContext, path: str, cell_id: str) -> tuple[UserText, str]:
        """A cell as the user knows it now ("cell 4 (df.head())", from the open tab or the file) and its
        source: what an approval card names instead of the id."""
        read = await (await self.runtime.open(ctx, path)).read_cell(cell_id)
        source = cell_source(read.cell)
        return cell_words(read.index, source), source


def no_kernel_error(path: str) -> ToolError:
    return ToolError(
        E_NO_KERNEL,
        user_text("no kernel is running for %1", path),
        user_text("Run a cell first (run_cell starts one)."),
    )


def vision_enabled(ctx: ToolContext) -> bool:
    """Whether the model reads images (the sidebar says so in the message context)."""
    return bool(ctx.client_context.get("vision"))


def output_paging_hint(handle: str) -> str:
    return f'call get_cell_output with cell_id "{handle}" and offset/limit'


def progress_reporter(ctx: ToolContext) -> ProgressHandler:
    def report(line: str, elapsed: float) -> None:
        ctx.emit(
            ToolProgressEvent(
                call_id=ctx.call_id, message=line or user_text("running…"), elapsed=round(elapsed, 1)
            )
        )

    return report


def run_label(record: ExecutionRecord, index: int | None) -> str:
    if record.cell_id is None:
        return "The code"
    return f"Cell {record.cell_id}" + (f" (index {index})" if index is not None else "")


def raise_if_failed(record: ExecutionRecord, label: str) -> None:
    """A finished run without a reply (the kernel died, the run was stopped) is an error for the model."""
    if record.state == "died":
        raise ToolError(
            E_KERNEL_DIED,
            user_text("the kernel died while running %1: %2", label[0].lower() + label[1:], record.problem),
            user_text(
                "Restart the kernel with restart_kernel (its variables are gone), then "
                "re-run the cells you need."
            ),
        )
    if record.state in ("failed", "canceled"):
        raise ToolError(
            "E_EXECUTION_FAILED", user_text("%1 could not be run: %2", label, record.problem or record.state)
        )


def status_line(record: ExecutionRecord, label: str, finished: bool, waited: float) -> str:
    count = f", execution count {record.execution_count}" if record.execution_count is not None else ""
    if not finished and record.state == "queued":
        return (
            f"{label} is waiting for the kernel, which is still busy with another execution "
            f"({waited:g} s so far). "
            "It runs when the kernel is free."
        )
    if not finished:
        return f"{label} is still running after {waited:g} s{count}. It keeps running in the kernel" + (
            "; its outputs go into the cell when it finishes." if record.cell_id else "."
        )
    verdict = {
        "ok": "finished",
        "error": "raised an error",
        "aborted": "was not run (an earlier error aborted it)",
    }
    return f"{label} {verdict.get(record.state, record.state)}{count} ({record.elapsed:.1f} s)."


def run_report(
    record: ExecutionRecord, *, finished: bool, index: int | None, ctx: ToolContext, waited: float
) -> ToolOutput:
    """A run's result for the model: status line, outputs within budget, and what to do next."""
    label = run_label(record, index)
    if finished:
        record.reported = True
        raise_if_failed(record, label)
    rendered = render_outputs(
        record.collector.outputs,
        vision=vision_enabled(ctx),
        paging_hint=output_paging_hint(record.handle),
        per_output_chars=OUTPUT_CHARS_PER_OUTPUT,
        total_chars=OUTPUT_CHARS_PER_CALL,
        redact=ctx.redact,
    )
    lines = [status_line(record, label, finished, waited)]
    if rendered.text.strip():
        lines += ["--- output ---" if finished else "--- output so far ---", rendered.text]
    elif finished:
        lines.append("(no output)")
    if stdin_was_requested(record.collector.outputs):
        lines.append(
            "Note: input() is not available: nobody can type into the kernel. Put the values in the code."
        )
    if record.document_error:
        lines.append(f"Note: the outputs could not be written into the notebook: {record.document_error}")
    if not finished:
        lines.append(
            f'Call get_cell_output with cell_id "{record.handle}" to wait for the rest, '
            "or interrupt_kernel to stop it."
        )
    details: dict[str, Any] = {
        "path": record.path,
        "cell_id": record.cell_id,
        "handle": record.handle,
        "index": index,
        "status": record.state if finished else ("queued" if record.state == "queued" else "running"),
        "execution_count": record.execution_count,
        "elapsed": round(record.elapsed, 2),
    }
    if rendered.images:
        details["images"] = [image.as_dict() for image in rendered.images]
    return ToolOutput("\n".join(lines), details)
