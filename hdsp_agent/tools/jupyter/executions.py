"""Executions that outlive the tool call that started them.

A run is a background task that owns its kernel client, collects outputs into an ``ExecutionRecord`` and, when
the kernel is done, hands the record to ``on_finish`` (which writes outputs and execution count into the
cell). The tool call only waits on the record for its wait time: if the code is still running then, the call
answers ``running`` and ``get_cell_output`` (or the next ``run_cell``) picks the record up later. Cancelling
the turn that started a run interrupts the kernel, as JupyterLab's stop button does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..base import CancelToken, ToolError
from .kernel import KernelDiedError, KernelNotReadyError, KernelRun, interrupt
from .outputs import OutputCollector

# How often a waiting tool call looks at the record (and may report progress).
PROGRESS_INTERVAL_SECONDS = 1.0
# Progress is reported when the latest output line changes, and at least this often while nothing changes.
PROGRESS_HEARTBEAT_SECONDS = 10.0

# Finished runs kept for get_cell_output (execute_code's runs have no cell to read the outputs from later).
KEPT_FINISHED_RECORDS = 100

FinishHandler = Callable[["ExecutionRecord"], Awaitable[None]]
ProgressHandler = Callable[[str, float], None]

log = logging.getLogger("hdsp_agent.tools.jupyter")


@dataclass
class ExecutionRecord:
    """What one execution has produced so far. ``handle``: the cell id, or an ``exec-…`` id (execute_code)."""

    handle: str
    path: str
    kernel_id: str
    code: str
    cell_id: str | None
    collector: OutputCollector = field(default_factory=OutputCollector)
    started_at: float = field(default_factory=time.monotonic)
    finished_at: float | None = None
    # ok | error | aborted (the kernel's reply) | died | canceled | failed; None while running.
    outcome: str | None = None
    problem: str | None = None
    # Set when the outputs could not be written into the notebook (it changed, the cell was deleted, ...).
    document_error: str | None = None
    user_expressions: dict[str, Any] = field(default_factory=dict)
    # The model has been told the final result.
    reported: bool = False
    task: asyncio.Task[None] | None = None
    # Set to interrupt the run as the turn's cancel would (the user closed its notebook: ``stop_runs_of``).
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    @property
    def state(self) -> str:
        if self.outcome is not None:
            return self.outcome
        return "running" if self.collector.started else "queued"

    @property
    def elapsed(self) -> float:
        return (self.finished_at or time.monotonic()) - self.started_at

    @property
    def execution_count(self) -> int | None:
        return self.collector.execution_count

    async def wait(self, timeout: float, on_progress: ProgressHandler | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the run (and the write of its outputs) to finish; True if it
        did.

        Never cancels the run: a call that stops waiting leaves it running.
        """
        assert self.task is not None
        deadline = time.monotonic() + timeout
        last_line: str | None = None
        last_report = time.monotonic()
        while not self.task.done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            await asyncio.wait({self.task}, timeout=min(remaining, PROGRESS_INTERVAL_SECONDS))
            if on_progress is None or self.task.done():
                continue
            line, now = self.collector.latest_line(), time.monotonic()
            if line != last_line or now - last_report >= PROGRESS_HEARTBEAT_SECONDS:
                on_progress(line, self.elapsed)
                last_line, last_report = line, now
        return True


class ExecutionRegistry:
    """The runs of every notebook, by (path, handle); the newest run of a cell replaces the older record."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], ExecutionRecord] = {}

    def start(
        self,
        record: ExecutionRecord,
        kernel_manager: Any,
        *,
        on_finish: FinishHandler | None = None,
        cancel: CancelToken | None = None,
        silent: bool = False,
        store_history: bool = True,
        user_expressions: dict[str, str] | None = None,
    ) -> ExecutionRecord:
        run = KernelRun(
            kernel_manager,
            record.kernel_id,
            record.code,
            record.collector.handle,
            silent=silent,
            store_history=store_history,
            user_expressions=user_expressions,
        )
        record.task = asyncio.ensure_future(self._drive(record, run, kernel_manager, on_finish, cancel))
        self._records.pop((record.path, record.handle), None)
        self._records[(record.path, record.handle)] = record
        self._forget_oldest()
        return record

    def _forget_oldest(self) -> None:
        """Keep at most ``KEPT_FINISHED_RECORDS`` reported runs, dropping the oldest (cells keep outputs)."""
        finished = [key for key, record in self._records.items() if record.done and record.reported]
        for key in finished[: max(0, len(finished) - KEPT_FINISHED_RECORDS)]:
            del self._records[key]

    def get(self, path: str, handle: str) -> ExecutionRecord | None:
        return self._records.get((path, handle))

    def active_on(self, kernel_id: str) -> list[ExecutionRecord]:
        return [
            record for record in self._records.values() if record.kernel_id == kernel_id and not record.done
        ]

    def unreported(self, path: str, *, exclude: str | None = None) -> list[ExecutionRecord]:
        """Runs of ``path`` that finished after the model last heard of them."""
        return [
            record
            for (record_path, handle), record in self._records.items()
            if record_path == path and handle != exclude and record.done and not record.reported
        ]

    def stop_runs_of(self, paths: set[str], reason: str) -> list[ExecutionRecord]:
        """Interrupt the runs still going in the notebooks ``paths`` (the user closed them: the agent's work
        there ends, a long cell included), as JupyterLab's stop button does. Returns the runs stopped."""
        records = [record for record in self._records.values() if record.path in paths and not record.done]
        for record in records:
            record.problem = reason
            record.stop.set()
        return records

    async def cancel_kernel(self, kernel_id: str, reason: str) -> None:
        """Stop waiting on the kernel's runs (it is being restarted: they will never reply)."""
        records = self.active_on(kernel_id)
        for record in records:
            record.problem = reason
            assert record.task is not None
            record.task.cancel()
        await asyncio.gather(*(record.task for record in records if record.task), return_exceptions=True)

    async def aclose(self) -> None:
        tasks = [record.task for record in self._records.values() if record.task and not record.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _drive(
        self,
        record: ExecutionRecord,
        run: KernelRun,
        kernel_manager: Any,
        on_finish: FinishHandler | None,
        cancel: CancelToken | None,
    ) -> None:
        running = asyncio.ensure_future(run.run())
        stops: list[Awaitable[Any]] = [record.stop.wait()]
        if cancel is not None:
            stops.append(cancel.wait())
        stop_request: asyncio.Future[Any] | None = asyncio.ensure_future(_first(stops))
        try:
            while True:
                waiting_on = {running} | ({stop_request} if stop_request is not None else set())
                done, _ = await asyncio.wait(waiting_on, return_when=asyncio.FIRST_COMPLETED)
                if running in done:
                    break
                # The turn was cancelled (or the notebook closed): interrupt, then keep collecting until the
                # kernel reports the interrupt.
                stop_request = None
                await interrupt(kernel_manager, record.kernel_id)
            reply = running.result()
            record.outcome = reply.status
            record.user_expressions = reply.user_expressions
            if reply.execution_count is not None and record.collector.execution_count is None:
                record.collector.execution_count = reply.execution_count
        except KernelDiedError as error:
            record.outcome, record.problem = "died", str(error)
        except KernelNotReadyError as error:
            record.outcome, record.problem = "failed", str(error)
        except asyncio.CancelledError:
            # Let the run close its kernel client before this task ends.
            running.cancel()
            await asyncio.wait({running}, timeout=2.0)
            record.outcome = "canceled"
            record.finished_at = time.monotonic()
            raise
        except Exception as error:
            log.exception("execution of %s in %s failed", record.handle, record.path)
            record.outcome, record.problem = "failed", f"{type(error).__name__}: {error}"
        finally:
            if stop_request is not None:
                stop_request.cancel()
        record.finished_at = time.monotonic()
        if on_finish is not None:
            try:
                await on_finish(record)
            except ToolError as error:
                record.document_error = error.message
            except Exception as error:
                log.exception("writing the outputs of %s into %s failed", record.handle, record.path)
                record.document_error = f"{type(error).__name__}: {error}"


async def _first(waits: list[Awaitable[Any]]) -> None:
    """Return when the first of ``waits`` does (the others are cancelled)."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
