"""Where a new cell from ``run_cell(code)`` or ``insert_cell`` (without a position) lands.

After the agent's previous new cell in this turn, so a turn's cells read top to bottom in the order they were
made; the turn's first goes after the cell the user was in when they sent the message (the active cell), else
at the end. A notebook that holds only the launcher's empty starter cell has that cell reused for the first
code cell, so a new notebook does not begin with an empty cell above the agent's work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base import ToolContext


@dataclass(frozen=True)
class Place:
    index: int  # where to insert
    reuse: str | None = None  # or the id of the empty starter cell to write into instead


class CellPlacement:
    def __init__(self) -> None:
        # session id → path → (turn id, id of the agent's last new cell in that turn)
        self._last: dict[str, dict[str, tuple[str, str]]] = {}

    def place(self, ctx: ToolContext, path: str, cells: list[Any], cell_type: str = "code") -> Place:
        turn = str(ctx.client_context.get("turn_id", ""))
        last = self._last.get(ctx.session_id, {}).get(path)
        anchors = []
        if last is not None and last[0] == turn:
            anchors.append(last[1])
        elif cell_type == "code" and len(cells) == 1 and is_empty_starter(cells[0]):
            # The starter cell is also the cell in view of a new notebook: write into it, not after it.
            return Place(0, reuse=str(cells[0].get("id")))
        anchors.append(ctx.client_context.get("active_cell_id"))
        for anchor in anchors:
            if not anchor:
                continue
            index = next((i for i, cell in enumerate(cells) if cell.get("id") == anchor), None)
            if index is not None:
                return Place(index + 1)
        if cell_type == "code" and len(cells) == 1 and is_empty_starter(cells[0]):
            return Place(0, reuse=str(cells[0].get("id")))
        return Place(len(cells))

    def placed(self, ctx: ToolContext, path: str, cell_id: str) -> None:
        """The agent made (or filled) ``cell_id`` in ``path``: this turn's next cell goes after it."""
        turn = str(ctx.client_context.get("turn_id", ""))
        self._last.setdefault(ctx.session_id, {})[path] = (turn, cell_id)

    def forget_session(self, session_id: str) -> None:
        self._last.pop(session_id, None)


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
