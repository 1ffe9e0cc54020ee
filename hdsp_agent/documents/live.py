"""The notebooks open in connected JupyterLab tabs, as a ``NotebookGateway`` (live mode).

Each browser tab running the sidebar keeps one WebSocket to ``/hdsp-agent/notebooks/ws`` (its NotebookBridge).
Over it the tab says which notebooks it has open and answers requests: read the live model (unsaved edits
included), apply an edit from ``edits.py`` to it, snapshot it, restore a snapshot. The tab applies edits to
the shared notebook model, so with real-time collaboration every collaborator sees them too, and the user's
unsaved typing elsewhere in the notebook stays.

This module knows nothing of tornado: a connection (``bridge_connection.py``) is anything with a
``send(dict)``; the route feeds it the browser's messages.

The messages are the models of ``bridge_wire.py`` (a tab's ``apply`` answers with the cell it changed and the
notebook's version, never the whole notebook). Text files open in a file editor are ``live_texts.py``'s; the
two share the tabs (``bridge_connection.OpenTabs``).

Every edit applied through a tab is also written to the ``DocumentJournal`` (``journal.py``) until the
notebook is saved. A notebook announced as just loaded while its journal holds edits was reopened from its
file (a reload, a new tab): the edits are replayed into it. A journaled notebook no tab holds is written to
its file (after ``RECONNECT_GRACE_SECONDS``, the time a reload takes to announce it again) before the file is
used, and at the end of every turn; at the end of a turn a notebook still open is saved through its tab when
the user has no unsaved edits of their own in it (``settle``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection
from typing import Any

import nbformat
from pydantic import BaseModel

from ..tools.base import ToolError
from ..user_text import user_text
from .bridge_connection import (
    E_NOTEBOOK_BRIDGE,
    RECONNECT_GRACE_SECONDS,
    BridgeConnection,
    OpenTabs,
    _normalized,
    _notebook,
    log,
)
from .bridge_wire import AppliedDelta, CellResult
from .contract import Applied, CellRead, ContentsManager, OutputDetail, ReadPurpose, SettleOutcome
from .edits import E_CELL_NOT_FOUND, ensure_cell_ids
from .gateway import E_NOTEBOOK_CHANGED, NotebookSnapshot, _call
from .inverse import inverse_from_cell, inverse_of
from .journal import DocumentJournal, cell_texts, replay_onto, replayable
from .live_texts import LiveTexts, _folder_gone

__all__ = [
    "E_NOTEBOOK_BRIDGE",
    "E_NOTEBOOK_CLOSED",
    "RECONNECT_GRACE_SECONDS",
    "LiveNotebooks",
    "SettleOutcome",
]

E_NOTEBOOK_CLOSED = "E_NOTEBOOK_CLOSED"


def _typed_cells(notebook: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """The cells with something typed in them: an empty cell (the starter cell JupyterLab puts into a new
    notebook, one inserted and left empty) holds nothing of the user's."""
    return [cell for cell in cell_texts(notebook) if cell[1].strip()]


def _nothing_of_the_user_unsaved(
    live: nbformat.NotebookNode, on_disk: nbformat.NotebookNode, expected: nbformat.NotebookNode
) -> bool:
    """Whether saving the tab writes nothing the user has not chosen to save: the tab is the file plus the
    agent's changes, or the file has no cells at all (a notebook new from the launcher: there is nothing on
    disk a save could overwrite, and what the user typed in the tab is safer saved than left to a crash)."""
    return _typed_cells(live) == _typed_cells(expected) or not on_disk.get("cells")


# A brief read keeps this much of each output's text: what read_notebook shows of one at most (its full
# format; the brief one shows a line), far less than a log of megabytes.
BRIEF_OUTPUT_CHARS = 3_000


class LiveNotebooks:
    """The ``LiveNotebookGateway`` over every connected tab; a path is served by the tab that opened it last.

    It also keeps the journal of the agent's unsaved changes (see the module's docstring), and the text files
    open in the same tabs' editors (``texts``: a ``LiveTexts``), so the end of a turn settles both.
    """

    live = True

    def __init__(self) -> None:
        self.tabs = OpenTabs(on_open=self._opened, on_close=self._user_closed)
        self.texts = LiveTexts(self.tabs)
        self.journal = DocumentJournal()
        self._locks = self.tabs.locks
        self._replays: set[asyncio.Task[None]] = set()
        # The last version each notebook's tab reported (it counts every change to its model).
        self.versions: dict[str, int] = {}
        # Documents the user closed (on the tabs' change counter), and where each session's running turn
        # started: a turn's calls on a document closed after it started are refused (``closed_during_turn``).
        self._closed_at: dict[str, int] = {}
        self._turn_marks: dict[str, int] = {}
        # Told which documents the user closed (the server stops the agent's runs still going in them).
        self.close_listeners: list[Callable[[set[str]], object]] = []

    @property
    def reconnect_grace_seconds(self) -> float:
        return self.tabs.reconnect_grace_seconds

    @reconnect_grace_seconds.setter
    def reconnect_grace_seconds(self, seconds: float) -> None:
        self.tabs.reconnect_grace_seconds = seconds

    def change_mark(self, session_id: str | None = None) -> int:
        """Where the change counter is now; ``settle(..., since=mark)`` covers what changed after it.

        With ``session_id``: that session's turn starts here (see ``closed_during_turn``)."""
        if session_id is not None:
            self._turn_marks[session_id] = self.tabs.changes
        return self.tabs.changes

    def closed_during_turn(self, session_id: str, path: str) -> bool:
        """Whether the user closed ``path`` in JupyterLab after ``session_id``'s turn started: the agent's
        work on it ends there (its changes are the user's to keep or discard, and they chose)."""
        closed = self._closed_at.get(_normalized(path))
        start = self._turn_marks.get(session_id)
        return closed is not None and start is not None and closed > start

    def _user_closed(self, paths: set[str]) -> None:
        """The user closed documents in a tab that stays connected (not a reload: that disconnects).

        Closing is the user's decision about the agent's unsaved changes: "Save" wrote them (the save cleared
        the journal), "Discard" threw them away — so the journal is dropped, and nothing writes them to the
        file later. A document still open in another tab is not closed.
        """
        closed: set[str] = set()
        for path in paths:
            if self.holder(path) is not None or self.tabs.editor_holder(path) is not None:
                continue
            self.tabs.changes += 1
            self._closed_at[path] = self.tabs.changes
            self.journal.forget(path)
            self.texts.texts.pop(path, None)
            closed.add(path)
        for listener in self.close_listeners if closed else ():
            listener(closed)

    def connect(self, send: Callable[[dict[str, Any]], Any]) -> BridgeConnection:
        return self.tabs.connect(send)

    def disconnect(self, connection: BridgeConnection) -> None:
        self.tabs.disconnect(connection)

    def holder(self, path: str) -> BridgeConnection | None:
        return self.tabs.holder(path)

    def _holder_or_error(self, path: str) -> BridgeConnection:
        connection = self.holder(path)
        if connection is None:
            raise ToolError(
                E_NOTEBOOK_BRIDGE,
                user_text("%1 is no longer open in JupyterLab", path),
                user_text("Try again."),
            )
        return connection

    # -- NotebookGateway -------------------------------------------------------------------------------------

    async def is_open(self, path: str) -> bool:
        return self.holder(path) is not None

    async def read(
        self,
        path: str,
        purpose: ReadPurpose = "show",
        outputs: OutputDetail = "full",
        output_cells: tuple[int, int] | None = None,
    ) -> nbformat.NotebookNode:
        """The live model; ``purpose`` does not matter: the tab holds the user's latest edits. ``brief``: the
        tab leaves out the outputs' large payloads (``BRIEF_OUTPUT_CHARS``), and with ``output_cells`` the
        outputs of every other cell."""
        brief = outputs == "brief"
        output_chars = BRIEF_OUTPUT_CHARS if brief else None
        start, stop = output_cells if brief and output_cells is not None else (None, None)
        async with self._locks(_normalized(path)):
            result = await self._holder_or_error(path).request(
                "read", path, output_chars=output_chars, outputs_start=start, outputs_stop=stop
            )
            return _notebook(result, path)

    async def read_cell(
        self, path: str, cell_id: str | None = None, index: int | None = None, purpose: ReadPurpose = "change"
    ) -> CellRead:
        """One cell from the tab (``read_cell``): O(cell) on the wire, with the version it was read at."""
        async with self._locks(_normalized(path)):
            try:
                result = await self._holder_or_error(path).request(
                    "read_cell", path, cell_id=cell_id, index=index
                )
            except ToolError as error:
                if error.code != E_CELL_NOT_FOUND:
                    raise
                which = repr(cell_id) if cell_id is not None else index
                raise ToolError(
                    E_CELL_NOT_FOUND,
                    user_text("%1 has no cell %2", path, which),
                    user_text("Read the notebook with read_notebook to see the current cell ids."),
                ) from None
        read = CellResult.model_validate(result)
        self.versions[_normalized(path)] = read.version
        cell = nbformat.from_dict(read.cell)
        return CellRead(cell, read.index, read.cell_count, read.kernelspec, read.language, read.version)

    async def acknowledge(self, path: str) -> None:
        return None

    async def apply(
        self,
        path: str,
        edit: BaseModel,
        before: nbformat.NotebookNode | CellRead | None = None,
        version: int | None = None,
    ) -> Applied:
        """Apply ``edit`` in the tab, which answers with the touched cell before and after (``AppliedDelta``).

        The undo step is the inverse edit on that cell, computed from ``before`` when given (a run's final
        outputs must not take the partial ones shown meanwhile as the prior state), else from the tab's prior
        cell. The notebook after is ``before`` with the delta, when ``before`` is a whole notebook.
        ``version``: the tab refuses the edit if its notebook changed since that version
        (``E_NOTEBOOK_CHANGED``): a stale read is caught by one number, not by comparing notebooks.
        """
        key = _normalized(path)
        async with self._locks(key):
            entry = self.journal.record(key, edit)
            self.tabs.changed(key)
            try:
                result = await self._holder_or_error(path).request(
                    "apply", path, edit=edit.model_dump(), base_version=version
                )
            except ToolError as error:
                # A tab that refused the edit did not apply it; one that went away may have: keep that one,
                # replaying it skips what the notebook already has.
                if "disconnected" not in error.message:
                    self.journal.discard(key, entry)
                if error.code == E_NOTEBOOK_CHANGED:
                    raise _changed_since_read(path) from None
                raise
            entry.acknowledged = True
        delta = AppliedDelta.model_validate(result)
        self.versions[key] = delta.version
        after: nbformat.NotebookNode | None = None
        if isinstance(before, CellRead):
            undo = inverse_from_cell(edit, before.index, before.cell)
        elif before is not None:
            undo = inverse_of(before, edit)
            after = with_delta(before, delta)
        else:
            undo = inverse_from_cell(edit, delta.prior_index, delta.prior_cell)
        return Applied(undo, after, delta.version, delta.cell, delta.index)

    def show(self, path: str, edit: BaseModel) -> int:
        """Apply ``edit`` without waiting (progress: a running cell's outputs so far); a gone tab is ignored.

        Returns the bytes sent (0 when no tab holds the notebook).
        """
        connection = self.holder(path)
        return connection.notify("apply", path, edit=edit.model_dump()) if connection is not None else 0

    async def snapshot(self, path: str) -> NotebookSnapshot:
        result = await self._holder_or_error(path).request("snapshot", path)
        content = result.get("notebook")
        return NotebookSnapshot(path, json.dumps(content) if isinstance(content, dict) else None)

    async def restore(self, path: str, snapshot: NotebookSnapshot) -> None:
        if snapshot.content is None:
            raise ToolError(
                E_NOTEBOOK_BRIDGE,
                user_text("%1 did not exist before the change and is open in JupyterLab now", path),
                user_text("Close it in JupyterLab and delete the file if it is not wanted."),
            )
        await self._holder_or_error(path).request("restore", path, notebook=json.loads(snapshot.content))

    # -- the journal: reopened tabs, saves, tabs that are gone -----------------------------------------------

    def saved(self, path: str) -> None:
        """The contents manager saved ``path``: the edits its tab had applied are in the file now."""
        self.journal.saved(_normalized(path))
        self.texts.saved(path)

    def renamed(self, old: str, new: str) -> None:
        self.journal.renamed(_normalized(old), _normalized(new))
        self.texts.renamed(old, new)

    def _opened(self, connection: BridgeConnection, paths: set[str]) -> None:
        self._closed_at = {path: at for path, at in self._closed_at.items() if path not in paths}
        for path in paths:
            if path in connection.paths and self.journal.has(path):
                task = asyncio.ensure_future(self._replay(connection, path))
                self._replays.add(task)
                task.add_done_callback(self._replays.discard)
            else:
                self.texts.opened(connection, path)

    async def _replay(self, connection: BridgeConnection, path: str) -> None:
        """Give a notebook reopened from its file the agent's changes it does not have yet."""
        async with self._locks(path):
            entries = self.journal.entries(path)
            if not entries or connection.closed:
                return
            try:
                notebook = _notebook(await connection.request("read", path), path)
                for edit in replayable(notebook, [entry.edit for entry in entries]):
                    await connection.request("apply", path, edit=edit.model_dump())
            except ToolError as error:
                log.warning("hdsp-agent: unsaved agent changes to %s were not replayed: %s", path, error)
                return
            log.info("hdsp-agent: replayed %d unsaved agent change(s) into %s", len(entries), path)

    async def wait_for_holder(self, path: str, seconds: float) -> BridgeConnection | None:
        """The tab holding ``path``, waiting up to ``seconds`` for one (a reloading tab) to announce it."""
        return await self.tabs.wait(self.holder, path, seconds)

    async def reclaim(self, path: str, contents_manager: ContentsManager) -> bool:
        """Before ``path`` is used as a file: True when a tab holds it again (use the live notebook); else its
        journal, if any, is written to the file first (False)."""
        key = _normalized(path)
        if not self.journal.has(key):
            return False
        if await self.wait_for_holder(key, self.reconnect_grace_seconds) is not None:
            return True
        await self.write_to_file(key, contents_manager)
        return False

    async def write_to_file(self, path: str, contents_manager: ContentsManager) -> None:
        """Replay the journal of a notebook no tab holds onto its file, and save it."""
        async with self._locks(path):
            entries = self.journal.entries(path)
            if not entries:
                return
            if await _folder_gone(path, contents_manager):
                self.journal.forget(path)  # the user deleted the notebook's folder: nothing to write into
                return
            try:
                model = await _call(contents_manager.get, path, content=True, type="notebook")
                notebook = model["content"]
            except Exception:
                if await _call(contents_manager.file_exists, path):
                    raise  # the file is there: something else went wrong
                notebook = nbformat.v4.new_notebook()  # deleted since: what the agent made of it is kept
            ensure_cell_ids(notebook)
            written = replay_onto(notebook, [entry.edit for entry in entries])
            await _call(
                contents_manager.save, {"type": "notebook", "format": "json", "content": written}, path
            )
            self.journal.forget(path)

    async def settle(
        self, contents_manager: ContentsManager, since: int = 0, paths: Collection[str] | None = None
    ) -> list[SettleOutcome]:
        """At the end of a turn: every notebook with unsaved agent changes made after ``since`` (the turn's
        ``change_mark``) is saved or kept safe. ``paths``: these documents instead (after an undo or a redo,
        which leave the file as the user sees it by the same rule).

        Open in a tab: saved through the tab (so JupyterLab knows the file it holds) when the user has no
        unsaved edits of their own in it, else left unsaved for them to save (the journal keeps the agent's
        changes across a reload). Open nowhere: written to the file.
        """
        changed_at = self.tabs.changed_at
        recent = (
            {_normalized(path) for path in paths}
            if paths is not None
            else {path for path, at in changed_at.items() if at > since}
        )
        notebooks = [path for path in self.journal.paths() if path in recent]
        settled, texts = await asyncio.gather(
            asyncio.gather(*(self._settle_one(path, contents_manager) for path in notebooks)),
            self.texts.settle(contents_manager, recent=recent),
        )
        return [*settled, *texts]

    async def _settle_one(self, path: str, contents_manager: ContentsManager) -> SettleOutcome:
        try:
            holder = await self.wait_for_holder(path, self.reconnect_grace_seconds)
            if holder is None:
                await self.write_to_file(path, contents_manager)
                return SettleOutcome(path, "written")
            async with self._locks(path):
                entries = self.journal.entries(path)
                if not entries:
                    return SettleOutcome(path, "unchanged")
                # Only the cells' types and sources are compared: the tab sends no outputs (a notebook of
                # 50 MB of plots is a few hundred kB of sources).
                live = _notebook(
                    await holder.request(
                        "read", path, output_chars=BRIEF_OUTPUT_CHARS, outputs_start=0, outputs_stop=0
                    ),
                    path,
                )
                on_disk = await self._file_notebook(path, contents_manager)
                expected = replay_onto(on_disk, [entry.edit for entry in entries])
                if not _nothing_of_the_user_unsaved(live, on_disk, expected):
                    return SettleOutcome(path, "left_unsaved")
                await holder.request("save", path)
                self.journal.saved(path)
                return SettleOutcome(path, "saved")
        except Exception as error:  # one notebook's trouble must not keep the others from being settled
            log.warning("hdsp-agent: could not save the agent's changes to %s: %s", path, error)
            message = error.message if isinstance(error, ToolError) else f"{type(error).__name__}: {error}"
            return SettleOutcome(path, "left_unsaved", problem=message)

    async def _file_notebook(self, path: str, contents_manager: ContentsManager) -> nbformat.NotebookNode:
        try:
            model = await _call(contents_manager.get, path, content=True, type="notebook")
        except Exception:
            if await _call(contents_manager.file_exists, path):
                raise
            return nbformat.v4.new_notebook()
        notebook: nbformat.NotebookNode = model["content"]
        ensure_cell_ids(notebook)
        return notebook

    async def aclose(self, contents_manager: ContentsManager) -> None:
        """The server is stopping: notebooks no tab holds get their journal written to the file."""
        for task in list(self._replays):
            task.cancel()
        for path in self.journal.paths():
            if self.holder(path) is None:
                try:
                    await self.write_to_file(path, contents_manager)
                except Exception as error:
                    log.warning("hdsp-agent: the agent's changes to %s were not written: %s", path, error)
        await self.texts.aclose(contents_manager)


def _changed_since_read(path: str) -> ToolError:
    return ToolError(
        E_NOTEBOOK_CHANGED,
        user_text("%1 changed in JupyterLab after the agent read the cell; nothing was changed", path),
        user_text("Read the cell again (read_cell) and redo the change on its current content."),
    )


def with_delta(before: nbformat.NotebookNode, delta: AppliedDelta) -> nbformat.NotebookNode:
    """``before`` with the cell the tab reported changed: the notebook after the edit, without the tab sending
    it whole. A new notebook node and cell list; the cells ``before`` shares are not changed."""
    after = nbformat.NotebookNode(before)
    touched = {cell.get("id") for cell in (delta.cell, delta.prior_cell) if cell is not None}
    cells = [cell for cell in before.cells if cell.get("id") not in touched]
    if delta.cell is not None:
        index = delta.index if delta.index is not None else len(cells)
        cells.insert(max(0, min(index, len(cells))), nbformat.from_dict(delta.cell))
    after["cells"] = cells
    return after
