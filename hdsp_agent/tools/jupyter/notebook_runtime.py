"""What the notebook tools share across calls: the documents, undo history, kernels and running executions.

One ``NotebookRuntime`` per server (or CLI run). Tools get the Jupyter managers and the live gateway from
their ``ToolContext``; the runtime keeps the state that must survive between calls: which ``last_modified``
each agent session last saw (conflict detection), the undo history, and executions still running after their
call returned.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import nbformat
from pydantic import BaseModel

from ...documents.contract import Applied, CellRead, FileUndo, NotebookGateway, OutputDetail, ReadPurpose
from ...documents.edits import (
    E_CELL_NOT_FOUND,
    DeleteCell,
    InsertCell,
    MoveCell,
    SetCellOutputs,
    SetCellSource,
    cell_index,
    cell_source,
)
from ...documents.gateway import (
    E_NO_CONTENTS_MANAGER,
    FileNotebookGateway,
    NotebookSnapshot,
    ParsedNotebooks,
    PathLocks,
)
from ...documents.history import NotebookUndoStore, UndoEntry
from ...documents.inverse import InverseEdit
from ...documents.live import E_NOTEBOOK_CLOSED
from ...user_text import user_text
from ..base import ToolContext, ToolError
from .executions import ExecutionRecord, ExecutionRegistry
from .kernel import E_NO_KERNEL_MANAGER, session_kernel_id, start_notebook_session
from .kernel_changes import KernelChanges
from .live_outputs import LiveOutputs
from .placement import CellPlacement
from .seen import SeenNotebooks

# Where a new kernel session's kernelspec comes from, asked only when a session must start.
KernelspecSource = Callable[[], Awaitable[dict[str, Any]]]


class NotebookRuntime:
    def __init__(self) -> None:
        self.undo = NotebookUndoStore()
        self.executions = ExecutionRegistry()
        # Each conversation's kernels as they were before the turn's first run: the review lists the changes.
        self.kernel_changes = KernelChanges(self.executions)
        # session id → path → last_modified this session last read or wrote.
        self._stamps: dict[str, dict[str, Any]] = {}
        self._file_locks = PathLocks()
        # Notebooks parsed from their files, reused while the files stay unchanged (any session).
        self._parsed = ParsedNotebooks()
        # Snapshot-then-apply must not interleave with another change, or the snapshot would not be the prior
        # state.
        self._change_locks = PathLocks()
        self._kernel_locks = PathLocks()
        # What each session last saw of each notebook, so an approval dialog can show a cell's code without
        # reading it.
        self._seen = SeenNotebooks()
        # Where each conversation's next new cell goes (after its previous one in the turn).
        self.placement = CellPlacement()

    # -- documents -------------------------------------------------------------------------------------------

    async def open(self, ctx: ToolContext, path: str) -> CallNotebook:
        """``path`` for the rest of this call: the gateway is chosen here, once (see ``CallNotebook``)."""
        return CallNotebook(self, ctx, path, await self.gateway(ctx, path))

    async def gateway(self, ctx: ToolContext, path: str) -> NotebookGateway:
        """The live notebook when it is open in a connected JupyterLab, else the file."""
        live = ctx.notebook_gateway
        if live is not None and live.closed_during_turn(ctx.session_id, path):
            raise ToolError(
                E_NOTEBOOK_CLOSED,
                user_text(
                    "%1 was closed in JupyterLab during this turn: the agent's work on it has ended, "
                    "nothing was changed or run",
                    path,
                ),
                user_text(
                    "Do not change or run this notebook again in this turn; tell the user, who can reopen it "
                    "and ask again."
                ),
            )
        if live is not None and await live.is_open(path):
            return live
        if live is not None and ctx.contents_manager is not None:
            # The tab holding the agent's unsaved changes went away (closed, or reloading): a reloading tab
            # gets them back and is used; else they are written to the file first, which this session has
            # seen live, so an older file stamp must not flag that write as someone else's change.
            if await live.reclaim(path, ctx.contents_manager):
                return live
            self._stamps.get(ctx.session_id, {}).pop(path, None)
        if ctx.contents_manager is None:
            raise ToolError(
                E_NO_CONTENTS_MANAGER,
                user_text("notebooks cannot be opened here: no Jupyter contents manager is available"),
                user_text("Run this inside JupyterLab or through the hdsp-agent command line."),
            )
        return self.file_gateway(ctx)

    async def read(self, ctx: ToolContext, path: str, purpose: ReadPurpose = "show") -> nbformat.NotebookNode:
        """The notebook now (a call that does nothing else with it; others use ``open``)."""
        return await (await self.open(ctx, path)).read(purpose)

    async def change(self, ctx: ToolContext, path: str, edit: BaseModel, description: str) -> Applied:
        """Apply ``edit`` with undo (a redo, or a call that does nothing else with the notebook; others use
        ``open``). Nothing is read: an open tab answers with the one cell, O(cell)."""
        document = await self.open(ctx, path)
        return await self._apply(ctx, path, document.gateway, edit, description, None)

    async def _read(
        self,
        ctx: ToolContext,
        path: str,
        gateway: NotebookGateway,
        purpose: ReadPurpose,
        outputs: OutputDetail = "full",
        output_cells: tuple[int, int] | None = None,
    ) -> nbformat.NotebookNode:
        # A brief read is kept as seen too: what is looked up in it later is sources and indices.
        notebook = await gateway.read(path, purpose, outputs, output_cells)
        if purpose != "peek":
            self._seen.saw_notebook((ctx.session_id, path), notebook)
        return notebook

    async def _read_cell(
        self,
        ctx: ToolContext,
        path: str,
        gateway: NotebookGateway,
        cell_id: str | None,
        index: int | None,
        purpose: ReadPurpose,
    ) -> CellRead:
        read = await gateway.read_cell(path, cell_id, index, purpose)
        if purpose == "peek":
            pass  # read for the metadata only: the model was not shown the cell
        elif read.notebook is not None:
            self._seen.saw_notebook((ctx.session_id, path), read.notebook)
        else:
            self._seen.saw_cell((ctx.session_id, path), read.cell_id, read.index, read.cell)
        return read

    async def _apply(
        self,
        ctx: ToolContext,
        path: str,
        gateway: NotebookGateway,
        edit: BaseModel,
        description: str,
        before: nbformat.NotebookNode | CellRead | None,
        version: int | None = None,
    ) -> Applied:
        """Apply ``edit``, after recording in the session's undo history how to take it back.

        A file: its exact prior content is put back (refused if the file changed since). A notebook open in
        JupyterLab: the inverse edit on the one cell concerned, so the user's later typing elsewhere stays.
        ``before``: the live notebook before the change, as this call already read it (or a run's notebook
        before its outputs were shown live): the inverse is computed from it and the tab sends back only the
        cell it changed; without it the tab's prior cell gives the inverse. ``before`` may be the one cell
        read (``CellRead``), and ``version`` the tab's version at that read (a change since refuses the edit).
        """
        async with self._change_locks(path):
            applied = await gateway.apply(path, edit, before, version)
        step = applied.undo
        inverse = step if isinstance(step, InverseEdit) else None
        restore = (
            partial(self._undo_live, ctx, path, step)
            if isinstance(step, InverseEdit)
            else partial(gateway.restore, path, step.snapshot)
        )
        self.undo.record(
            UndoEntry(
                session_id=ctx.session_id,
                call_id=ctx.call_id,
                path=path,
                description=description,
                restore=restore,
                cell_id=inverse.cell_id if inverse is not None else None,
                undo_cell=restore if inverse is not None else None,
                ctx=ctx,
                inverse=inverse,
                snapshot=step.snapshot if isinstance(step, FileUndo) else None,
                after_stamp=step.after_stamp if isinstance(step, FileUndo) else None,
            )
        )
        key = (ctx.session_id, path)
        if applied.notebook is not None:
            self._seen.saw_notebook(key, applied.notebook)
        else:
            self._seen.saw_cell(key, _touched(edit), applied.index, applied.cell)
        return applied

    # -- planned undo (agent/undo.py checks everything on these before it applies anything) ------------------

    async def undo_view(self, ctx: ToolContext, path: str) -> nbformat.NotebookNode:
        """A copy of the notebook as an undo would find it now (the open tab's model, else the file)."""
        gateway = await self.gateway(ctx, path)
        return copy.deepcopy(await gateway.read(path, "peek"))

    async def apply_planned(self, ctx: ToolContext, path: str, edit: BaseModel) -> None:
        """Apply a cell edit an undo planned and checked: to the open tab's model, else to the file."""
        gateway = await self.gateway(ctx, path)
        async with self._change_locks(path):
            # The plan checked the cells; the user may have saved the file since the turn, which is fine.
            await gateway.acknowledge(path)
            await gateway.apply(path, edit)
        self._seen.forget((ctx.session_id, path))

    def file_gateway(self, ctx: ToolContext) -> FileNotebookGateway:
        if ctx.contents_manager is None:
            raise ToolError(E_NO_CONTENTS_MANAGER, "no Jupyter contents manager is available here")
        return FileNotebookGateway(
            ctx.contents_manager, self._stamps.setdefault(ctx.session_id, {}), self._file_locks, self._parsed
        )

    async def file_stamp(self, ctx: ToolContext, path: str) -> Any:
        """The notebook file's ``last_modified`` now; None when there is no file."""
        return await self.file_gateway(ctx).last_modified(path)

    async def replace_file(
        self, ctx: ToolContext, path: str, content: str | None
    ) -> tuple[NotebookSnapshot, Any]:
        """Put ``content`` in the notebook's file (None: delete the file), as an undo planned and checked it.

        Returns the file before (for redo) and its ``last_modified`` after.
        """
        gateway = self.file_gateway(ctx)
        async with self._change_locks(path):
            before = await gateway.snapshot(path)
            # The plan compared the file with what the agent left; the session's own stamp may be older.
            gateway.stamps[path] = before.last_modified
            await gateway.restore(path, NotebookSnapshot(path, content))
            after = gateway.stamps.get(path)
        self._seen.forget((ctx.session_id, path))
        return before, after

    def record_file_replacement(
        self, ctx: ToolContext, path: str, before: NotebookSnapshot, after_stamp: Any, description: str
    ) -> None:
        """Record a file-mode change made by a redo, so the turn can be undone again."""
        gateway = self.file_gateway(ctx)
        self.undo.record(
            UndoEntry(
                session_id=ctx.session_id,
                call_id=ctx.call_id,
                path=path,
                description=description,
                restore=partial(gateway.restore, path, before),
                ctx=ctx,
                snapshot=before,
                after_stamp=after_stamp,
            )
        )

    def live_undo(self, ctx: ToolContext, path: str, inverse: InverseEdit) -> Callable[[], Awaitable[None]]:
        """The undo of a cell edit (``inverse``), applied to the notebook as it is then (a restarted server
        rebuilds a stored entry's with it)."""
        return partial(self._undo_live, ctx, path, inverse)

    async def _undo_live(self, ctx: ToolContext, path: str, inverse: InverseEdit) -> None:
        """Apply ``inverse`` to the notebook as it is now: open in JupyterLab, else its file."""
        gateway = await self.gateway(ctx, path)
        async with self._change_locks(path):
            current = await gateway.read(path, "show")  # the user may have saved since: that is fine here
            if inverse.applies_to(current, path):
                await gateway.apply(path, inverse.edit, current)

    def seen_cell(self, session_id: str, path: str, cell_id: str) -> dict[str, Any] | None:
        return self._seen.cell((session_id, path), cell_id)

    def seen_index(self, session_id: str, path: str, cell_id: str) -> int | None:
        return self._seen.index((session_id, path), cell_id)

    def seen_source(self, session_id: str, path: str, cell_id: str) -> str | None:
        cell = self.seen_cell(session_id, path, cell_id)
        return cell_source(cell) if cell is not None else None

    def show_live(
        self, notebook: CallNotebook, record: ExecutionRecord, before: nbformat.NotebookNode | CellRead
    ) -> LiveOutputs | None:
        """When the run's notebook is open in JupyterLab, show its outputs there as they come.

        ``before``: the notebook (or the cell) as the run found it (just read or inserted), kept for undo: the
        final write must not record the partial outputs shown meanwhile as the prior state.
        """
        live = notebook.ctx.notebook_gateway
        if record.cell_id is None or not notebook.live or live is None:
            return None
        stream = LiveOutputs(live, record, before=before)
        stream.show()
        return stream

    async def write_outputs(
        self, ctx: ToolContext, record: ExecutionRecord, stream: LiveOutputs | None = None
    ) -> None:
        """Put a finished run's outputs and execution count into its cell."""
        if record.cell_id is None:
            return
        if stream is not None:
            stream.stop()
        edit = SetCellOutputs(
            cell_id=record.cell_id,
            outputs=[dict(output) for output in record.collector.outputs],
            execution_count=record.execution_count,
        )
        before = stream.before if stream is not None else None
        # Opened anew (the tab may be gone by now); nothing needs the notebook after, so it is not read.
        document = await self.open(ctx, record.path)
        await self._apply(
            ctx, record.path, document.gateway, edit, f"outputs of cell {record.cell_id}", before
        )

    # -- kernels ---------------------------------------------------------------------------------------------

    async def kernel_id(
        self,
        ctx: ToolContext,
        path: str,
        kernelspec: KernelspecSource | None = None,
        *,
        start: bool = True,
    ) -> str | None:
        """The kernel of ``path``'s session; with ``start``, a new session if none, its kernel named by the
        notebook's kernelspec. ``kernelspec`` is asked only then: a notebook whose kernel runs is not read."""
        if ctx.session_manager is None or ctx.kernel_manager is None:
            raise ToolError(
                E_NO_KERNEL_MANAGER,
                user_text("no Jupyter kernel manager is available here"),
                user_text("Run this inside JupyterLab or through the hdsp-agent command line."),
            )
        async with self._kernel_locks(path):
            kernel_id = await session_kernel_id(ctx.session_manager, path)
            if kernel_id is not None or not start:
                return kernel_id
            spec = await kernelspec() if kernelspec is not None else {}
            return await start_notebook_session(ctx.session_manager, path, spec.get("name"))

    async def forget_session(self, session_id: str) -> None:
        """The conversation was deleted: the stamps and notebooks it last saw (whole notebooks), its undo
        history and its kernels' snapshots go."""
        self._stamps.pop(session_id, None)
        self._seen.forget_session(session_id)
        self.placement.forget_session(session_id)
        self.undo.forget(session_id)
        await self.kernel_changes.forget_session(session_id)

    async def aclose(self) -> None:
        """Stop waiting on running executions (the server or the CLI is shutting down)."""
        await self.executions.aclose()


class CallNotebook:
    """One notebook as one tool call sees it: the gateway (live tab or file) is chosen once, when the call
    opens it, so a call asks "is it open in JupyterLab?" once and all its reads and changes go one way.

    A run's final write (its outputs, possibly long after the call answered) opens the notebook anew: by then
    the tab may be closed.
    """

    def __init__(
        self, runtime: NotebookRuntime, ctx: ToolContext, path: str, gateway: NotebookGateway
    ) -> None:
        self.runtime = runtime
        self.ctx = ctx
        self.path = path
        self.gateway = gateway
        self.live = gateway.live

    async def exists(self) -> bool:
        """Live: open in a tab, so yes. File: whether it exists (insert_cell and run_cell may create it)."""
        return self.live or await self.gateway.is_open(self.path)

    async def read(
        self,
        purpose: ReadPurpose = "show",
        outputs: OutputDetail = "full",
        output_cells: tuple[int, int] | None = None,
    ) -> nbformat.NotebookNode:
        """The notebook now. ``purpose`` matters in file mode (see ``FileNotebookGateway.read``); the live
        model always holds the user's latest edits, so there is nothing to check against. ``outputs``: see
        ``contract.OutputDetail`` (brief: never pass the result as an edit's ``before``)."""
        return await self.runtime._read(self.ctx, self.path, self.gateway, purpose, outputs, output_cells)

    async def read_cell(
        self, cell_id: str | None = None, index: int | None = None, purpose: ReadPurpose = "change"
    ) -> CellRead:
        """One cell (to change or run it, or to show it): an open tab sends only that cell (O(cell) whatever
        the notebook's size), with the version it was read at; a file is read whole as before."""
        return await self.runtime._read_cell(self.ctx, self.path, self.gateway, cell_id, index, purpose)

    async def insert(self, cell: nbformat.NotebookNode, index: int, description: str) -> CellRead:
        """Insert ``cell`` at ``index`` (negative: from the end; out of range: the nearest end), with undo.

        Nothing is read first: the position is the tab's (or the file's) to clamp, and the tab answers with
        the cell where it landed, so an insert costs O(cell) whatever the notebook's size. Returns the cell
        as inserted and its index (``cell_count`` and ``kernelspec`` are not known from an insert: 0 and {};
        ``kernelspec()`` reads it); a file's keeps the whole notebook after, as ``read_cell`` does.
        """
        edit = InsertCell(index=index, cell=dict(cell))
        applied = await self.runtime._apply(self.ctx, self.path, self.gateway, edit, description, None)
        if applied.notebook is not None:
            notebook = applied.notebook
            position = cell_index(notebook, str(cell.id)) or 0
            return CellRead(cell, position, len(notebook.cells), {}, None, None, notebook)
        inserted = nbformat.from_dict(applied.cell) if applied.cell is not None else cell
        return CellRead(inserted, applied.index or 0, 0, {}, None, applied.version)

    async def kernelspec(self) -> dict[str, Any]:
        """The notebook's kernelspec (which kernel a new session runs): from a read of its last cell, O(cell)
        in an open tab; a notebook without cells is read whole (there is nothing in it to send)."""
        try:
            return dict((await self.read_cell(index=-1, purpose="peek")).kernelspec)
        except ToolError as error:
            if error.code != E_CELL_NOT_FOUND:
                raise
        return dict((await self.read("peek")).metadata.get("kernelspec") or {})

    async def change_cell(self, edit: BaseModel, description: str, read: CellRead) -> int | None:
        """Apply ``edit`` to the cell ``read`` holds, with undo; refused (``E_NOTEBOOK_CHANGED``) when the
        notebook changed since the read. Returns the cell's index after (None: deleted)."""
        before: nbformat.NotebookNode | CellRead = read.notebook if read.notebook is not None else read
        applied = await self.runtime._apply(
            self.ctx, self.path, self.gateway, edit, description, before, read.version
        )
        if applied.notebook is not None:
            return cell_index(applied.notebook, read.cell_id)
        return applied.index


def _touched(edit: BaseModel) -> str:
    """The id of the cell an edit touches."""
    if isinstance(edit, InsertCell):
        return str(edit.cell["id"])
    if isinstance(edit, SetCellSource | DeleteCell | MoveCell | SetCellOutputs):
        return edit.cell_id
    raise TypeError(f"unknown notebook edit {type(edit).__name__}")
