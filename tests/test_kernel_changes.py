"""What the agent did to the kernel: the variables a turn's runs created, changed or deleted, from silent
snapshots of a real ipykernel before the turn's first run and at its end."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from scripted_model import ScriptedModel, text, tool_calls
from test_cli_run import run_cli
from test_notebook_tools import SESSION, Agent, ok, write_notebook


async def test_a_turn_lists_created_changed_and_deleted_variables_and_leaves_no_trace(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "nb.ipynb")
    agent = Agent(jp_serverapp, jp_root_dir)
    changes = agent.runtime.kernel_changes
    try:
        ok(
            await agent.call(
                "run_cell", path="nb.ipynb", code="rows = list(range(1000))\nlabel = 'a'\nkeep = 3"
            )
        )
        first = await changes.end_turn(SESSION)
        assert {(c["name"], c["change"]) for c in first["nb.ipynb"]} == {
            ("rows", "created"),
            ("label", "created"),
            ("keep", "created"),
        }
        # The next turn: an in-place change to a list, a deletion, a new name; `keep` is untouched.
        ok(await agent.call("run_cell", path="nb.ipynb", code="rows.append(-1)\ndel label\nratio = 0.25"))
        ok(await agent.call("execute_code", path="nb.ipynb", code="big = 'x' * 10_000_000"))
        second = {c["name"]: c for c in (await changes.end_turn(SESSION))["nb.ipynb"]}
        assert {name: c["change"] for name, c in second.items()} == {
            "rows": "changed",
            "label": "deleted",
            "ratio": "created",
            "big": "created",
        }
        assert second["rows"]["length"] == 1001 and second["rows"]["type"] == "list"
        assert second["ratio"]["preview"] == "0.25"
        assert len(second["big"]["preview"]) < 80, "a preview is short: the value is never copied whole"
        assert await changes.end_turn(SESSION) == {}, "a turn that ran nothing lists nothing"
        listed = ok(await agent.call("inspect_variables", path="nb.ipynb")).content
        assert "summarize" not in listed and "scratch" not in listed, "the snapshots leave nothing behind"
        count = ok(await agent.call("run_cell", path="nb.ipynb", code="1"))
        assert count.details["execution_count"] == 3, "snapshots do not move the execution count"
    finally:
        await agent.close()


def test_run_json_sends_the_kernel_changes_before_the_turn_ends(tmp_path: Path) -> None:
    write_notebook(tmp_path, "nb.ipynb")
    script = [
        tool_calls(
            ("run_cell", json.dumps({"path": "nb.ipynb", "code": "total = 41 + 1\nnames = ['a', 'b']"}))
        ),
        text("Done: total is 42."),
    ]
    with ScriptedModel(script) as model:
        done = run_cli(
            "-p",
            "compute",
            "--root",
            str(tmp_path),
            "--json",
            "--approve",
            "all",
            "--model",
            "m",
            "--base-url",
            model.base_url,
        )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    (changes,) = [e for e in events if e["type"] == "kernel.changes"]
    assert {(c["name"], c["change"], c.get("preview")) for c in changes["notebooks"]["nb.ipynb"]} == {
        ("total", "created", "42"),
        ("names", "created", "['a', 'b']"),
    }
    kinds = [e["type"] for e in events]
    assert kinds.index("kernel.changes") < kinds.index("turn.end")


async def test_a_cell_still_running_at_the_end_of_the_turn_does_not_hold_the_turn(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "nb.ipynb")
    agent = Agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("run_cell", path="nb.ipynb", code="ready = True"))
        await agent.runtime.kernel_changes.end_turn(SESSION)
        slow = ok(
            await agent.call("run_cell", path="nb.ipynb", code="import time\ntime.sleep(4)", timeout=0.5)
        )
        assert slow.details["status"] == "running"
        started = time.monotonic()
        assert await agent.runtime.kernel_changes.end_turn(SESSION) == {}
        assert time.monotonic() - started < 1.0
        ok(await agent.call("get_cell_output", path="nb.ipynb", cell_id=slow.details["cell_id"], timeout=30))
    finally:
        await agent.close()
