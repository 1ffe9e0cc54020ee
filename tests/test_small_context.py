"""A small local model (a 4,096-token window that refuses longer prompts) drives a multi-step notebook task.

The scripted model counts every prompt with o200k_base and answers HTTP 400, as llama.cpp does, past 4,096 tokens;
it reports its window at ``GET /props``. The agent must find the window, pick the compact profile, cut big outputs,
shrink and compact the history, and finish the task without one refused request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
from scripted_model import Reply, ScriptedModel, text, tool_calls

from hdsp_agent.agent.compaction import SUMMARY_SYSTEM

WINDOW = 4_096
NOTEBOOK = "analysis.ipynb"


def _notebook(root: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Measurements"),
        nbformat.v4.new_code_cell("import csv\nrows = list(csv.DictReader(open('data.csv')))"),
    ]
    nbformat.write(nb, root / NOTEBOOK)
    lines = ["x,y"] + [f"{i},{i * i * 1.25:.2f}" for i in range(400)]
    (root / "data.csv").write_text("\n".join(lines) + "\n")


def _call(name: str, **arguments: Any) -> Reply:
    return tool_calls((name, json.dumps(arguments)))


def _task() -> list[Reply]:
    """Twelve steps: read, run (with long outputs), a quick check through a tool the compact profile does not
    offer (execute_code, callable by name), a markdown conclusion, and a final answer."""
    return [
        _call("read_notebook", path=NOTEBOOK),
        _call(
            "run_cell",
            path=NOTEBOOK,
            code="import csv\nrows = list(csv.DictReader(open('data.csv')))\nlen(rows)",
        ),
        _call("run_cell", path=NOTEBOOK, code="for row in rows:\n    print(row)"),
        _call("execute_code", path=NOTEBOOK, code="sum(float(r['x']) for r in rows) / len(rows)"),
        _call("run_cell", path=NOTEBOOK, code="ys = [float(r['y']) for r in rows]\nprint(min(ys), max(ys))"),
        _call("run_cell", path=NOTEBOOK, code="for i, y in enumerate(ys):\n    print(i, y, y / 2)"),
        _call("read_notebook", path=NOTEBOOK, format="full"),
        _call("run_cell", path=NOTEBOOK, code="print(sorted(ys)[len(ys) // 2])"),
        _call("run_cell", path=NOTEBOOK, code="print('\\n'.join(str(y) for y in ys[::-1]))"),
        _call(
            "insert_cell",
            path=NOTEBOOK,
            cell_type="markdown",
            source="## Conclusions\nThe mean of x is 199.5; y grows with x squared.",
        ),
        _call("read_notebook", path=NOTEBOOK),
        text("Done: the notebook loads data.csv, summarizes x and y, and ends with a conclusions cell."),
    ]


def _small_model() -> ScriptedModel:
    task = iter(_task())

    def answer(request: dict[str, Any]) -> Reply:
        system = str(request["messages"][0].get("content", ""))
        if system == SUMMARY_SYSTEM:  # the agent compacting its history
            return text(
                "Done: read analysis.ipynb, loaded data.csv (400 rows) into rows, printed rows and ys. "
                "Files and cells touched: analysis.ipynb (new code cells). Open: conclusions cell."
            )
        return next(task)

    return ScriptedModel(factory=answer, max_prompt_tokens=WINDOW)


def test_a_4k_model_completes_a_notebook_task_through_hdsp_agent_run(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    _notebook(root)
    with _small_model() as model:
        done = subprocess.run(
            [
                sys.executable, "-m", "hdsp_agent.cli", "run",
                "-p", f"In {NOTEBOOK}: load data.csv, summarize x and y, and add a conclusions cell.",
                "--root", str(root), "--model", "small", "--base-url", model.base_url,
                "--approve", "all", "--json",
            ],
            capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL,
            env={**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)},
        )  # fmt: skip
        sizes, refused, requests = list(model.prompt_sizes), list(model.refused), list(model.requests)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr[-3000:]
    start = next(e for e in events if e["type"] == "turn.start")
    assert (start["context_window"], start["profile"]) == (WINDOW, "compact"), "read from the server's /props"
    assert refused == [] and max(sizes) <= WINDOW, f"a prompt over the window was sent: {sizes}"
    assert events[-2]["type"] == "turn.end" and events[-2]["reason"] == "completed"

    offered = [tool["function"]["name"] for tool in requests[0]["tools"]]
    assert "run_cell" in offered and "execute_code" not in offered, (
        "the notebook was named: compact notebook set"
    )
    statuses = {(e["name"], e["status"]) for e in events if e["type"] == "tool.status"}
    assert ("execute_code", "done") in statuses, "a tool the profile hides is still callable by name"
    assert not any(status == "errored" for _, status in statuses), statuses

    compacted = [e for e in events if e["type"] == "context.compacted"]
    assert compacted, f"twelve steps of long outputs in 4k must compact (prompt sizes {sizes})"
    assert compacted[0]["messages_after"] < compacted[0]["messages_before"]
    summaries = [r for r in requests if r["messages"][0]["content"] == SUMMARY_SYSTEM]
    assert summaries and all("tools" not in r for r in summaries)

    cells = nbformat.read(root / NOTEBOOK, as_version=4).cells
    assert cells[-1].cell_type == "markdown" and cells[-1].source.startswith("## Conclusions")
    assert any("400" in json.dumps(cell.get("outputs", [])) for cell in cells if cell.cell_type == "code")
