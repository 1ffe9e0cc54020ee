"""A scripted multi-step notebook task for a small model: the test of the 4k window and the bench's token
figures.

The model reads the notebook, runs cells (some with long outputs), makes a quick check through execute_code (a
tool the compact profile does not offer: it is called by name), adds a conclusions cell and answers. When the
agent compacts its history, the model answers the summary request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
from scripted_model import Reply, text, tool_calls

from hdsp_agent.agent.compaction import SUMMARY_SYSTEM

NOTEBOOK = "analysis.ipynb"
PROMPT = f"In {NOTEBOOK}: load data.csv, summarize x and y, and add a conclusions cell."
SUMMARY = (
    "Done: read analysis.ipynb, loaded data.csv (400 rows) into rows, printed rows and ys. "
    "Files and cells touched: analysis.ipynb (new code cells). Open: conclusions cell."
)


def notebook_project(root: Path) -> None:
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


LOAD = "import csv\nrows = list(csv.DictReader(open('data.csv')))\nlen(rows)"
CORE = [
    _call("read_notebook", path=NOTEBOOK),
    _call("run_cell", path=NOTEBOOK, code=LOAD),
    _call("run_cell", path=NOTEBOOK, code="for row in rows:\n    print(row)"),
    _call("execute_code", path=NOTEBOOK, code="sum(float(r['x']) for r in rows) / len(rows)"),
    _call("run_cell", path=NOTEBOOK, code="ys = [float(r['y']) for r in rows]\nprint(min(ys), max(ys))"),
    _call("run_cell", path=NOTEBOOK, code="for i, y in enumerate(ys):\n    print(i, y, y / 2)"),
    _call("read_notebook", path=NOTEBOOK, format="full"),
    _call("run_cell", path=NOTEBOOK, code="print(sorted(ys)[len(ys) // 2])"),
    _call("run_cell", path=NOTEBOOK, code="print('\\n'.join(str(y) for y in ys[::-1]))"),
]
EXTRA = [
    _call("execute_code", path=NOTEBOOK, code="print(len(ys), sum(ys) / len(ys))"),
    _call("run_cell", path=NOTEBOOK, code="print([round(y ** 0.5, 2) for y in ys])"),
    _call("read_notebook", path=NOTEBOOK, start=2),
    _call("run_cell", path=NOTEBOOK, code="import statistics\nprint(statistics.pstdev(ys))"),
    _call("run_cell", path=NOTEBOOK, code="for r in rows[:200]:\n    print(r['x'], r['y'])"),
    _call("execute_code", path=NOTEBOOK, code="print(max(float(r['x']) for r in rows))"),
    _call("run_cell", path=NOTEBOOK, code="print(sum(1 for y in ys if y > 50000))"),
    _call("read_notebook", path=NOTEBOOK, format="full", include_outputs=False),
    _call("run_cell", path=NOTEBOOK, code="print('x and y:', len(rows))"),
]
CONCLUDE = [
    _call(
        "insert_cell",
        path=NOTEBOOK,
        cell_type="markdown",
        source="## Conclusions\nThe mean of x is 199.5; y grows with x squared.",
    ),
    _call("read_notebook", path=NOTEBOOK),
    text("Done: the notebook loads data.csv, summarizes x and y, and ends with a conclusions cell."),
]


def task(steps: int) -> list[Reply]:
    """``steps`` model replies (12 or 21): the last is the answer."""
    if steps == 12:
        return [*CORE, *CONCLUDE]
    if steps == 21:
        return [*CORE, *EXTRA, *CONCLUDE]
    raise ValueError("12 or 21 steps")


def answering(replies: list[Reply]) -> Any:
    """A scripted-model factory: the task's replies in order, and a summary whenever the agent compacts."""
    queue: Iterator[Reply] = iter(replies)

    def answer(request: dict[str, Any]) -> Reply:
        if request["messages"][0].get("content") == SUMMARY_SYSTEM:
            return text(SUMMARY)
        return next(queue, text("(no reply left)"))

    return answer
