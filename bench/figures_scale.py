"""Scale (issue 26): a 2,000-cell notebook with 50 MB of outputs open in JupyterLab, the hdsp-agent sidebar
loaded; the agent's read, edit, insert and run of a small cell through the live bridge, each against the same
operation done by JupyterLab's own notebook model in the same page; and the edit's cost as the notebook grows
(500 → 2,000 cells, the same output per cell).

The Jupyter server (JupyterLab and hdsp-agent) runs in this process, so the agent's side is timed around the
tool call itself: ``ToolExecutor.execute`` of the notebook tools with the server's ``LiveNotebooks``
gateway — what ``read_notebook``, ``edit_cell``, ``insert_cell`` and ``run_cell`` do when the tab is open,
round trips to the browser included. The browser (Debian's Chromium) is driven by ``scale_browser.mjs``
(Playwright); the baseline is timed there around one ``page.evaluate`` doing the operation on the panel's
model, a round trip to the page as the agent's call makes one over the bridge. The notebooks are made in the
scratch directory at bench time (``scale_notebook.py``).

Ports: ``HDSP_UI_PORT`` (default 58765) for the server.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import secrets
import statistics
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nbformat
from harness import Figure, clock, compare
from scale_notebook import SMALL_CELL, write_notebook
from traitlets.config import Config

from hdsp_agent.documents.edits import SetCellSource
from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.tools.base import ToolCall, ToolError
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.jupyter import NotebookRuntime, notebook_tools
from hdsp_agent.tools.registry import ToolRegistry

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
LARGE, SMALL = 2_000, 500
OUTPUT_BYTES_PER_CELL = 25_000  # 50 MB over 2,000 cells
# The agent's operations on the 50 MB notebook take seconds each: few repetitions keep the group near 15 min.
REPEATS, WARMUP = 3, 1
TARGET_RATIO, TARGET_GROWTH = 1.5, 1.2


class AgentCallFailed(RuntimeError):
    """The agent's call answered with an error (e.g. the bridge's timeout): the figure says so."""


class Browser:
    """``scale_browser.mjs``: one JSON command per line, one JSON answer per line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def launch(cls) -> Browser:
        process = await asyncio.create_subprocess_exec(
            "node", str(BENCH / "scale_browser.mjs"),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**24,
        )  # fmt: skip
        return cls(process)

    async def ask(self, op: str, **arguments: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps({"op": op, **arguments}) + "\n").encode())
        await self.process.stdin.drain()
        line = await self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the browser driver ended during {op}")
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise RuntimeError(f"browser {op}: {answer.get('error')}")
        return answer

    async def timed(self, op: str, **arguments: Any) -> float:
        return float((await self.ask(op, **arguments))["seconds"])

    async def quit(self) -> None:
        if self.process.returncode is None:
            with_timeout = asyncio.wait_for(self.ask("quit"), 30)
            try:
                await with_timeout
            except (RuntimeError, TimeoutError):
                self.process.kill()
            await self.process.wait()


def _server_config(workdir: Path, token: str) -> Config:
    config = Config()
    config.ServerApp.jpserver_extensions = {"jupyterlab": True, "hdsp_agent": True}
    config.IdentityProvider.token = token
    config.LabApp.expose_app_in_browser = True  # window.jupyterapp: the baseline's way to the panel
    for name in ("workspaces_dir", "user_settings_dir", "app_settings_dir"):
        directory = workdir / name
        directory.mkdir()
        setattr(config.LabApp, name, str(directory))
    overrides = {
        "@jupyterlab/apputils-extension:notification": {"checkForUpdates": False, "fetchNews": "false"}
    }
    (workdir / "app_settings_dir" / "overrides.json").write_text(json.dumps(overrides))
    config.HdspAgentApp.probe_local_models = False
    config.HdspAgentApp.store_path = str(workdir / "sessions.sqlite3")
    config.HdspAgentApp.audit_log_path = str(workdir / "audit.jsonl")
    config.HdspAgentApp.permissions_file = str(workdir / "permissions.json")
    return config


async def _start_server(workdir: Path, root: Path, port: int, token: str) -> Any:
    from jupyter_server.serverapp import ServerApp

    ServerApp.clear_instance()
    app = ServerApp.instance(
        port=port, port_retries=0, ip="127.0.0.1", open_browser=False, allow_root=True,
        root_dir=str(root), config=_server_config(workdir, token), log_level="WARN",
    )  # fmt: skip
    app.init_signal = lambda: None
    app.initialize(argv=[], new_httpserver=True)
    app.start_app()
    await app._post_start()
    return app


class Agent:
    """The agent's side: notebook tools through the executor with the server's live gateway."""

    def __init__(self, serverapp: Any) -> None:
        self.extension = serverapp.web_app.settings["hdsp_agent"]
        self.runtime = NotebookRuntime()
        self.executor = ToolExecutor(ToolRegistry(notebook_tools(self.runtime)), approver=FixedApprover(True))
        self.ctx = self.extension.tool_context(session_id="bench-scale")
        self._calls = 0

    async def call(self, name: str, **arguments: Any) -> float:
        self._calls += 1
        call = ToolCall(id=f"scale-{self._calls}", name=name, arguments=json.dumps(arguments))
        start = clock()
        result = await self.executor.execute(call, self.ctx)
        elapsed = clock() - start
        if result.status != "ok":
            assert result.error is not None
            raise AgentCallFailed(
                f"{name} after {elapsed:.1f} s: {result.error.code}: {result.error.message}"
            )
        return elapsed

    async def bridge_edit_parts(self, path: str, cell_id: str, sources: Sources) -> dict[str, str]:
        """Where an edit's time goes: its two bridge round trips alone (``LiveNotebooks.read_cell`` and
        ``apply``, medians of ``REPEATS``), the rest of the call being the tool and the executor."""
        live = self.extension.live_notebooks
        reads, applies = [], []
        for _ in range(REPEATS):
            start = clock()
            read = await live.read_cell(path, cell_id)
            middle = clock()
            await live.apply(path, SetCellSource(cell_id=cell_id, source=sources.next()), read, read.version)
            reads.append(middle - start)
            applies.append(clock() - middle)
        return {
            "the bridge's read_cell alone": f"{statistics.median(reads) * 1000:.1f} ms",
            "the bridge's apply alone": f"{statistics.median(applies) * 1000:.1f} ms",
        }

    async def wait_for_tab(self, path: str) -> None:
        if await self.extension.live_notebooks.wait_for_holder(path, 120) is None:
            raise RuntimeError(f"the tab never announced {path} on the bridge")

    async def close(self) -> None:
        await self.runtime.aclose()


def _cell_ids(path: Path) -> list[str]:
    """Read before the notebook is opened: JupyterLab's autosave rewrites the file in place later."""
    return [str(cell.id) for cell in nbformat.read(path, as_version=4).cells]


class Sources:
    """Alternating sources, so every edit changes the cell."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.count = 0

    def next(self) -> str:
        self.count += 1
        return f"{self.base}\n# edit {self.count}"


async def _figure(
    name: str, what: str, ours: Callable[[], Awaitable[float]], baseline: Callable[[], Awaitable[float]]
) -> Figure:
    ours_median, baseline_median, extra = await _medians(ours, baseline)
    sys.stderr.write(f"scale: {name} {ours_median:.3f} s vs {baseline_median:.3f} s\n")
    return Figure(
        name=name,
        ours=f"{what} through the live bridge (ToolExecutor, LiveNotebooks)",
        baseline="the same on JupyterLab's notebook model in the page (page.evaluate)",
        ours_median=ours_median,
        baseline_median=baseline_median,
        target=TARGET_RATIO,
        extra=extra,
    )


async def _medians(
    ours: Callable[[], Awaitable[float]], baseline: Callable[[], Awaitable[float]]
) -> tuple[float, float, dict[str, Any]]:
    """Interleaved medians; when the agent's call fails, ours is infinite (the figure fails), the failure is
    kept beside it and the baseline is still measured."""
    try:
        ours_median, baseline_median = await compare(ours, baseline, repeats=REPEATS, warmup=WARMUP)
        return ours_median, baseline_median, {}
    except AgentCallFailed as error:
        baseline_median = statistics.median([await baseline() for _ in range(REPEATS)])
        return math.inf, baseline_median, {"ours failed": str(error)}


async def scale_figures(workdir: Path) -> list[Figure]:
    root = workdir / "root"
    root.mkdir()
    large = write_notebook(root / "large.ipynb", LARGE, LARGE * OUTPUT_BYTES_PER_CELL)
    small = write_notebook(root / "small.ipynb", SMALL, SMALL * OUTPUT_BYTES_PER_CELL)
    sizes = {path.name: f"{path.stat().st_size / 1e6:.1f} MB" for path in (large, small)}
    cell_ids = {path: _cell_ids(path) for path in (large, small)}
    assert nbformat.read(large, as_version=4).cells[0].source == SMALL_CELL
    token = secrets.token_hex(16)
    port = int(os.environ.get("HDSP_UI_PORT", "58765"))
    serverapp = await _start_server(workdir, root, port, token)
    browser = await Browser.launch()
    agent = Agent(serverapp)
    try:
        await browser.ask("start", url=f"http://127.0.0.1:{port}", token=token)
        for path in (small, large):
            opened = await browser.ask("open", path=path.name)
            await agent.wait_for_tab(path.name)
            sys.stderr.write(f"scale: {path.name} open in the browser ({opened['cells']} cells)\n")

        figures = []
        # Edit: one cell in the middle, by id for the agent, by index in the page (the same cell).
        middle = {path: LARGE // 2 if path == large else SMALL // 2 for path in (large, small)}
        edits = {path: Sources(f"# edited mid-notebook cell of {path.name}") for path in (large, small)}

        def agent_edit(path: Path) -> Callable[[], Awaitable[float]]:
            cell_id = cell_ids[path][middle[path]]
            return lambda: agent.call("edit_cell", path=path.name, cell_id=cell_id, source=edits[path].next())

        def page_edit(path: Path) -> Callable[[], Awaitable[float]]:
            return lambda: browser.timed(
                "edit", path=path.name, index=middle[path], source=edits[path].next()
            )

        # The edit at 500 cells first, before the 2,000-cell notebook is touched: a request the bridge gave up
        # on is still being answered by the tab for a while, and would be charged to whatever runs next.
        small_edit, page_small, small_extra = await _medians(agent_edit(small), page_edit(small))
        small_parts = await agent.bridge_edit_parts(small.name, cell_ids[small][middle[small]], edits[small])
        await browser.ask("close", path=small.name)

        figures.append(
            await _figure(
                "scale_read_2000", "read_notebook (brief)",
                lambda: agent.call("read_notebook", path=large.name),
                lambda: browser.timed("read", path=large.name),
            )
        )  # fmt: skip
        figures.append(await _figure("scale_edit_2000", "edit_cell", agent_edit(large), page_edit(large)))
        large_parts = await agent.bridge_edit_parts(large.name, cell_ids[large][middle[large]], edits[large])
        # Insert at the end: the other cells keep their indexes for the edits above.
        figures.append(
            await _figure(
                "scale_insert_2000", "insert_cell (at the end)",
                lambda: agent.call("insert_cell", path=large.name, source="y = 2"),
                lambda: browser.timed("insert", path=large.name, source="y = 2"),
            )
        )  # fmt: skip
        # Run: the notebook's first cell (`x = 1`) on the notebook's own kernel.
        first_id = cell_ids[large][0]
        figures.append(
            await _figure(
                "scale_run_2000", f"run_cell of `{SMALL_CELL}`",
                lambda: agent.call("run_cell", path=large.name, cell_id=first_id),
                lambda: browser.timed("run", path=large.name, index=0),
            )
        )  # fmt: skip
        # Growth: the agent's edit at 2,000 cells (the figure above) against the same at 500 (measured first).
        large_edit = figures[1]
        figures.append(
            Figure(
                name="scale_edit_growth",
                ours=f"edit_cell at {LARGE:,} cells ({sizes[large.name]})",
                baseline=f"edit_cell at {SMALL:,} cells ({sizes[small.name]}), the same output per cell",
                ours_median=large_edit.ours_median,
                baseline_median=small_edit,
                target=TARGET_GROWTH,
                extra={
                    **{f"at {SMALL:,} cells: {key}": value for key, value in small_extra.items()},
                    f"JupyterLab's own edit at {SMALL:,} cells": f"{page_small * 1000:.2f} ms",
                    **{f"at {SMALL:,} cells: {key}": value for key, value in small_parts.items()},
                    **{f"at {LARGE:,} cells: {key}": value for key, value in large_parts.items()},
                },
            )
        )
        figures[0].extra["notebooks"] = sizes
        # Where the read's time goes: the bridge's round trip alone (the tab's notebook, sent and parsed).
        bridge_read = []
        for _ in range(REPEATS):
            start = clock()
            try:
                await agent.extension.live_notebooks.read(large.name)
            except ToolError as error:
                bridge_read.append(math.inf)
                figures[0].extra["the bridge's read failed"] = str(error)
                break
            bridge_read.append(clock() - start)
        figures[0].extra["the bridge's read alone (LiveNotebooks.read)"] = (
            f"{statistics.median(bridge_read):.3f} s"
        )
        return figures
    finally:
        await agent.close()
        await browser.quit()
        await serverapp._cleanup()
        type(serverapp).clear_instance()
