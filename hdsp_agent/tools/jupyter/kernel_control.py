"""Controlling the notebook's kernel: interrupt_kernel and restart_kernel."""

from __future__ import annotations

import asyncio

from ...documents.gateway import notebook_path
from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template
from ..base import PermissionAction, PermissionKind, ToolArgs, ToolContext
from .kernel import interrupt, restart
from .notebook_tool import NotebookTool, no_kernel_error, path_field, run_label


class KernelActionArgs(ToolArgs):
    path: str | None = path_field()


class InterruptKernelTool(NotebookTool[KernelActionArgs]):
    name = "interrupt_kernel"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It runs code in a notebook's kernel, which can change its variables"),
        changes="kernel",
        profiles=frozenset({"full", "standard"}),
        needs="notebook",
        words=ToolWords(
            question=user_template("Interrupt the notebook's kernel?"),
            statement=user_template("Interrupt the notebook's kernel"),
            question_with_subject=user_template("Interrupt %1's kernel?"),
            statement_with_subject=user_template("Interrupt %1's kernel"),
        ),
    )
    description = "Interrupt the code running on the notebook's kernel; variables are kept."
    args_model = KernelActionArgs

    def permission(self, args: KernelActionArgs, ctx: ToolContext) -> PermissionAction:
        path = notebook_path(ctx, args.path)
        return PermissionAction(PermissionKind.KERNEL, path, f"interrupt the kernel of {path}")

    async def run(self, args: KernelActionArgs, ctx: ToolContext) -> str:
        path = notebook_path(ctx, args.path)
        kernel_id = await self.runtime.kernel_id(ctx, path, start=False)
        if kernel_id is None:
            raise no_kernel_error(path)
        active = self.runtime.executions.active_on(kernel_id)
        await interrupt(ctx.kernel_manager, kernel_id)
        tasks = [record.task for record in active if record.task is not None]
        if tasks:
            # Give the interrupted runs a moment to report, so the answer can say how they ended.
            await asyncio.wait(tasks, timeout=5.0)
        lines = [f"Interrupted the kernel of {path}; its variables are kept."]
        for record in active:
            state = record.state if record.done else "still stopping"
            lines.append(f"{run_label(record, None)} was running: {state}. get_cell_output shows its output.")
        return "\n".join(lines)


class RestartKernelTool(NotebookTool[KernelActionArgs]):
    name = "restart_kernel"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It runs code in a notebook's kernel, which can change its variables"),
        changes="kernel",
        profiles=frozenset({"full"}),
        needs="notebook",
        words=ToolWords(
            question=user_template("Restart the notebook's kernel? Its variables are lost."),
            statement=user_template("Restart the notebook's kernel"),
            question_with_subject=user_template("Restart %1's kernel? Its variables are lost."),
            statement_with_subject=user_template("Restart %1's kernel"),
        ),
    )
    description = "Restart the notebook's kernel: all variables and imports are lost."
    args_model = KernelActionArgs

    def permission(self, args: KernelActionArgs, ctx: ToolContext) -> PermissionAction:
        path = notebook_path(ctx, args.path)
        return PermissionAction(
            PermissionKind.KERNEL, path, f"restart the kernel of {path}: all variables are lost"
        )

    async def run(self, args: KernelActionArgs, ctx: ToolContext) -> str:
        path = notebook_path(ctx, args.path)
        kernel_id = await self.runtime.kernel_id(ctx, path, start=False)
        if kernel_id is None:
            raise no_kernel_error(path)
        await self.runtime.executions.cancel_kernel(kernel_id, "the kernel was restarted")
        await restart(ctx.kernel_manager, kernel_id)
        return (
            f"Restarted the kernel of {path}: all variables and imports are gone. Re-run the cells you need."
        )
