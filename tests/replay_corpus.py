"""Notebooks with hidden state, built for the replay tests: one cause planted in each, none in the clean ones.

A notebook is its final cells plus the history of runs that produced its saved outputs: each run executes a
source (the cell's source at that time, which an edit or a deletion may have changed since) in one shared
namespace, in the historical order, here in this process. The saved outputs and execution counts are exactly
what that session would have left in the file; replay then runs the final cells top to bottom in a kernel.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


@dataclass
class Run:
    cell: int  # index in the final cells; -1: a cell since deleted
    source: str | None = None  # None: the final source


@dataclass
class Case:
    name: str
    cells: list[str]
    history: list[Run]
    cause: str | None = None  # None: clean
    planted_cell: int | None = None
    env: dict[str, str] = field(default_factory=dict)
    # Files the session left behind that a fresh checkout does not have (removed before the replay).
    transient_files: list[str] = field(default_factory=list)


@contextlib.contextmanager
def _session(directory: Path, env: dict[str, str]) -> Iterator[None]:
    before_dir, before_env = os.getcwd(), dict(os.environ)
    os.chdir(directory)
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(before_dir)
        os.environ.clear()
        os.environ.update(before_env)


def _execute(source: str, namespace: dict[str, Any]) -> list[dict[str, Any]]:
    """Outputs as a kernel would record them: stdout, the last expression's repr, or the error."""
    stdout = io.StringIO()
    outputs: list[dict[str, Any]] = []
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    result = None
    try:
        with contextlib.redirect_stdout(stdout):
            exec(compile(tree, "<cell>", "exec"), namespace)
            if last is not None:
                result = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
    except Exception as error:  # the saved notebook shows the error, as Jupyter would
        if stdout.getvalue():
            outputs.append(nbformat.v4.new_output("stream", name="stdout", text=stdout.getvalue()))
        outputs.append(
            nbformat.v4.new_output("error", ename=type(error).__name__, evalue=str(error), traceback=[])
        )
        return outputs
    if stdout.getvalue():
        outputs.append(nbformat.v4.new_output("stream", name="stdout", text=stdout.getvalue()))
    if result is not None:
        outputs.append(nbformat.v4.new_output("execute_result", data={"text/plain": repr(result)}))
    return outputs


def build_notebook(case: Case, directory: Path) -> Path:
    """Write the case's notebook (saved outputs from its history) into ``directory``; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    cells = [new_markdown_cell(f"# {case.name}")] + [new_code_cell(source) for source in case.cells]
    namespace: dict[str, Any] = {"__name__": "__main__"}
    with _session(directory, case.env):
        for count, run in enumerate(case.history, start=1):
            source = run.source if run.source is not None else case.cells[run.cell]
            outputs = _execute(source, namespace)
            if run.cell >= 0:
                cell = cells[run.cell + 1]
                cell.outputs = outputs
                cell.execution_count = count
                for output in outputs:
                    if output["output_type"] == "execute_result":
                        output["execution_count"] = count
    for name in case.transient_files:
        (directory / name).unlink(missing_ok=True)
    notebook = new_notebook(
        cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    )
    path = directory / f"{case.name}.ipynb"
    nbformat.write(notebook, path)
    return path


def in_order(count: int) -> list[Run]:
    return [Run(i) for i in range(count)]


def planted_cases() -> list[Case]:
    """Five of each cause (the deleted-or-edited cause: both kinds), each at a known cell (code cell index + 1
    for the markdown title, which is the index replay reports)."""
    cases: list[Case] = []
    for k in range(5):
        a, b = 3 + k, 7 + 2 * k
        # A name used before the cell that defines it: cell 2 ran before cell 1.
        if k % 2 == 0:
            used_cells = [f"base_{k} = {a}", f"print(base_{k} * scale_{k})", f"scale_{k} = {b}"]
        else:  # a helper function defined below its first use
            used_cells = [
                f"data = [{a}, {b}, {a + b}]",
                "print(summarize(data))",
                "def summarize(xs):\n    return round(sum(xs) / len(xs), 3)",
            ]
        cases.append(Case(f"used_before_{k}", used_cells, [Run(0), Run(2), Run(1)], "used_before_defined", 2))
        # A variable from a deleted cell.
        cases.append(
            Case(
                f"deleted_{k}",
                [f"items_{k} = list(range({a + 5}))", f"print(len(items_{k}) + offset_{k})"]
                if k != 3
                else ["items = [4, 8, 15, 16, 23, 42]", "print(st.mean(items))"],
                [Run(0), Run(-1, f"offset_{k} = {b}" if k != 3 else "import statistics as st"), Run(1)],
                "deleted_or_edited_cell",
                2,
            )
        )
        # Out of order: a later cell redefined the value before the cell that prints it ran.
        cases.append(
            Case(
                f"out_of_order_{k}",
                [f"rate_{k} = {a}", f"print('rate', rate_{k} * 10)", f"rate_{k} = {b}\nprint('updated')"]
                if k % 2 == 0
                else ["weights = [1, 2, 3]", "print(sum(weights))", "weights = [w * 10 for w in weights]"],
                [Run(0), Run(2), Run(1)],
                "out_of_order",
                2,
            )
        )
        # A file read before the cell that writes it.
        if k % 2 == 0:
            file_cells = [
                "import json",
                f"with open('params_{k}.json') as f:\n    params = json.load(f)\nprint(params['n'])",
                f"with open('params_{k}.json', 'w') as f:\n    json.dump({{'n': {b}}}, f)",
            ]
            written = f"params_{k}.json"
        else:  # pathlib
            file_cells = [
                "from pathlib import Path",
                f"print(Path('notes_{k}.txt').read_text().strip().upper())",
                f"Path('notes_{k}.txt').write_text('ready {b}')",
            ]
            written = f"notes_{k}.txt"
        cases.append(
            Case(
                f"file_order_{k}",
                file_cells,
                [Run(0), Run(2), Run(1)],
                "file_read_before_written",
                2,
                transient_files=[written],
            )
        )
        # Unseeded randomness (here in the cell, or in the cell it uses).
        if k in (0, 2):
            cells = [
                "import random",
                f"sample = [random.randint(0, 10**9) for _ in range({a})]\nprint(sum(sample))",
            ]
            planted = 2
        elif k == 4:
            cells = ["import uuid", "run_id = uuid.uuid4().hex[:8]\nprint('run', run_id)"]
            planted = 2
        elif k == 3:
            cells = ["import random", "deck = list(range(40))\nrandom.shuffle(deck)\nprint(deck[:6])"]
            planted = 2
        else:
            cells = ["import random", f"noise = random.random() * {b}", "print(round(noise, 6))"]
            planted = 3
        cases.append(Case(f"random_{k}", cells, in_order(len(cells)), "unseeded_random", planted))
        # Environment dependence.
        reads = {
            2: f"os.getenv('HDSP_CORPUS_MODE_{k}', 'full')",
            3: f"os.environ['HDSP_CORPUS_MODE_{k}']",  # a KeyError where the variable is not set
        }.get(k, f"os.environ.get('HDSP_CORPUS_MODE_{k}', 'full')")
        env_cells = ["import os", f"mode = {reads}\nprint('mode:', mode)"]
        cases.append(
            Case(
                f"environment_{k}",
                env_cells,
                in_order(2),
                "environment",
                2,
                env={f"HDSP_CORPUS_MODE_{k}": "sample"},
            )
        )
    # Edited after running: one of the five deleted-cell cases swapped for an edit, so both kinds count.
    cases = [c for c in cases if c.name != "deleted_4"]
    cases.append(
        Case(
            "edited_0",
            ["threshold = 0.5", "values = [0.2, 0.7, 0.9]\nprint(sum(v > threshold for v in values))"],
            [Run(0, "threshold = 0.1"), Run(1)],
            "deleted_or_edited_cell",
            2,
        )
    )
    return cases


def clean_cases() -> list[Case]:
    """Notebooks that run top to bottom as saved: seeded randomness, files written before they are read,
    functions and classes, comprehensions, expression results, a caught error shown as output."""
    templates = [
        ["values = [3, 1, 4, 1, 5, 9, 2, 6]", "total = sum(values)\nprint(total)", "sorted(values)[:3]"],
        [
            "import random\nrandom.seed(7)",
            "draws = [random.random() for _ in range(5)]",
            "print(round(sum(draws), 6))",
        ],
        [
            "def mean(xs):\n    return sum(xs) / len(xs)",
            "data = [1.5, 2.5, 3.25]\nprint(mean(data))",
            "squares = {x: x * x for x in range(5)}\nsquares",
        ],
        [
            "with open('clean_out.txt', 'w') as f:\n    f.write('42\\n')",
            "with open('clean_out.txt') as f:\n    print(int(f.read()) * 2)",
        ],
        [
            "class Counter:\n    def __init__(self):\n        self.n = 0\n"
            "    def add(self, k):\n        self.n += k\n        return self",
            "c = Counter().add(3).add(4)\nprint(c.n)",
        ],
        [
            "import math",
            "print(math.sqrt(2) * 1000)",
            "angles = [math.sin(x / 10) for x in range(4)]\nprint(angles)",
        ],
        [
            "text = 'the quick brown fox jumps over the lazy dog'",
            "words = text.split()\nprint(len(words), max(words, key=len))",
        ],
        [
            "try:\n    1 / 0\nexcept ZeroDivisionError as error:\n    print('caught', error)",
            "x = 10\nx += 5\nprint(x)",
        ],
        ["import json", "record = json.dumps({'a': 1, 'b': [1, 2]}, sort_keys=True)\nrecord"],
        ["import random\nrng = random.Random(123)", "print([rng.randint(1, 6) for _ in range(6)])"],
    ]
    cases: list[Case] = []
    for k in range(30):
        template = templates[k % len(templates)]
        cells = [f"# clean notebook {k}\n" + template[0], *template[1:]]
        if k >= len(templates):  # variants: an extra cell that uses earlier names
            cells.append(f"variant = {k}\nprint('variant', variant * 3)")
        cases.append(Case(f"clean_{k}", cells, in_order(len(cells))))
    return cases
