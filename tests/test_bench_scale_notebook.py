"""The ``scale`` bench group's notebook generator makes what it claims: the cell count, about the output bytes
asked for (text and real PNG images spread over the cells), a small cell to run first, a valid notebook."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from scale_notebook import SMALL_CELL, output_size, write_notebook  # noqa: E402


def test_the_generated_notebook_has_the_cells_and_output_bytes_asked_for(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "big.ipynb", cells=100, output_bytes=2_000_000)
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)

    assert len(notebook.cells) == 100
    assert notebook.cells[0].source == SMALL_CELL and notebook.cells[0].outputs == []
    assert abs(output_size(notebook) - 2_000_000) < 2_000_000 * 0.03
    assert path.stat().st_size >= 2_000_000
    images = [
        base64.b64decode(output.data["image/png"])
        for cell in notebook.cells
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]
    assert len(images) == 25 and all(image.startswith(b"\x89PNG\r\n\x1a\n") for image in images)
    assert all(cell.outputs[0].output_type == "stream" for cell in notebook.cells[1:])
