"""Undo for a notebook open in JupyterLab: the inverse of one edit, applied to the cell it touched only.

Putting a whole snapshot back would also undo what the user typed in other cells after the agent's turn. The
inverse touches the one cell the agent changed, and only while that cell is still as the agent left it: a cell
the user has edited since is not overwritten (``E_NOTEBOOK_CHANGED``), a cell they deleted or re-ran is left
as they made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import nbformat
from pydantic import BaseModel

from ..tools.base import ToolError
from ..user_text import user_text
from .edits import DeleteCell, InsertCell, MoveCell, SetCellOutputs, SetCellSource, cell_index, cell_source
from .gateway import E_NOTEBOOK_CHANGED


@dataclass(frozen=True)
class InverseEdit:
    """The edit that undoes another, and what the concerned cell must still look like for it to apply."""

    edit: BaseModel
    cell_id: str
    # The source the agent left in the cell (None: not checked).
    expected_source: str | None = None
    # The execution count the agent's run left (outputs are only put back while it is unchanged).
    expected_execution_count: int | None = None
    checks_outputs: bool = False

    def applies_to(self, notebook: nbformat.NotebookNode, path: str) -> bool:
        """Whether to apply it now; raises when applying would overwrite the user's own edit."""
        index = cell_index(notebook, self.cell_id)
        if isinstance(self.edit, InsertCell):
            return index is None  # a deletion to undo: unless the cell came back some other way
        if index is None:
            return False  # the user deleted the cell since: nothing of the agent's is left in it
        cell = notebook.cells[index]
        if self.checks_outputs:
            return cell.get("execution_count") == self.expected_execution_count
        if self.expected_source is not None and cell_source(cell) != self.expected_source:
            raise ToolError(
                E_NOTEBOOK_CHANGED,
                user_text(
                    ("cell %1 of %2 was edited after the agent changed it; it was left as it is"),
                    self.cell_id,
                    path,
                ),
                user_text("Change it back by hand if you want the agent's change undone."),
            )
        return True

    def plan(self, notebook: nbformat.NotebookNode) -> Literal["apply", "skip"] | str:
        """What applying it to ``notebook`` would do, for an undo planned before anything is applied.

        "apply"; "skip" when the notebook is already as the inverse would leave it (the user deleted a cell
        the agent inserted, or brought back one it deleted); otherwise the reason it conflicts, in words: the
        cell is not as the agent left it, and applying would lose the user's change or leave the notebook
        neither as it was nor as it is. Stricter than ``applies_to``: a whole-turn undo is all or nothing.
        """
        index = cell_index(notebook, self.cell_id)
        if isinstance(self.edit, InsertCell):
            return "apply" if index is None else "skip"
        if index is None:
            if isinstance(self.edit, DeleteCell):
                return "skip"
            return user_text("the cell was deleted after the agent changed it")
        cell = notebook.cells[index]
        if self.checks_outputs and cell.get("execution_count") != self.expected_execution_count:
            return user_text("the cell was run again after the agent ran it")
        if self.expected_source is not None and cell_source(cell) != self.expected_source:
            return user_text("the cell was edited after the agent changed it")
        return "apply"


def inverse_of(before: nbformat.NotebookNode, edit: BaseModel) -> InverseEdit:
    """The inverse of ``edit``, given the notebook just before it was applied."""
    if isinstance(edit, InsertCell):
        return inverse_from_cell(edit, None, None)
    cell_id = _cell_id(edit)
    index = cell_index(before, cell_id)
    if index is None:
        raise ToolError("E_CELL_NOT_FOUND", user_text("no cell with id %1", repr(cell_id)))
    return inverse_from_cell(edit, index, before.cells[index])


def inverse_from_cell(edit: BaseModel, index: int | None, old: dict[str, Any] | None) -> InverseEdit:
    """The inverse of ``edit``, given the cell it touched as it was just before (``old``, at ``index``; None
    for an insert): all an open tab needs to send back for the undo of one edit."""
    if isinstance(edit, InsertCell):
        cell = edit.cell
        return InverseEdit(DeleteCell(cell_id=str(cell["id"])), str(cell["id"]), cell_source(cell))
    if old is None:
        raise ToolError("E_CELL_NOT_FOUND", user_text("no cell with id %1", repr(_cell_id(edit))))
    if isinstance(edit, SetCellSource):
        return InverseEdit(
            SetCellSource(cell_id=edit.cell_id, source=cell_source(old)), edit.cell_id, edit.source
        )
    if isinstance(edit, DeleteCell):
        return InverseEdit(InsertCell(index=index or 0, cell=dict(old)), edit.cell_id)
    if isinstance(edit, MoveCell):
        return InverseEdit(MoveCell(cell_id=edit.cell_id, to_index=index or 0), edit.cell_id)
    if isinstance(edit, SetCellOutputs):
        inverse = SetCellOutputs(
            cell_id=edit.cell_id,
            outputs=[dict(output) for output in old.get("outputs", [])],
            execution_count=old.get("execution_count"),
        )
        return InverseEdit(
            inverse, edit.cell_id, expected_execution_count=edit.execution_count, checks_outputs=True
        )
    raise TypeError(f"unknown notebook edit {type(edit).__name__}")


def _cell_id(edit: BaseModel) -> str:
    """The id of the cell an edit of an existing cell addresses."""
    if isinstance(edit, SetCellSource | DeleteCell | MoveCell | SetCellOutputs):
        return edit.cell_id
    raise TypeError(f"{type(edit).__name__} addresses no existing cell")
