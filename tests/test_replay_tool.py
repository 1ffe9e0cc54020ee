"""check_reproducibility through the real executor on a real server: a new kernel, never the user's; asks
like running cells; progress; cancel; and ``hdsp-agent replay`` headless."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import psutil
import pytest
from test_notebook_tools import Agent, RecordingApprover, ok, write_notebook

from hdsp_agent.events import ToolProgressEvent
from hdsp_agent.tools.base import CancelToken
from tests.replay_corpus import Case, Run, build_notebook


def _kernel_processes() -> set[int]:
    return {
        p.pid
        for p in psutil.Process().children(recursive=True)
        if "ipykernel_launcher" in " ".join(p.cmdline()) or "ipykernel" in " ".join(p.cmdline())
    }


async def test_replay_runs_in_a_new_kernel_and_leaves_the_users_kernel_alone(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1\nprint(x)")
    approver = RecordingApprover()
    agent = Agent(jp_serverapp, jp_root_dir, approver=approver)
    try:
        defining = ok(await agent.call("run_cell", path="nb.ipynb", code="hidden = 41\nprint(hidden + 1)"))
        ok(await agent.call("delete_cell", path="nb.ipynb", cell_id=defining.details["cell_id"]))
        (user_kernel,) = jp_serverapp.kernel_manager.list_kernel_ids()
        # A cell that only worked because `hidden`, from a deleted cell, lived in the user's kernel.
        ok(await agent.call("run_cell", path="nb.ipynb", code="print(hidden * 2)"))
        before = _kernel_processes()
        result = ok(await agent.call("check_reproducibility", path="nb.ipynb"))
        assert approver.requests[-1].tool == "check_reproducibility", "a replay runs code: it asks"
        replay = result.details["replay"]
        assert replay["reproducible"] is False
        findings = replay["findings"]
        assert [(f["index"], f["cause"]) for f in findings] == [(1, "deleted_or_edited_cell")]
        assert "hidden" in result.content and "cell" in result.content
        assert jp_serverapp.kernel_manager.list_kernel_ids() == [user_kernel], "no kernel added to the server"
        assert _kernel_processes() <= before, "the replay's kernel is shut down"
        still = ok(await agent.call("execute_code", path="nb.ipynb", code="hidden"))
        assert "41" in still.content, "the user's kernel keeps its state"
        progress = [
            e.message for e in agent.events if isinstance(e, ToolProgressEvent) and "replaying" in e.message
        ]
        assert progress and "of" in progress[-1]
    finally:
        await agent.close()


async def test_a_canceled_replay_stops_and_shuts_its_kernel_down(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    sources = ["import time", *["time.sleep(1)\nprint('tick')" for _ in range(8)]]
    path = write_notebook(jp_root_dir, "slow.ipynb", *sources)
    notebook = nbformat.read(path, as_version=4)
    for count, cell in enumerate(notebook.cells, start=1):
        cell.execution_count = count
    nbformat.write(notebook, path)
    agent = Agent(jp_serverapp, jp_root_dir)
    token = CancelToken()
    ctx = agent.ctx.for_call("call-cancel")
    ctx.cancel = token
    before = _kernel_processes()
    try:
        call = asyncio.ensure_future(agent.call("check_reproducibility", ctx=ctx, path="slow.ipynb"))
        while not any(
            isinstance(e, ToolProgressEvent) and "of 9" in e.message and "(3 of" in e.message
            for e in agent.events
        ):
            await asyncio.sleep(0.1)
        token.cancel()
        result = await asyncio.wait_for(call, 30)
        assert result.status in ("canceled", "ok")
        if result.status == "ok":
            assert result.details["replay"]["stopped"] == "canceled"
        await asyncio.sleep(0.5)
        assert _kernel_processes() <= before
    finally:
        await agent.close()


def test_replay_command_prints_findings_as_json(tmp_path: Path) -> None:
    case = Case(
        "cli", ["a = 2", "print(a * b)", "b = 21"], [Run(0), Run(2), Run(1)], "used_before_defined", 2
    )
    path = build_notebook(case, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", "replay", str(path), "--json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [(f["index"], f["cause"], f["related_index"]) for f in report["findings"]] == [
        (2, "used_before_defined", 3)
    ]
    clean = build_notebook(Case("ok", ["a = 2", "print(a * 21)"], [Run(0), Run(1)]), tmp_path / "ok")
    text = subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", "replay", str(clean), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert text.returncode == 0 and "2 of 2 run cells reproduce" in text.stdout


@pytest.fixture(autouse=True)
def _tests_importable() -> None:
    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
