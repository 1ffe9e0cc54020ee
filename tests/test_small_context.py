"""A small local model (a 4,096-token window that refuses longer prompts) drives a multi-step notebook task.

The scripted model counts every prompt with o200k_base and answers HTTP 400, as llama.cpp does, past 4,096
tokens; it reports its window at ``GET /props``. The agent must find the window, pick the compact profile, cut
big outputs, shrink and compact the history, and finish the task without one refused request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
from notebook_task import NOTEBOOK, PROMPT, answering, notebook_project, task
from scripted_model import ScriptedModel

from hdsp_agent.agent.compaction import SUMMARY_SYSTEM

WINDOW = 4_096


def test_a_4k_model_completes_a_notebook_task_through_hdsp_agent_run(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    notebook_project(root)
    with ScriptedModel(factory=answering(task(12)), max_prompt_tokens=WINDOW) as model:
        done = subprocess.run(
            [
                sys.executable, "-m", "hdsp_agent.cli", "run",
                "-p", PROMPT,
                "--root", str(root), "--model", "small", "--base-url", model.base_url,
                "--approve", "all", "--json", "--notebook", NOTEBOOK,
            ],
            capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL,
            env={**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)},
        )  # fmt: skip
        sizes, refused, requests = list(model.prompt_sizes), list(model.refused), list(model.requests)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    ends = [e for e in events if e["type"] in ("error", "turn.end")]
    ended = [(e["type"], e.get("code"), e.get("message")) for e in ends]
    assert done.returncode == 0, (ended, done.stderr[-500:])
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
    notes = [
        m["content"]
        for r in requests
        for m in r["messages"]
        if m["role"] == "user" and "was compacted" in str(m["content"])
    ]
    assert notes and "The active notebook now" in notes[-1] and "# Measurements" in notes[-1], (
        "the live notebook's outline is kept with the summary"
    )
    summaries = [r for r in requests if r["messages"][0]["content"] == SUMMARY_SYSTEM]
    assert summaries and all("tools" not in r for r in summaries)

    cells = nbformat.read(root / NOTEBOOK, as_version=4).cells
    assert cells[-1].cell_type == "markdown" and cells[-1].source.startswith("## Conclusions")
    assert any("400" in json.dumps(cell.get("outputs", [])) for cell in cells if cell.cell_type == "code")
