"""Figures for the tools against the programs that bound them: rg, plain file I/O, jupyter_client."""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from pathlib import Path
from typing import Any

from harness import Figure, clock, compare

from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.edit.tools import SingleFindAndReplaceTool
from hdsp_agent.tools.builtin.search.codebase import CodebaseTool
from hdsp_agent.tools.builtin.search.ripgrep import find_rg
from hdsp_agent.tools.builtin.search.tools import FileGlobSearchTool, GrepSearchTool
from hdsp_agent.tools.executor import ExecutorSettings, ToolExecutor
from hdsp_agent.tools.jupyter import close_notebook_tools, notebook_tools
from hdsp_agent.tools.jupyter.headless import headless_jupyter
from hdsp_agent.tools.registry import ToolRegistry

TREE_FILES = 20_000
WORDS = ["alpha", "beta", "gamma", "delta", "frame", "model", "train", "score", "value", "index"]


def make_tree(root: Path) -> None:
    rng = random.Random(7)
    for number in range(TREE_FILES):
        folder = root / f"pkg{number % 100:02d}" / f"sub{number % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n".join(
            f"def f{i}_{number}(x):\n    return {rng.choice(WORDS)}_{rng.choice(WORDS)}(x)" for i in range(6)
        )
        if number == TREE_FILES // 2:
            body += "\nNEEDLE_rarest_token = 1\n"
        (folder / f"mod{number}.py").write_text(body + "\n")


async def run_process(*argv: str, cwd: Path) -> float:
    start = clock()
    process = await asyncio.create_subprocess_exec(*argv, cwd=cwd, stdout=asyncio.subprocess.PIPE)
    await process.communicate()
    return clock() - start


def executor_for(*tools: Any) -> ToolExecutor:
    # The model-facing budget is part of the tool's cost, so it stays at its default.
    return ToolExecutor(ToolRegistry(tools), approver=FixedApprover(True), settings=ExecutorSettings())


async def call(executor: ToolExecutor, ctx: ToolContext, name: str, arguments: dict[str, Any]) -> ToolResult:
    result = await executor.execute(
        ToolCall(id=uuid.uuid4().hex, name=name, arguments=json.dumps(arguments)), ctx
    )
    assert result.ok, result.error
    return result


async def search_figures(workdir: Path) -> list[Figure]:
    root = workdir / "tree"
    make_tree(root)
    rg = find_rg()
    ctx = ToolContext(root_dir=root)
    executor = executor_for(GrepSearchTool(), FileGlobSearchTool(), CodebaseTool(cache_dir=workdir / "cache"))

    async def grep_ours() -> float:
        start = clock()
        await call(executor, ctx, "grep_search", {"query": "NEEDLE_rarest_token"})
        return clock() - start

    async def grep_rg() -> float:
        return await run_process(
            rg, "--no-require-git", "--hidden", "-n", "NEEDLE_rarest_token", ".", cwd=root
        )

    async def glob_ours() -> float:
        start = clock()
        await call(executor, ctx, "file_glob_search", {"pattern": "**/*.py"})
        return clock() - start

    async def glob_rg() -> float:
        return await run_process(rg, "--no-require-git", "--hidden", "--files", "-g", "*.py", ".", cwd=root)

    figures = []
    grep = await compare(grep_ours, grep_rg, repeats=7, warmup=1)
    figures.append(Figure("grep", f"grep_search, {TREE_FILES:,} files", "rg, same flags", *grep, 1.3))
    glob = await compare(glob_ours, glob_rg, repeats=7, warmup=1)
    figures.append(Figure("glob", "file_glob_search **/*.py", "rg --files -g '*.py'", *glob, 1.3))

    start = clock()
    await call(executor, ctx, "codebase", {"query": "NEEDLE rarest token"})
    index_seconds = clock() - start

    async def query_ours() -> float:
        start = clock()
        await call(executor, ctx, "codebase", {"query": "NEEDLE rarest token"})
        return clock() - start

    query = await compare(query_ours, grep_rg, repeats=7, warmup=1)
    figures.append(
        Figure(
            "codebase query",
            "codebase (index warm)",
            "rg of the rarest term",
            *query,
            2.0,
            extra={"first query incl. indexing": f"{index_seconds:.2f} s"},
        )
    )
    return figures


async def edit_figures(workdir: Path) -> list[Figure]:
    root = workdir / "edit"
    root.mkdir()
    lines = [f"    value_{i} = compute(value_{i - 1}, {i})" for i in range(50_000)]
    target = root / "big.py"
    original = "def main():\n" + "\n".join(lines) + "\n"
    executor = executor_for(SingleFindAndReplaceTool())

    def fresh() -> ToolContext:
        # A new agent session each time: the file was rewritten by the benchmark, not changed behind its back.
        return ToolContext(root_dir=root, session_id=uuid.uuid4().hex)

    async def exact() -> float:
        target.write_text(original)
        start = clock()
        await call(
            executor,
            fresh(),
            "single_find_and_replace",
            {"filepath": "big.py", "old_string": lines[25_000], "new_string": lines[25_000] + "  # edited"},
        )
        return clock() - start

    async def fuzzy() -> float:
        target.write_text(original)
        mangled = "\n".join(line.strip() for line in lines[25_000:25_003])  # indentation lost
        start = clock()
        await call(
            executor,
            fresh(),
            "single_find_and_replace",
            {"filepath": "big.py", "old_string": mangled, "new_string": "pass"},
        )
        return clock() - start

    async def read_write() -> float:
        target.write_text(original)
        start = clock()
        content = target.read_text()
        target.write_text(content.replace(lines[25_000], lines[25_000] + "  # edited", 1))
        return clock() - start

    return [
        Figure(
            "edit exact",
            "single_find_and_replace, 50k lines",
            "read + write the file",
            *await compare(exact, read_write, repeats=9),
            2.0,
        ),
        Figure(
            "edit fuzzy",
            "same, indentation-mangled old_string",
            "read + write the file",
            *await compare(fuzzy, read_write, repeats=9),
            10.0,
        ),
    ]


async def run_cell_figures(workdir: Path) -> list[Figure]:
    root = workdir / "nb"
    root.mkdir()
    import nbformat

    nbformat.write(nbformat.v4.new_notebook(), root / "bench.ipynb")
    tools = notebook_tools()
    executor = ToolExecutor(ToolRegistry(tools), approver=FixedApprover(True))
    figures = []
    async with headless_jupyter(root) as jupyter:
        ctx = ToolContext(
            root_dir=root,
            kernel_manager=jupyter.kernel_manager,
            session_manager=jupyter.session_manager,
            contents_manager=jupyter.contents_manager,
        )
        await call(executor, ctx, "run_cell", {"path": "bench.ipynb", "code": "pass"})  # starts the kernel
        kernel_id = next(iter(jupyter.kernel_manager.list_kernel_ids()))
        client = jupyter.kernel_manager.get_kernel(kernel_id).client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        for label, code, target in (
            ("run_cell round trip", "pass", 1.5),
            ("run_cell 5 MB output", "for _ in range(50_000): print('x' * 99)", 1.5),
        ):

            async def ours(code: str = code) -> float:
                start = clock()
                result = await call(executor, ctx, "run_cell", {"path": "bench.ipynb", "code": code})
                assert len(result.content) <= 31_000, "the model's text stays within budget"
                return clock() - start

            async def baseline(code: str = code) -> float:
                start = clock()
                await client.execute_interactive(code, output_hook=lambda message: None, timeout=120)
                return clock() - start

            repeats = 9 if "round" in label else 3
            figures.append(
                Figure(
                    label,
                    f"run_cell ({code[:24]}…), file mode",
                    "execute_interactive, same kernel",
                    *await compare(ours, baseline, repeats=repeats, warmup=1),
                    target,
                )
            )
        client.stop_channels()
        await close_notebook_tools(tools)
    return figures
