"""A running cell's outputs shown in the notebook open in JupyterLab while the kernel produces them.

The kernel's messages come to the server (the run has its own kernel client); the browser only sees what the
NotebookBridge is told. So the outputs collected so far are pushed to the live cell, at most every
``PUSH_INTERVAL_SECONDS`` (a loop printing thousands of lines must not send thousands of notebook updates).
"""

from __future__ import annotations

import asyncio

import nbformat

from ...documents.contract import CellRead, LiveNotebookGateway
from ...documents.edits import SetCellOutputs
from .executions import ExecutionRecord

PUSH_INTERVAL_SECONDS = 0.1
# Each push carries all outputs so far: a cell printing megabytes waits longer between pushes, so the socket
# and the browser's rendering keep up (+0.1 s per MB last sent).
SECONDS_PER_BYTE = 0.1 / 1_000_000


class LiveOutputs:
    def __init__(
        self,
        live: LiveNotebookGateway,
        record: ExecutionRecord,
        before: nbformat.NotebookNode | CellRead,
    ) -> None:
        self.live = live
        self.record = record
        # The notebook (or the run's cell) before the run, for undo.
        self.before = before
        self._scheduled: asyncio.TimerHandle | None = None
        self._stopped = False
        self._last_size = 0
        record.collector.on_change = self._changed

    def show(self) -> None:
        """Push the outputs so far (an empty list at the start clears the old ones, as JupyterLab does)."""
        self._scheduled = None
        if self._stopped or self.record.cell_id is None:
            return
        edit = SetCellOutputs(
            cell_id=self.record.cell_id,
            outputs=[dict(output) for output in self.record.collector.outputs],
            execution_count=None,
            running=True,
        )
        self._last_size = self.live.show(self.record.path, edit)

    def settle(self) -> None:
        """The run ended without its final write (cancelled, e.g. by a kernel restart): leave the cell idle
        with what it printed, not shown as running forever."""
        if self._stopped:
            return
        self.stop()
        if self.record.cell_id is not None:
            edit = SetCellOutputs(
                cell_id=self.record.cell_id,
                outputs=[dict(output) for output in self.record.collector.outputs],
                execution_count=self.record.execution_count,
            )
            self.live.show(self.record.path, edit)

    def stop(self) -> None:
        self._stopped = True
        self.record.collector.on_change = None
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None

    def _changed(self) -> None:
        if self._scheduled is None and not self._stopped:
            delay = PUSH_INTERVAL_SECONDS + self._last_size * SECONDS_PER_BYTE
            self._scheduled = asyncio.get_running_loop().call_later(delay, self.show)
