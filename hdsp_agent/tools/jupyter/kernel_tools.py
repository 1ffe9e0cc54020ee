"""Running code on the notebook's live kernel: run_cell, execute_code, get_cell_output, inspect_variables."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

import nbformat
from pydantic import Field, field_validator, model_validator

from ...documents.contract import CellRead
from ...documents.edits import (
    E_NOT_A_CODE_CELL,
    SetCellSource,
    cell_source,
    cell_words,
    find_cell,
    new_cell,
)
from ...documents.gateway import notebook_path
from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template, user_text
from ..base import (
    ApprovalView,
    PermissionAction,
    PermissionKind,
    ToolArgs,
    ToolContext,
    ToolError,
    ToolOutput,
)
from .executions import ExecutionRecord
from .kernel import E_KERNEL_DIED, kernel_spec_language
from .notebook_runtime import KernelspecSource
from .notebook_tool import (
    NotebookTool,
    no_kernel_error,
    path_field,
    progress_reporter,
    raise_if_failed,
    run_label,
    run_report,
    status_line,
    vision_enabled,
)
from .outputs import output_summary, render_outputs
from .variables import InspectionError, format_variables, inspection_expression, parse_inspection

DEFAULT_WAIT_SECONDS = 60.0
MAX_WAIT_SECONDS = 3600.0
# Beyond its own wait, a call may need to start a kernel and read/write the notebook.
SETUP_ALLOWANCE_SECONDS = 60.0
INSPECT_WAIT_SECONDS = 15.0
E_CELL_RUNNING = "E_CELL_RUNNING"
E_KERNEL_BUSY = "E_KERNEL_BUSY"
E_NOT_SUPPORTED = "E_NOT_SUPPORTED"


def _wait_field(what: str) -> Any:
    return Field(
        default=DEFAULT_WAIT_SECONDS,
        gt=0,
        le=MAX_WAIT_SECONDS,
        description=f"Seconds to wait for {what} before answering 'running'.",
    )


class RunCellArgs(ToolArgs):
    path: str | None = path_field()
    cell_id: str | None = Field(default=None, description="An existing cell to run.")
    code: str | None = Field(
        default=None,
        description="Or code for a new cell, inserted after the active cell.",
    )
    timeout: float = _wait_field("the cell")

    @model_validator(mode="after")
    def _one_source(self) -> RunCellArgs:
        if (self.cell_id is None) == (self.code is None):
            raise ValueError("give exactly one of cell_id or code")
        return self


class RunCellTool(NotebookTool[RunCellArgs]):
    name = "run_cell"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It runs code in a notebook's kernel, which can change its variables"),
        changes="kernel",
        needs="notebook",
        words=ToolWords(
            question=user_template("Run a cell in the notebook?"),
            statement=user_template("Run a cell in the notebook"),
            question_with_subject=user_template("Run a cell in %1?"),
            statement_with_subject=user_template("Run a cell in %1"),
        ),
    )
    description = (
        "Run a cell on the notebook's kernel, as Shift+Enter does: an existing cell, or new code added as"
        " a cell. Returns the status and outputs."
    )
    args_model = RunCellArgs
    paging_hint = "page the outputs with get_cell_output (offset/limit)"

    def time_limit(self, args: RunCellArgs) -> float:
        return args.timeout + SETUP_ALLOWANCE_SECONDS

    def permission(self, args: RunCellArgs, ctx: ToolContext) -> PermissionAction:
        path = notebook_path(ctx, args.path)
        if args.code is not None:
            return PermissionAction(PermissionKind.KERNEL, path, args.code)
        assert args.cell_id is not None
        source = self.runtime.seen_source(ctx.session_id, path, args.cell_id)
        detail = (
            source if source is not None else f"run cell {args.cell_id} (its source has not been read yet)"
        )
        return PermissionAction(PermissionKind.KERNEL, path, detail)

    async def approval_view(
        self, args: RunCellArgs, ctx: ToolContext, action: PermissionAction | None
    ) -> ApprovalView:
        """The code that will run: the given code, else the cell's source as it is now (not its id)."""
        path = notebook_path(ctx, args.path)
        if args.code is not None or args.cell_id is None:
            preview = (await super().approval_view(args, ctx, action)).preview
            return ApprovalView(preview, user_text("runs code in %1", path))
        cell, source = await self.live_cell(ctx, path, args.cell_id)
        return ApprovalView(source or None, user_text("runs code in %1 of %2", cell, path))

    async def run(self, args: RunCellArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        document = await self.runtime.open(ctx, path)
        before: nbformat.NotebookNode | CellRead
        index: int | None
        if args.cell_id is not None:
            # One cell from an open tab, whatever the notebook's size (a missing file: the not-found error).
            read = await document.read_cell(args.cell_id)
            before, cell, index = read, read.cell, read.index
            if cell.cell_type != "code":
                raise ToolError(
                    E_NOT_A_CODE_CELL,
                    user_text("cell %1 is a %2 cell: nothing to run", args.cell_id, cell.cell_type),
                )
            running = self.runtime.executions.get(path, args.cell_id)
            if running is not None and not running.done:
                raise ToolError(
                    E_CELL_RUNNING,
                    user_text("cell %1 is still running from an earlier call", args.cell_id),
                    user_text(
                        ('Wait for it with get_cell_output (cell_id "%1") or stop it with interrupt_kernel.'),
                        args.cell_id,
                    ),
                )
            cell_id, code = args.cell_id, cell_source(cell)
            kernelspec: KernelspecSource = partial(_known, read.kernelspec)
        else:
            assert args.code is not None
            # After the cell in view or this turn's previous new cell (tools/jupyter/placement.py), reading
            # single cells only (O(cell)); the launcher's empty starter cell gets the code instead.
            place = await self.runtime.placement.place(ctx, path, document)
            if place.reuse is not None:
                cell_id, starter = str(place.reuse.cell.id), place.reuse
                changed = await document.change_cell(
                    SetCellSource(cell_id=cell_id, source=args.code),
                    user_text("add %1", cell_words(starter.index, args.code)),
                    starter,
                )
                before, index = starter, changed if changed is not None else starter.index
                kernelspec = partial(_known, starter.kernelspec)
            else:
                cell = new_cell("code", args.code)
                where = place.index if place.index >= 0 else None
                before = await document.insert(
                    cell, place.index, user_text("add %1", cell_words(where, args.code))
                )
                cell_id, index = cell.id, before.index
                # The last cell placing read carries the kernelspec: no second read for it.
                kernelspec = partial(_known, place.last.kernelspec) if place.last else document.kernelspec
            self.runtime.placement.placed(ctx, path, cell_id)
            code = args.code
        kernel_id = await self.runtime.kernel_id(ctx, path, kernelspec)
        assert kernel_id is not None
        await self.runtime.kernel_changes.before_run(ctx.session_id, path, kernel_id, ctx.kernel_manager)
        record = ExecutionRecord(handle=cell_id, path=path, kernel_id=kernel_id, code=code, cell_id=cell_id)
        stream = self.runtime.show_live(document, record, before=before)
        self.runtime.executions.start(
            record,
            ctx.kernel_manager,
            on_finish=partial(self.runtime.write_outputs, ctx, stream=stream),
            cancel=ctx.cancel,
        )
        if stream is not None and record.task is not None:
            record.task.add_done_callback(lambda _: stream.settle())
        finished = await record.wait(args.timeout, progress_reporter(ctx))
        report = run_report(record, finished=finished, index=index, ctx=ctx, waited=args.timeout)
        earlier = self._earlier_runs(path, cell_id, ctx.redact)
        if earlier:
            report.content += "\n" + earlier
        return report

    def _earlier_runs(self, path: str, current: str, redact: Callable[[str], str]) -> str:
        """Runs of this notebook that were still going when their call answered and have finished since."""
        notes = []
        for record in self.runtime.executions.unreported(path, exclude=current):
            record.reported = True
            summary = output_summary(record.collector.outputs, width=200, redact=redact) or "no output"
            notes.append(
                f"Note: {run_label(record, None).lower()} (still running at an earlier call) has finished: "
                f"{record.state}; {summary}. get_cell_output shows all of it."
            )
        return "\n".join(notes)


class ExecuteCodeArgs(ToolArgs):
    code: str = Field(description="Python code.")
    path: str | None = path_field()
    timeout: float = _wait_field("the code")


class ExecuteCodeTool(NotebookTool[ExecuteCodeArgs]):
    name = "execute_code"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It runs code in a notebook's kernel, which can change its variables"),
        changes="kernel",
        profiles=frozenset({"full", "standard"}),
        needs="notebook",
        words=ToolWords(
            question=user_template("Run code in the notebook's kernel?"),
            statement=user_template("Run code in the notebook's kernel"),
            question_with_subject=user_template("Run code in %1's kernel?"),
            statement_with_subject=user_template("Run code in %1's kernel"),
        ),
    )
    description = "Run code on the notebook's kernel without adding a cell: for quick checks."
    args_model = ExecuteCodeArgs
    paging_hint = "page the outputs with get_cell_output (offset/limit)"

    def time_limit(self, args: ExecuteCodeArgs) -> float:
        return args.timeout + SETUP_ALLOWANCE_SECONDS

    def permission(self, args: ExecuteCodeArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(PermissionKind.KERNEL, notebook_path(ctx, args.path), args.code)

    async def run(self, args: ExecuteCodeArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        document = await self.runtime.open(ctx, path)
        if not await document.exists():
            await document.read("peek")  # a missing notebook is an error: the read says it
        # Only the kernelspec matters here (which kernel to start), read only when no kernel runs yet.
        kernel_id = await self.runtime.kernel_id(ctx, path, document.kernelspec)
        assert kernel_id is not None
        handle = f"exec-{uuid.uuid4().hex[:8]}"
        await self.runtime.kernel_changes.before_run(ctx.session_id, path, kernel_id, ctx.kernel_manager)
        record = ExecutionRecord(handle=handle, path=path, kernel_id=kernel_id, code=args.code, cell_id=None)
        self.runtime.executions.start(record, ctx.kernel_manager, cancel=ctx.cancel, store_history=False)
        finished = await record.wait(args.timeout, progress_reporter(ctx))
        return run_report(record, finished=finished, index=None, ctx=ctx, waited=args.timeout)


class GetCellOutputArgs(ToolArgs):
    path: str | None = path_field()
    cell_id: str = Field(description="Cell id (or an execute_code id).")
    offset: int = Field(default=0, ge=0, description="First character.")
    limit: int = Field(default=20_000, ge=100, le=100_000, description="Characters to return.")
    timeout: float = Field(
        default=30.0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description="Seconds to wait for a running cell.",
    )


class GetCellOutputTool(NotebookTool[GetCellOutputArgs]):
    name = "get_cell_output"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        needs="notebook",
        words=ToolWords(
            question=user_template("Read a cell's output?"),
            statement=user_template("Read a cell's output"),
            question_with_subject=user_template("Read a cell's output in %1?"),
            statement_with_subject=user_template("Read a cell's output in %1"),
        ),
    )
    description = "Read a cell's output text by pages; waits for a cell still running."
    args_model = GetCellOutputArgs
    read_only = True
    paging_hint = "use a larger offset"

    def time_limit(self, args: GetCellOutputArgs) -> float:
        return args.timeout + SETUP_ALLOWANCE_SECONDS

    async def run(self, args: GetCellOutputArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        record = self.runtime.executions.get(path, args.cell_id)
        index: int | None = None
        if record is not None:
            finished = record.done or await record.wait(args.timeout, progress_reporter(ctx))
            if record.cell_id is not None:
                index = self.runtime.seen_index(ctx.session_id, path, record.cell_id)
            label = run_label(record, index)
            if finished:
                record.reported = True
                raise_if_failed(record, label)
            header = status_line(record, label, finished, record.elapsed)
            outputs: list[Any] = record.collector.outputs
        else:
            notebook = await self.runtime.read(ctx, path)
            index, cell = find_cell(notebook, args.cell_id)
            count = cell.get("execution_count")
            header = f"Cell {args.cell_id} (index {index}) as it is in the notebook" + (
                f", execution count {count}." if count is not None else "."
            )
            outputs = cell.get("outputs", [])
        rendered = render_outputs(
            outputs, vision=vision_enabled(ctx), paging_hint="", per_output_chars=None, total_chars=None
        )
        # Redacted before it is paged: offsets count the redacted text, so no page holds part of a secret.
        text = ctx.redact(rendered.text)
        start = min(args.offset, len(text))
        end = min(len(text), start + args.limit)
        lines = [header]
        if not text:
            lines.append("(no output)")
        elif start == len(text):
            lines.append(f"(offset {args.offset} is past the end: the output has {len(text)} characters)")
        else:
            page = text[start:end]
            # The separator line below already ends the page's last line.
            lines += [f"--- output, characters {start}–{end} of {len(text)} ---", page.removesuffix("\n")]
            if end < len(text):
                lines.append(f"[more: call get_cell_output with offset={end}]")
        details: dict[str, Any] = {
            "path": path,
            "cell_id": args.cell_id,
            "total_chars": len(text),
            "end": end,
        }
        if rendered.images:
            details["images"] = [image.as_dict() for image in rendered.images]
        return ToolOutput("\n".join(lines), details)


class InspectVariablesArgs(ToolArgs):
    path: str | None = path_field()
    names: list[str] | None = Field(default=None, description="Only these (default: all).")

    @field_validator("names")
    @classmethod
    def _identifiers(cls, names: list[str] | None) -> list[str] | None:
        bad = [name for name in names or [] if not name.isidentifier()]
        if bad:
            raise ValueError(f"not variable names: {', '.join(bad)}")
        return names


class InspectVariablesTool(NotebookTool[InspectVariablesArgs]):
    name = "inspect_variables"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        needs="notebook",
        words=ToolWords(
            question=user_template("Look at the kernel's variables?"),
            statement=user_template("Look at the kernel's variables"),
            question_with_subject=user_template("Look at the variables of %1?"),
            statement_with_subject=user_template("Look at the variables of %1"),
        ),
    )
    description = "List the kernel's variables with type, shape, dtype and DataFrame columns."
    args_model = InspectVariablesArgs
    read_only = True
    timeout = INSPECT_WAIT_SECONDS + SETUP_ALLOWANCE_SECONDS

    async def run(self, args: InspectVariablesArgs, ctx: ToolContext) -> str:
        path = notebook_path(ctx, args.path)
        kernel_id = await self.runtime.kernel_id(ctx, path, start=False)
        if kernel_id is None:
            raise no_kernel_error(path)
        language = await asyncio.to_thread(kernel_spec_language, ctx.kernel_manager, kernel_id)
        if language is not None and language != "python":
            raise ToolError(
                E_NOT_SUPPORTED,
                user_text("inspect_variables supports Python kernels only; this kernel runs %1", language),
                user_text("Use execute_code with the language's own way of listing variables."),
            )
        busy = self.runtime.executions.active_on(kernel_id)
        if busy:
            raise ToolError(
                E_KERNEL_BUSY,
                user_text("the kernel is busy running %1", run_label(busy[0], None).lower()),
                user_text("Wait for it with get_cell_output, or stop it with interrupt_kernel."),
            )
        handle = f"inspect-{uuid.uuid4().hex[:8]}"
        record = ExecutionRecord(
            handle=handle, path=path, kernel_id=kernel_id, code="", cell_id=None, reported=True
        )
        expression = {"variables": inspection_expression(args.names)}
        self.runtime.executions.start(
            record, ctx.kernel_manager, silent=True, store_history=False, user_expressions=expression
        )
        if not await record.wait(INSPECT_WAIT_SECONDS):
            raise ToolError(
                E_KERNEL_BUSY,
                user_text("the kernel did not answer in time (it is busy)"),
                user_text("Try again later."),
            )
        if record.state == "died":
            raise ToolError(
                E_KERNEL_DIED,
                user_text("the kernel died: %1", record.problem),
                user_text("Restart it with restart_kernel."),
            )
        try:
            described = parse_inspection(record.user_expressions.get("variables", {}))
        except InspectionError as error:
            raise ToolError(
                "E_INSPECTION_FAILED", user_text("the kernel could not list its variables: %1", error)
            ) from None
        return format_variables(described)


async def _known(kernelspec: dict[str, Any]) -> dict[str, Any]:
    """A kernelspec the call already read (with the cell it runs)."""
    return kernelspec
