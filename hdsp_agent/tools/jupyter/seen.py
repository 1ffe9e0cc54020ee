"""What each agent session last saw of each notebook, so an approval dialog can show a cell's code and a label
its index without asking the tab (or the file) again.

A whole read (read_notebook, insert_cell) replaces it; a single cell read (edit_cell, delete_cell, move_cell,
run_cell on an open tab, which send one cell) or an applied edit updates that one cell: in the whole notebook
when one was seen, else on its own.
"""

from __future__ import annotations

from typing import Any

import nbformat

Key = tuple[str, str]  # (session id, notebook path)


class SeenNotebooks:
    def __init__(self) -> None:
        self._notebooks: dict[Key, nbformat.NotebookNode] = {}
        # Cells seen on their own (no whole notebook seen since): id → (index, cell).
        self._cells: dict[Key, dict[str, tuple[int, dict[str, Any]]]] = {}

    def saw_notebook(self, key: Key, notebook: nbformat.NotebookNode) -> None:
        self._notebooks[key] = notebook
        self._cells.pop(key, None)

    def saw_cell(self, key: Key, cell_id: str, index: int | None, cell: dict[str, Any] | None) -> None:
        """The cell ``cell_id`` is now ``cell`` at ``index`` (None: it is gone)."""
        notebook = self._notebooks.get(key)
        if notebook is not None:
            self._notebooks[key] = _with_cell(notebook, cell_id, index, cell)
            return
        cells = self._cells.setdefault(key, {})
        if cell is None or index is None:
            cells.pop(cell_id, None)
        else:
            cells[cell_id] = (index, cell)

    def forget(self, key: Key) -> None:
        self._notebooks.pop(key, None)
        self._cells.pop(key, None)

    def sessions(self) -> set[str]:
        """The sessions that saw something (a notebook or a cell)."""
        return {key[0] for key in (*self._notebooks, *self._cells)}

    def forget_session(self, session_id: str) -> None:
        """Everything ``session_id`` saw (a deleted conversation keeps no whole notebooks behind)."""
        for key in [key for key in (*self._notebooks, *self._cells) if key[0] == session_id]:
            self.forget(key)

    def cell(self, key: Key, cell_id: str) -> dict[str, Any] | None:
        found = self._find(key, cell_id)
        return found[1] if found is not None else None

    def index(self, key: Key, cell_id: str) -> int | None:
        found = self._find(key, cell_id)
        return found[0] if found is not None else None

    def _find(self, key: Key, cell_id: str) -> tuple[int, dict[str, Any]] | None:
        notebook = self._notebooks.get(key)
        if notebook is not None:
            return next(
                ((i, cell) for i, cell in enumerate(notebook.cells) if cell.get("id") == cell_id), None
            )
        return self._cells.get(key, {}).get(cell_id)


def _with_cell(
    notebook: nbformat.NotebookNode, cell_id: str, index: int | None, cell: dict[str, Any] | None
) -> nbformat.NotebookNode:
    """A new notebook node: ``notebook`` with ``cell_id`` replaced by ``cell`` at ``index`` (or removed)."""
    after = nbformat.NotebookNode(notebook)
    cells = [existing for existing in notebook.cells if existing.get("id") != cell_id]
    if cell is not None:
        position = index if index is not None else len(cells)
        cells.insert(max(0, min(position, len(cells))), nbformat.from_dict(cell))
    after["cells"] = cells
    return after
