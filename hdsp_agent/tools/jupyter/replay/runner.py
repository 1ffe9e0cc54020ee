"""Running a copy of a notebook top to bottom in a new kernel of its kernelspec, never the user's kernel.

The kernel is started here (``jupyter_client``'s ``AsyncKernelManager``, in the notebook's directory) and shut
down when the run ends, however it ends (finished, out of time, canceled). Cells run with nbclient's
``async_execute_cell``, the code ``jupyter nbconvert --execute`` uses, so a replay costs what that costs. We
start and stop the kernel ourselves rather than through ``NotebookClient.async_setup_kernel``: that installs
SIGINT/SIGTERM handlers on the running loop, which in the server is Jupyter's own.
"""

from __future__ import annotations

import asyncio
import copy
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

DEFAULT_KERNEL = "python3"
KERNEL_START_SECONDS = 60.0

# Called before each cell runs: (position among code cells, how many, the cell's index in the notebook).
ReplayProgress = Callable[[int, int, int], None]


@dataclass
class ReplayedCell:
    index: int
    outputs: list[Any]
    # The error of the replayed cell ("NameError: name 'x' is not defined"), if it raised.
    error: str | None = None
    seconds: float = 0.0


@dataclass
class ReplayRun:
    kernel_name: str
    cells: dict[int, ReplayedCell] = field(default_factory=dict)
    # Why the run stopped before the end: "time budget", "canceled", "kernel died"; None when it finished.
    stopped: str | None = None
    seconds: float = 0.0


def kernel_name_for(notebook: Any) -> str:
    """The notebook's kernelspec if this machine has it, else the default Python kernel."""
    wanted = str(notebook.get("metadata", {}).get("kernelspec", {}).get("name") or DEFAULT_KERNEL)
    try:
        KernelSpecManager().get_kernel_spec(wanted)
    except NoSuchKernel:
        return DEFAULT_KERNEL
    return wanted


def _error_text(outputs: list[Any]) -> str | None:
    for output in outputs:
        if output.get("output_type") == "error":
            return f"{output.get('ename', '')}: {output.get('evalue', '')}"
    return None


async def replay_in_fresh_kernel(
    notebook: Any,
    working_dir: Path,
    budget_seconds: float,
    progress: ReplayProgress | None = None,
    canceled: Callable[[], bool] = lambda: False,
) -> ReplayRun:
    """Run every code cell of a copy of ``notebook`` in order; the user's notebook and kernels stay as
    they were."""
    started = time.monotonic()
    copy_of_notebook = nbformat.from_dict(copy.deepcopy(dict(notebook)))
    run = ReplayRun(kernel_name=kernel_name_for(copy_of_notebook))
    code_cells = [(i, c) for i, c in enumerate(copy_of_notebook.cells) if c.get("cell_type") == "code"]
    manager = AsyncKernelManager(kernel_name=run.kernel_name)
    await manager.start_kernel(cwd=str(working_dir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kernel_client = manager.client()
    try:
        kernel_client.start_channels()
        await kernel_client._async_wait_for_ready(timeout=KERNEL_START_SECONDS)
        client = NotebookClient(
            copy_of_notebook,
            km=manager,
            kernel_name=run.kernel_name,
            allow_errors=True,
            timeout=max(1, int(budget_seconds)),
            resources={"metadata": {"path": str(working_dir)}},
        )
        client.kc = kernel_client
        client.reset_execution_trackers()
        for position, (index, cell) in enumerate(code_cells):
            if canceled():
                run.stopped = "canceled"
                break
            remaining = budget_seconds - (time.monotonic() - started)
            if remaining <= 0:
                run.stopped = "time budget"
                break
            client.timeout = max(1, int(remaining))
            if progress is not None:
                progress(position, len(code_cells), index)
            cell_started = time.monotonic()
            try:
                await client.async_execute_cell(cell, index)
            except CellTimeoutError:
                run.stopped = "time budget"
                break
            except DeadKernelError:
                # nbclient turns a cancellation of its wait into DeadKernelError: give it back as one.
                _raise_if_cancel_requested()
                run.stopped = "kernel died"
                break
            _raise_if_cancel_requested()
            outputs = list(cell.get("outputs", []))
            run.cells[index] = ReplayedCell(
                index, outputs, _error_text(outputs), time.monotonic() - cell_started
            )
    finally:
        # Shielded: a canceled turn must still leave no kernel process behind.
        await asyncio.shield(_shut_down(manager, kernel_client))
        run.seconds = time.monotonic() - started
    return run


def _raise_if_cancel_requested() -> None:
    """nbclient swallows a task cancellation while it waits on the kernel; the caller (the executor's
    timeout or the turn's cancel) must still see the run stop as canceled."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    if cancelling is not None and cancelling():
        raise asyncio.CancelledError


async def _shut_down(manager: AsyncKernelManager, kernel_client: Any) -> None:
    try:
        kernel_client.stop_channels()
    finally:
        if manager.has_kernel:
            await manager.shutdown_kernel(now=True)
