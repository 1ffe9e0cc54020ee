"""The notebooks open in connected JupyterLab tabs, as a ``NotebookGateway`` (live mode).

Each browser tab running the sidebar keeps one WebSocket to ``/hdsp-agent/notebooks/ws`` (its NotebookBridge).
Over it the tab says which notebooks it has open and answers requests: read the live model (unsaved edits
included), apply an edit from ``edits.py`` to it, snapshot it, restore a snapshot. The tab applies edits to
the shared notebook model, so with real-time collaboration every collaborator sees them too, and the user's
unsaved typing elsewhere in the notebook stays.

This module knows nothing of tornado: a connection (``bridge_connection.py``) is anything with a
``send(dict)``; the route feeds it the browser's messages.

Wire (JSON):
- browser → server ``{"type": "open", "paths": [...], "editors": [...], "loaded": [...]}``: every notebook
  (``paths``) and text file in a file editor (``editors``) open in the tab, sent on connect and on every
  change; ``loaded``: those the tab announces for the first time, i.e. just loaded from the file (a page
  reload, a document reopened).
- server → browser ``{"type": "request", "id", "method": "read"|"apply"|"snapshot"|"restore"|"save", "path",
  "edit"?, "content"?}``; ``id`` is null for ``apply`` sent only to show progress (no answer wanted). For a
  file editor: ``read_text`` (→ ``{"text", "dirty"}``), ``set_text`` (``expected``, ``text``: refused with
  ``E_EDITOR_CHANGED`` if the editor no longer shows ``expected``), ``revert_text`` (reload from the file
  while it shows ``expected`` with nothing unsaved → ``{"reverted"}``), ``save``.
- browser → server ``{"type": "response", "id", "result": {...}}`` or ``{"type": "response", "id", "error":
  {"code", "message"}}``.

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
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import nbformat
from pydantic import BaseModel

from ..tools.base import ToolError
from ..user_text import user_text
from .bridge_connection import E_NOTEBOOK_BRIDGE, BridgeConnection, _normalized, _notebook, _text
from .edits import ensure_cell_ids
from .gateway import NotebookSnapshot, PathLocks, _call, _status
from .journal import AgentText, DocumentJournal, TextJournal, cell_texts, replay_onto, replayable
from .merge import E_EDIT_CONFLICT, MergeConflict, merge_texts

# A reloading tab announces its notebooks again within a few seconds; until then its journal is not written
# to the file (the reloaded tab might have read the file before the write, and would then overwrite it).
RECONNECT_GRACE_SECONDS = 5.0
log = logging.getLogger("hdsp_agent.live")


async def _folder_gone(path: str, contents_manager: Any) -> bool:
    """Whether the folder ``path`` is in no longer exists (deleted with the document in it)."""
    parent = path.rsplit("/", 1)[0] if "/" in path else ""
    exists = getattr(contents_manager, "dir_exists", None)
    return bool(parent) and exists is not None and not await _call(exists, parent)


E_EDITOR_CHANGED = "E_EDITOR_CHANGED"

Settled = Literal["saved", "left_unsaved", "written", "unchanged"]


@dataclass(frozen=True)
class SettleOutcome:
    """What the end of a turn did with one notebook the agent changed (``LiveNotebooks.settle``)."""

    path: str
    outcome: Settled
    problem: str | None = None


class LiveNotebooks:
    """The ``NotebookGateway`` over every connected tab; a path is served by the tab that opened it last.

    It also keeps the journal of the agent's unsaved changes (see the module's docstring).
    """

    reconnect_grace_seconds = RECONNECT_GRACE_SECONDS

    def __init__(self) -> None:
        self._connections: list[BridgeConnection] = []
        self.journal = DocumentJournal()
        # Applying, replaying and settling one notebook never interleave (a replay must finish before the
        # next edit or read, or the agent would see the notebook without its own changes).
        self._locks = PathLocks()
        self._replays: set[asyncio.Task[None]] = set()
        self.texts = TextJournal()
        # When each document last got an agent change, on a counter: a turn settles the documents changed
        # since it started (``change_mark``), not other conversations' (whose tabs may be long gone).
        self._changes = 0
        self._changed_at: dict[str, int] = {}

    def change_mark(self) -> int:
        """Where the change counter is now; ``settle(..., since=mark)`` covers what changed after it."""
        return self._changes

    def _changed(self, path: str) -> None:
        self._changes += 1
        self._changed_at[path] = self._changes

    def connect(self, send: Callable[[dict[str, Any]], Any]) -> BridgeConnection:
        connection = BridgeConnection(send, on_open=self._opened)
        self._connections.append(connection)
        return connection

    def disconnect(self, connection: BridgeConnection) -> None:
        connection.close()
        if connection in self._connections:
            self._connections.remove(connection)

    def holder(self, path: str) -> BridgeConnection | None:
        path = _normalized(path)
        for connection in reversed(self._connections):
            if path in connection.paths and not connection.closed:
                return connection
        return None

    def editor_holder(self, path: str) -> BridgeConnection | None:
        """The tab with ``path`` open in a file editor (the last one that opened it)."""
        path = _normalized(path)
        for connection in reversed(self._connections):
            if path in connection.editors and not connection.closed:
                return connection
        return None

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

    async def read(self, path: str) -> nbformat.NotebookNode:
        async with self._locks(_normalized(path)):
            return _notebook(await self._holder_or_error(path).request("read", path), path)

    async def apply(self, path: str, edit: BaseModel) -> nbformat.NotebookNode:
        key = _normalized(path)
        async with self._locks(key):
            entry = self.journal.record(key, edit)
            self._changed(key)
            try:
                result = await self._holder_or_error(path).request("apply", path, edit=edit.model_dump())
            except ToolError as error:
                # A tab that refused the edit did not apply it; one that went away may have: keep that one,
                # replaying it skips what the notebook already has.
                if "disconnected" not in error.message:
                    self.journal.discard(key, entry)
                raise
            entry.acknowledged = True
            return _notebook(result, path)

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
        self.texts.pop(_normalized(path), None)

    def renamed(self, old: str, new: str) -> None:
        self.journal.renamed(_normalized(old), _normalized(new))
        if _normalized(old) in self.texts:
            self.texts[_normalized(new)] = self.texts.pop(_normalized(old))

    def _opened(self, connection: BridgeConnection, paths: set[str]) -> None:
        for path in paths:
            replay = None
            if path in connection.paths and self.journal.has(path):
                replay = self._replay(connection, path)
            elif path in connection.editors and path in self.texts:
                replay = self._replay_text(connection, path)
            if replay is not None:
                task = asyncio.ensure_future(replay)
                self._replays.add(task)
                task.add_done_callback(self._replays.discard)

    # -- text files open in a file editor --------------------------------------------------------------------

    async def editor_state(self, path: str) -> tuple[str, bool] | None:
        """The text in the editor holding ``path`` and whether it has unsaved changes (None: no editor)."""
        holder = self.editor_holder(path)
        if holder is None:
            return None
        result = await holder.request("read_text", _normalized(path))
        return _text(result, path), bool(result.get("dirty"))

    async def reload_editor(self, path: str, expected: str) -> bool:
        """Reload the editor holding ``path`` from the file (the agent just wrote it there), if it still shows
        ``expected`` with nothing unsaved; False when the user has typed since (their typing is kept)."""
        holder = self.editor_holder(path)
        if holder is None:
            return False
        result = await holder.request("revert_text", _normalized(path), expected=expected)
        return bool(result.get("reverted"))

    def agent_text(self, path: str) -> str | None:
        """The text the agent made of ``path`` while it is unsaved in an editor (None: the file's own)."""
        record = self.texts.get(_normalized(path))
        return record.agent if record is not None else None

    async def edit_text(self, path: str, base: str, changed: str, on_disk: str) -> tuple[str, str]:
        """Put the agent's change (``base`` → ``changed``) into the editor holding ``path``, merged with what
        the user typed there and did not save. Returns the editor's text before and after.

        ``on_disk``: the file's text now (the base of the record, for the first change since a save).
        Raises ``E_EDIT_CONFLICTS_WITH_UNSAVED_TYPING`` when the user's typing overlaps the change.
        """
        key = _normalized(path)
        async with self._locks(key):
            holder = self.editor_holder(key)
            if holder is None:
                raise ToolError(
                    E_NOTEBOOK_BRIDGE,
                    user_text("%1 is no longer open in a JupyterLab editor", path),
                    user_text("Try again."),
                )
            current = _text(await holder.request("read_text", key), path)
            merged = merge_texts(base, current, changed)
            if isinstance(merged, MergeConflict):
                where = (
                    f"line {merged.first_line}"
                    if merged.first_line == merged.last_line
                    else f"lines {merged.first_line}-{merged.last_line}"
                )
                raise ToolError(
                    E_EDIT_CONFLICT,
                    user_text(
                        "%1 is open in JupyterLab with unsaved changes by the user at %2, where your edit "
                        "changes the text too; nothing was changed",
                        path,
                        where,
                    ),
                    user_text(
                        "Leave those lines to the user: edit other lines, or ask the user to save or finish."
                    ),
                )
            await holder.request("set_text", key, expected=current, text=merged)
            previous = self.texts.get(key)
            self.texts[key] = AgentText(previous.base if previous is not None else on_disk, changed)
            self._changed(key)
            return current, merged

    async def restore_text(self, path: str, agent_made: str, before: str) -> bool:
        """Undo of an edit made by ``edit_text``: take the agent's change (``before`` → ``agent_made``) back
        out of the open editor, keeping the user's typing. False when the editor is gone."""
        key = _normalized(path)
        async with self._locks(key):
            holder = self.editor_holder(key)
            if holder is None:
                return False
            current = _text(await holder.request("read_text", key), path)
            restored = merge_texts(agent_made, current, before)
            if isinstance(restored, MergeConflict):
                raise ToolError(
                    "E_FILE_CHANGED_SINCE_READ",
                    user_text(
                        "%1: the lines the agent changed were edited since; they were left as they are", path
                    ),
                    user_text("Change them back by hand if you want the agent's change undone."),
                )
            await holder.request("set_text", key, expected=current, text=restored)
            record = self.texts.get(key)
            if record is not None:
                self.texts[key] = AgentText(record.base, before)
            elif current == agent_made:
                # The change had been saved and the user has typed nothing since: the file is put back too.
                await holder.request("save", key)
            else:
                # Saved, then typed in: the undo joins the user's unsaved text, saved by the same policy.
                self.texts[key] = AgentText(agent_made, before)
            return True

    async def _replay_text(self, connection: BridgeConnection, path: str) -> None:
        """A file editor reopened (a reload): the agent's unsaved change goes into it again."""
        async with self._locks(path):
            record = self.texts.get(path)
            if record is None or connection.closed:
                return
            try:
                current = _text(await connection.request("read_text", path), path)
                merged = merge_texts(record.base, current, record.agent)
                if isinstance(merged, MergeConflict) or merged == current:
                    return
                await connection.request("set_text", path, expected=current, text=merged)
            except ToolError as error:
                log.warning("hdsp-agent: unsaved agent changes to %s were not replayed: %s", path, error)

    async def reclaim_text(self, path: str, contents_manager: Any) -> bool:
        """Before ``path`` is edited on disk: True when an editor holds it again; else the agent's unsaved
        change, if any, is written to the file first (False)."""
        key = _normalized(path)
        if key not in self.texts:
            return False
        if await self._wait(self.editor_holder, key, self.reconnect_grace_seconds) is not None:
            return True
        await self.write_text_to_file(key, contents_manager)
        return False

    async def write_text_to_file(self, path: str, contents_manager: Any) -> None:
        async with self._locks(path):
            record = self.texts.get(path)
            if record is None:
                return
            if await _folder_gone(path, contents_manager):
                self.texts.pop(path, None)  # the user deleted the file's folder: nothing to write into
                return
            model = await _call(contents_manager.get, path, content=True, type="file", format="text")
            on_disk = str(model["content"]).replace("\r\n", "\n")
            merged = merge_texts(record.base, on_disk, record.agent)
            if isinstance(merged, MergeConflict):
                raise ToolError(
                    E_EDIT_CONFLICT,
                    user_text(
                        "%1 changed on disk at line %2 where the agent's unsaved change is",
                        path,
                        merged.first_line,
                    ),
                )
            if merged != on_disk:
                await _call(
                    contents_manager.save, {"type": "file", "format": "text", "content": merged}, path
                )
            self.texts.pop(path, None)

    async def _settle_text(self, path: str, contents_manager: Any) -> SettleOutcome:
        holder = await self._wait(self.editor_holder, path, self.reconnect_grace_seconds)
        if holder is None:
            await self.write_text_to_file(path, contents_manager)
            return SettleOutcome(path, "written")
        async with self._locks(path):
            record = self.texts.get(path)
            if record is None:
                return SettleOutcome(path, "unchanged")
            current = _text(await holder.request("read_text", path), path)
            model = await _call(contents_manager.get, path, content=True, type="file", format="text")
            on_disk = str(model["content"]).replace("\r\n", "\n")
            if current != record.agent or on_disk != record.base:
                return SettleOutcome(path, "left_unsaved")
            await holder.request("save", path)
            self.texts.pop(path, None)
            return SettleOutcome(path, "saved")

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
        return await self._wait(self.holder, path, seconds)

    @staticmethod
    async def _wait(
        find: Callable[[str], BridgeConnection | None], path: str, seconds: float
    ) -> BridgeConnection | None:
        deadline = time.monotonic() + seconds
        while True:
            holder = find(path)
            if holder is not None or time.monotonic() >= deadline:
                return holder
            await asyncio.sleep(0.1)

    async def reclaim(self, path: str, contents_manager: Any) -> bool:
        """Before ``path`` is used as a file: True when a tab holds it again (use the live notebook); else its
        journal, if any, is written to the file first (False)."""
        key = _normalized(path)
        if not self.journal.has(key):
            return False
        if await self.wait_for_holder(key, self.reconnect_grace_seconds) is not None:
            return True
        await self.write_to_file(key, contents_manager)
        return False

    async def write_to_file(self, path: str, contents_manager: Any) -> None:
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
            except Exception as error:
                if _status(error) != 404:
                    raise
                notebook = nbformat.v4.new_notebook()  # deleted since: what the agent made of it is kept
            ensure_cell_ids(notebook)
            written = replay_onto(notebook, [entry.edit for entry in entries])
            await _call(
                contents_manager.save, {"type": "notebook", "format": "json", "content": written}, path
            )
            self.journal.forget(path)

    async def settle(self, contents_manager: Any, since: int = 0) -> list[SettleOutcome]:
        """At the end of a turn: every notebook with unsaved agent changes made after ``since`` (the turn's
        ``change_mark``) is saved or kept safe.

        Open in a tab: saved through the tab (so JupyterLab knows the file it holds) when the user has no
        unsaved edits of their own in it, else left unsaved for them to save (the journal keeps the agent's
        changes across a reload). Open nowhere: written to the file.
        """
        recent = {path for path, at in self._changed_at.items() if at > since}
        notebooks = [path for path in self.journal.paths() if path in recent]
        texts = [path for path in self.texts if path in recent]
        outcomes = await asyncio.gather(
            *(self._settle_one(path, contents_manager) for path in notebooks),
            *(self._settle_text_safely(path, contents_manager) for path in texts),
        )
        return list(outcomes)

    async def _settle_text_safely(self, path: str, contents_manager: Any) -> SettleOutcome:
        try:
            return await self._settle_text(path, contents_manager)
        except Exception as error:
            log.warning("hdsp-agent: could not save the agent's changes to %s: %s", path, error)
            message = error.message if isinstance(error, ToolError) else f"{type(error).__name__}: {error}"
            return SettleOutcome(path, "left_unsaved", problem=message)

    async def _settle_one(self, path: str, contents_manager: Any) -> SettleOutcome:
        try:
            holder = await self.wait_for_holder(path, self.reconnect_grace_seconds)
            if holder is None:
                await self.write_to_file(path, contents_manager)
                return SettleOutcome(path, "written")
            async with self._locks(path):
                entries = self.journal.entries(path)
                if not entries:
                    return SettleOutcome(path, "unchanged")
                live = _notebook(await holder.request("read", path), path)
                on_disk = await self._file_notebook(path, contents_manager)
                expected = replay_onto(on_disk, [entry.edit for entry in entries])
                if cell_texts(live) != cell_texts(expected):
                    return SettleOutcome(path, "left_unsaved")
                await holder.request("save", path)
                self.journal.saved(path)
                return SettleOutcome(path, "saved")
        except Exception as error:  # one notebook's trouble must not keep the others from being settled
            log.warning("hdsp-agent: could not save the agent's changes to %s: %s", path, error)
            message = error.message if isinstance(error, ToolError) else f"{type(error).__name__}: {error}"
            return SettleOutcome(path, "left_unsaved", problem=message)

    async def _file_notebook(self, path: str, contents_manager: Any) -> nbformat.NotebookNode:
        try:
            model = await _call(contents_manager.get, path, content=True, type="notebook")
        except Exception as error:
            if _status(error) != 404:
                raise
            return nbformat.v4.new_notebook()
        notebook: nbformat.NotebookNode = model["content"]
        ensure_cell_ids(notebook)
        return notebook

    async def aclose(self, contents_manager: Any) -> None:
        """The server is stopping: notebooks no tab holds get their journal written to the file."""
        for task in list(self._replays):
            task.cancel()
        for path in self.journal.paths():
            if self.holder(path) is None:
                try:
                    await self.write_to_file(path, contents_manager)
                except Exception as error:
                    log.warning("hdsp-agent: the agent's changes to %s were not written: %s", path, error)
        for path in list(self.texts):
            if self.editor_holder(path) is None:
                try:
                    await self.write_text_to_file(path, contents_manager)
                except Exception as error:
                    log.warning("hdsp-agent: the agent's changes to %s were not written: %s", path, error)
