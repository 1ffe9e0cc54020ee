"""The notebook tools from the command line, as a user runs them: real subprocess, real kernel, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat


def hdsp_agent(*args: str, runtime_dir: Path) -> subprocess.CompletedProcess[str]:
    # stderr goes to a file, not a pipe: a kernel left behind would hold a pipe open and make run() wait for
    # it to die on its own, hiding the leak.
    with open(runtime_dir.parent / "stderr.txt", "w+") as stderr:
        done = subprocess.run(
            [sys.executable, "-m", "hdsp_agent.cli", *args],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            # Kernel connection files (and so the kernels' command lines) land here: that is how we find them.
            env={**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime_dir)},
        )
        stderr.seek(0)
        done.stderr = stderr.read()
    return done


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command_line = (entry / "cmdline").read_bytes().replace(b"\x00", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in command_line and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def make_project(tmp_path: Path) -> tuple[Path, Path]:
    root, runtime_dir = tmp_path / "project", tmp_path / "runtime"
    root.mkdir()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Notes")])
    nbformat.write(notebook, root / "nb.ipynb")
    return root, runtime_dir


def test_run_cell_returns_the_output_writes_the_cell_and_leaves_no_kernel_running(tmp_path: Path) -> None:
    root, runtime_dir = make_project(tmp_path)
    done = hdsp_agent(
        "tools",
        "call",
        "run_cell",
        '{"path": "nb.ipynb", "code": "print(6*7)"}',
        "--root",
        str(root),
        "--approve",
        "all",
        runtime_dir=runtime_dir,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok"
    assert result["content"].splitlines()[1:] == ["--- output ---", "42"]
    assert result["details"]["execution_count"] == 1

    cells = nbformat.read(root / "nb.ipynb", as_version=4).cells
    assert [(cell.cell_type, cell.source) for cell in cells] == [
        ("markdown", "# Notes"),
        ("code", "print(6*7)"),
    ]
    assert cells[1].id == result["details"]["cell_id"]
    assert cells[1].execution_count == 1
    assert cells[1].outputs == [nbformat.v4.new_output("stream", name="stdout", text="42\n")]

    assert processes_mentioning(str(runtime_dir)) == [], "the command left a kernel running"
    assert list(runtime_dir.glob("kernel-*.json")) == []


def test_a_declined_run_starts_no_kernel_and_changes_nothing(tmp_path: Path) -> None:
    root, runtime_dir = make_project(tmp_path)
    before = (root / "nb.ipynb").read_bytes()
    done = hdsp_agent(
        "tools",
        "call",
        "run_cell",
        '{"path": "nb.ipynb", "code": "print(1)"}',
        "--root",
        str(root),
        "--approve",
        "none",
        runtime_dir=runtime_dir,
    )
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert (result["status"], result["error"]["code"]) == ("denied", "E_TOOL_DENIED")
    assert (root / "nb.ipynb").read_bytes() == before
    assert not runtime_dir.exists() or list(runtime_dir.glob("kernel-*.json")) == []
