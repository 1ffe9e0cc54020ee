"""Where a new cell from ``run_cell(code)`` or ``insert_cell`` (without a position) lands.

After the agent's previous new cell in this turn, so a turn's cells read top to bottom in the order they were
made; the turn's first goes after the cell the user was in when they sent the message (the active cell), else
at the end. A notebook that holds only the launcher's empty starter cell has that cell reused for the first
code cell, so a new notebook does not begin with an empty cell above the agent's work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ...documents.contract import CellRead
from ...documents.edits import E_CELL_NOT_FOUND
from ..base import ToolContext, ToolError


class _Cells(Protocol):
    """What placement reads of a notebook (``CallNotebook``): whether it exists and one cell at a time."""

    async def exists(self) -> bool: ...

    async def read_cell(
        self, cell_id: str | None = None, index: int | None = None, purpose: Any = "change"
    ) -> CellRead: ...


@dataclass(frozen=True)
class Place:
    index: int  # where to insert (-1: at the end)
    reuse: CellRead | None = None  # or the empty starter cell to write into instead (as read)
    # The notebook's last cell, when placing read it (its kernelspec spares the caller another read).
    last: CellRead | None = None


class CellPlacement:
    def __init__(self) -> None:
        # session id → path → (turn id, id of the agent's last new cell in that turn)
        self._last: dict[str, dict[str, tuple[str, str]]] = {}

    async def place(self, ctx: ToolContext, path: str, notebook: _Cells, cell_type: str = "code") -> Place:
        """Where the next new cell goes. Only single cells are read (the anchor; the last cell for the
        starter), so placing costs O(cell) in an open tab whatever the notebook's size."""
        if not await notebook.exists():
            return Place(-1)
        turn = str(ctx.client_context.get("turn_id", ""))
        last = self._last.get(ctx.session_id, {}).get(path)
        anchors: list[Any] = []
        last_cell: CellRead | None = None
        if last is not None and last[0] == turn:
            anchors.append(last[1])
        elif cell_type == "code":
            # The starter cell is also the cell in view of a new notebook: write into it, not after it.
            last_cell = await _last_cell(notebook)
            if last_cell is not None and last_cell.cell_count == 1 and is_empty_starter(last_cell.cell):
                return Place(0, reuse=last_cell, last=last_cell)
        anchors.append(ctx.client_context.get("active_cell_id"))
        for anchor in anchors:
            if not anchor:
                continue
            try:
                return Place(
                    (await notebook.read_cell(str(anchor), purpose="peek")).index + 1, last=last_cell
                )
            except ToolError as error:
                if error.code != E_CELL_NOT_FOUND:
                    raise
        return Place(-1, last=last_cell)

    def placed(self, ctx: ToolContext, path: str, cell_id: str) -> None:
        """The agent made (or filled) ``cell_id`` in ``path``: this turn's next cell goes after it."""
        turn = str(ctx.client_context.get("turn_id", ""))
        self._last.setdefault(ctx.session_id, {})[path] = (turn, cell_id)

    def forget_session(self, session_id: str) -> None:
        self._last.pop(session_id, None)


async def _last_cell(notebook: _Cells) -> CellRead | None:
    """The notebook's last cell (with the cell count: one empty cell is the launcher's starter), or None."""
    try:
        return await notebook.read_cell(index=-1)
    except ToolError as error:
        if error.code != E_CELL_NOT_FOUND:
            raise
        return None


def is_empty_starter(cell: Any) -> bool:
    """A code cell with nothing in it, never run: what a new notebook from the launcher starts with."""
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(source)
    return (
        cell.get("cell_type") == "code"
        and not str(source).strip()
        and not cell.get("outputs")
        and cell.get("execution_count") is None
    )
