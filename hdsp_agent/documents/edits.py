"""Changes to a notebook, as data: what the tools ask for and what the frontend's NotebookBridge applies.

Each edit is a pydantic model discriminated by ``op`` so it can travel over the WebSocket to the live notebook
model unchanged; ``apply_edit`` applies the same edit to an nbformat node for notebooks that are not open
(file mode). Cells are addressed by id, never by index alone: indices shift while the user works. The
frontend's twin is ``src/notebookOps.ts``; ``contracts/wire.json`` keeps the two in step (``wire_schema.py``).
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any, Literal

import nbformat
from pydantic import BaseModel, Field, TypeAdapter

from ..tools.base import ToolError
from ..user_text import UserText, user_text

E_CELL_NOT_FOUND = "E_CELL_NOT_FOUND"
E_NOT_A_CODE_CELL = "E_NOT_A_CODE_CELL"
CELL_TYPES = ("code", "markdown", "raw")
# nbformat 4.5's rule for cell ids.
_VALID_ID = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")


class InsertCell(BaseModel):
    op: Literal["insert_cell"] = "insert_cell"
    index: int
    cell: dict[str, Any]


class SetCellSource(BaseModel):
    op: Literal["set_cell_source"] = "set_cell_source"
    cell_id: str
    source: str


class DeleteCell(BaseModel):
    op: Literal["delete_cell"] = "delete_cell"
    cell_id: str


class MoveCell(BaseModel):
    op: Literal["move_cell"] = "move_cell"
    cell_id: str
    to_index: int


class SetCellOutputs(BaseModel):
    """Outputs and execution count of a code cell after a run (replaces the old outputs)."""

    op: Literal["set_cell_outputs"] = "set_cell_outputs"
    cell_id: str
    outputs: list[dict[str, Any]]
    execution_count: int | None = None
    # Still running: a live notebook shows the cell as executing ([*]); files ignore it.
    running: bool = False


NotebookEdit = Annotated[
    InsertCell | SetCellSource | DeleteCell | MoveCell | SetCellOutputs, Field(discriminator="op")
]


_EDIT = TypeAdapter(NotebookEdit)


def parse_edit(data: dict[str, Any]) -> BaseModel:
    """An edit from its JSON form (as it travels to the NotebookBridge)."""
    edit: BaseModel = _EDIT.validate_python(data)
    return edit


def new_cell(cell_type: str, source: str) -> nbformat.NotebookNode:
    """A cell with a fresh nbformat id."""
    if cell_type == "markdown":
        return nbformat.v4.new_markdown_cell(source)
    if cell_type == "raw":
        return nbformat.v4.new_raw_cell(source)
    return nbformat.v4.new_code_cell(source)


def cell_source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


_FIRST_LINE_CHARS = 40


def first_line(source: str) -> str:
    """A cell's first non-empty line, cut to a short label (what the user recognises a cell by)."""
    first = next((line.strip() for line in source.splitlines() if line.strip()), "")
    if len(first) > _FIRST_LINE_CHARS:
        first = first[: _FIRST_LINE_CHARS - 1].rstrip() + "…"
    return first


def cell_words(index: int | None, source: str = "") -> UserText:
    """A cell as the user sees it: its number (1-based, as the notebook counts) and its first line, never its
    id ("cell 4 (df.head())"). ``index`` None: a cell no longer in the notebook."""
    first = first_line(source)
    if index is None:
        return user_text("a cell (%1)", first) if first else user_text("a cell")
    return user_text("cell %1 (%2)", index + 1, first) if first else user_text("cell %1", index + 1)


def ensure_cell_ids(notebook: nbformat.NotebookNode) -> bool:
    """Give every cell a valid, unique id (notebooks older than nbformat 4.5 have none). True if any changed.

    Missing ids are derived from the cell's position, not random: reading the same file twice must give the
    same ids, or the model could not address a cell it has just read. The first save writes them into the
    file.
    """
    changed = False
    seen: set[str] = set()
    for index, cell in enumerate(notebook.cells):
        cell_id = cell.get("id")
        if not isinstance(cell_id, str) or not _VALID_ID.match(cell_id) or cell_id in seen:
            base = cell_id[:50] if isinstance(cell_id, str) and cell_id else "cell"
            cell_id = re.sub(r"[^a-zA-Z0-9-_]", "-", f"{base}-{index}")
            cell["id"] = cell_id
            changed = True
        seen.add(cell_id)
    if notebook.get("nbformat") == 4 and notebook.get("nbformat_minor", 0) < 5:
        notebook["nbformat_minor"] = 5
    return changed


def find_cell(notebook: nbformat.NotebookNode, cell_id: str) -> tuple[int, nbformat.NotebookNode]:
    for index, cell in enumerate(notebook.cells):
        if cell.get("id") == cell_id:
            return index, cell
    ids = [str(cell.get("id")) for cell in notebook.cells]
    close = difflib.get_close_matches(cell_id, ids, n=3, cutoff=0.5)
    hint = f"Did you mean {', '.join(close)}? " if close else ""
    raise ToolError(
        E_CELL_NOT_FOUND,
        user_text("no cell with id %1 (%2 cells)", repr(cell_id), len(ids)),
        user_text("%1Read the notebook with read_notebook to see the current cell ids.", hint),
    )


def cell_index(notebook: nbformat.NotebookNode, cell_id: str) -> int | None:
    for index, cell in enumerate(notebook.cells):
        if cell.get("id") == cell_id:
            return index
    return None


def cell_at(notebook: nbformat.NotebookNode, index: int) -> tuple[int, nbformat.NotebookNode]:
    """The cell at ``index`` (negative counts from the end) and its non-negative index."""
    count = len(notebook.cells)
    if not -count <= index < count:
        raise ToolError(
            E_CELL_NOT_FOUND,
            user_text("no cell at index %1: the notebook has %2 cells", index, count),
            user_text("Use an index from 0 to the cell count - 1, or address the cell by id."),
        )
    position = index % count
    cell: nbformat.NotebookNode = notebook.cells[position]
    return position, cell


def _clamped_position(index: int, count: int) -> int:
    """Python-style insertion position: negative counts from the end, out of range goes to the nearest end."""
    if index < 0:
        index += count + 1
    return max(0, min(index, count))


def apply_edit(notebook: nbformat.NotebookNode, edit: BaseModel) -> str:
    """Apply ``edit`` in place and return the id of the cell it concerns."""
    if isinstance(edit, InsertCell):
        cell = nbformat.from_dict(edit.cell)
        notebook.cells.insert(_clamped_position(edit.index, len(notebook.cells)), cell)
        return str(cell["id"])
    if isinstance(edit, SetCellSource):
        _, cell = find_cell(notebook, edit.cell_id)
        cell.source = edit.source
        return edit.cell_id
    if isinstance(edit, DeleteCell):
        index, _ = find_cell(notebook, edit.cell_id)
        del notebook.cells[index]
        return edit.cell_id
    if isinstance(edit, MoveCell):
        index, cell = find_cell(notebook, edit.cell_id)
        del notebook.cells[index]
        notebook.cells.insert(_clamped_position(edit.to_index, len(notebook.cells)), cell)
        return edit.cell_id
    if isinstance(edit, SetCellOutputs):
        _, cell = find_cell(notebook, edit.cell_id)
        if cell.cell_type != "code":
            raise ToolError(
                E_NOT_A_CODE_CELL,
                user_text("cell %1 is a %2 cell, not code", repr(edit.cell_id), cell.cell_type),
            )
        cell.outputs = [nbformat.from_dict(output) for output in edit.outputs]
        cell.execution_count = edit.execution_count
        return edit.cell_id
    raise TypeError(f"unknown notebook edit {type(edit).__name__}")
