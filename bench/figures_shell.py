"""What capturing a shell command's changes costs on a 20,000-file project: the same small command
(``date +%s%N > out.txt``) with the change capture against without it, in the same run.

- overlay: run_terminal_command in the bubblewrap sandbox (overlay mounted, upper dir applied and recorded)
  against the same sandboxed command started without an overlay and without recording;
- stat walk: run_terminal_command approved to run unsandboxed (the project walked before and after) against
  plain ``bash -c``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from figures_tools import TREE_FILES, call, executor_for, make_tree
from harness import Figure, clock, compare

from hdsp_agent.sandbox import Sandbox, SandboxSettings
from hdsp_agent.tools.base import ToolContext
from hdsp_agent.tools.builtin.terminal import RunTerminalCommandTool

# Different bytes every time, so each run is a change to capture (same bytes are no change).
COMMAND = "date +%s%N > out.txt"


async def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    await process.wait()


async def shell_figures(workdir: Path) -> list[Figure]:
    root = workdir / "tree"
    make_tree(root)
    logs = {"session_dir": str(workdir / "logs")}
    figures: list[Figure] = []

    sandbox = Sandbox(SandboxSettings(layer="bubblewrap"))
    if sandbox.status.layer == "bubblewrap":
        tool = RunTerminalCommandTool(sandbox=sandbox)
        executor = executor_for(tool)
        ctx = ToolContext(root_dir=root, session_id="bench", client_context=logs)

        async def overlay_ours() -> float:
            start = clock()
            result = await call(executor, ctx, tool.name, {"command": COMMAND})
            assert "out.txt" in result.content, result.content  # the change was captured
            return clock() - start

        async def sandbox_only() -> float:
            start = clock()
            prepared = sandbox.prepare(COMMAND, root, root, "sandboxed", os.environ)
            try:
                await _run(prepared.argv, prepared.cwd, prepared.env)
            finally:
                prepared.cleanup()
            return clock() - start

        medians = await compare(overlay_ours, sandbox_only, repeats=9, warmup=2)
        figures.append(
            Figure(
                "shell changes overlay",
                f"sandboxed command + overlay capture, {TREE_FILES:,} files",
                "same sandboxed command, no capture",
                *medians,
                1.5,
            )
        )

    unsandboxed = RunTerminalCommandTool()  # no sandbox: unsandboxed, captured by a stat walk
    walk_executor = executor_for(unsandboxed)
    walk_ctx = ToolContext(root_dir=root, session_id="bench-walk", client_context=logs)

    async def walk_ours() -> float:
        start = clock()
        result = await call(walk_executor, walk_ctx, unsandboxed.name, {"command": COMMAND})
        assert "out.txt" in result.content, result.content
        return clock() - start

    async def plain_bash() -> float:
        start = clock()
        await _run(["bash", "-c", COMMAND], root)
        return clock() - start

    medians = await compare(walk_ours, plain_bash, repeats=9, warmup=2)
    figures.append(
        Figure(
            "shell changes walk",
            f"unsandboxed command + stat walk before/after, {TREE_FILES:,} files",
            "plain bash -c",
            *medians,
            50.0,
        )
    )
    return figures
