"""Notebooks read through read_file: shown as cells with ids, types, sources and brief outputs, not JSON."""

from __future__ import annotations

from pathlib import Path

import pytest
from file_tools_harness import read_call, write_notebook


@pytest.mark.asyncio
async def test_notebooks_are_rendered_as_cells_not_json(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "analysis.ipynb")
    markdown_id, code_id = notebook.cells[0].id, notebook.cells[1].id
    result = await read_call(tmp_path, "read_file", {"filepath": "analysis.ipynb"})
    text = "\n".join(line.split("\t", 1)[1] for line in result.content.split("\n") if "\t" in line)
    assert "Notebook analysis.ipynb · 3 cells · kernel: Python 3" in text
    assert f"--- [0] {markdown_id} · markdown ---\n# Analysis" in text
    assert (
        f"--- [1] {code_id} · code · [4] ---\nimport math\nprint('hello')\nmath.pi\n--- outputs (4) ---\n"
        "[stdout] hello\n[execute_result] 3.141592653589793\n[display_data] image/png, 0.1 kB (not shown)\n"
        "[error] ValueError: bad value"
    ) in text
    assert "[... output cut: 124 more chars (42 more lines)]" in text
    assert '"cell_type"' not in result.content
    assert result.details["notebook"] is True
    assert "not of the file on disk" in result.content


@pytest.mark.asyncio
async def test_read_file_range_pages_through_the_notebook_view(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "analysis.ipynb")
    result = await read_call(
        tmp_path, "read_file_range", {"filepath": "analysis.ipynb", "startLine": 4, "endLine": 5}
    )
    assert result.content.split("\n")[:2] == [
        f"     4\t--- [0] {notebook.cells[0].id} · markdown ---",
        "     5\t# Analysis",
    ]


@pytest.mark.asyncio
async def test_a_broken_notebook_is_shown_as_text(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text('{"cells": [\n')
    result = await read_call(tmp_path, "read_file", {"filepath": "broken.ipynb"})
    assert result.content == '     1\t{"cells": ['
