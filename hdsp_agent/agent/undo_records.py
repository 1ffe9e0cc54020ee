"""Undo, redo, checkpoints and the journal of unsaved agent changes, kept in the conversation store.

The histories live in memory (``FileStateStore``, ``NotebookUndoStore``, ``TurnUndo``, ``DocumentJournal``,
``TextJournal``); each tells its sink of every change, and ``UndoPersistence`` is that sink: it writes the
change to the store (``agent/store.py``, through its writer thread: the event loop never waits on the disk).
When the server starts, ``load`` rebuilds the histories from the store: what a recorded change needs to be
undone again (a file's prior bytes, a notebook change's inverse edit or prior file, a text change merged
back out of an editor) is data, and the closures are made anew over this server's gateways.

The stored history is bounded (``undo_history_mb``): when a turn starts and the history is over the bound,
the oldest checkpoints (across conversations) go first, with the changes recorded before the next one; the
conversations concerned are told (``checkpoints.pruned``), so the sidebar stops offering them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import logging
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ..documents.edits import parse_edit
from ..documents.gateway import NotebookSnapshot
from ..documents.history import TextChange, UndoEntry
from ..documents.inverse import InverseEdit
from ..documents.journal import DocumentJournal, TextJournal
from ..tools.base import ToolContext
from ..tools.builtin.edit.filestate import UndoRecord
from ..tools.builtin.edit.pipeline import text_take_back
from ..user_text import UserText
from .undo import FileStep, NotebookCellStep, NotebookFileStep, Redo, Step, TurnMark, TurnUndo

log = logging.getLogger("hdsp_agent.undo_records")

FILE = "file"
NOTEBOOK = "notebook"
ContextFactory = Callable[..., ToolContext]


# -- values that are not JSON as they are --------------------------------------------------------------------


def _text(value: str) -> Any:
    """A string that may be a translatable ``UserText``: its template and parameters are kept."""
    if isinstance(value, UserText):
        return {"template": value.template, "params": [_text(param) for param in value.params]}
    return value


def _untext(value: Any) -> str:
    if isinstance(value, dict):
        return UserText(str(value["template"]), [_untext(param) for param in value.get("params", [])])
    return str(value)


def _stamp(value: Any) -> Any:
    """A file's ``last_modified`` (a datetime from the contents manager), compared for equality on undo."""
    if isinstance(value, datetime.datetime):
        return {"datetime": value.isoformat()}
    return value


def _unstamp(value: Any) -> Any:
    if isinstance(value, dict) and "datetime" in value:
        return datetime.datetime.fromisoformat(value["datetime"])
    return value


def _bytes(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


def _unbytes(value: str | None) -> bytes | None:
    return None if value is None else base64.b64decode(value)


def _inverse(inverse: InverseEdit) -> dict[str, Any]:
    return {
        "edit": inverse.edit.model_dump(),
        "cell_id": inverse.cell_id,
        "expected_source": inverse.expected_source,
        "expected_execution_count": inverse.expected_execution_count,
        "checks_outputs": inverse.checks_outputs,
    }


def _uninverse(value: dict[str, Any]) -> InverseEdit:
    return InverseEdit(
        parse_edit(value["edit"]),
        value["cell_id"],
        value.get("expected_source"),
        value.get("expected_execution_count"),
        bool(value.get("checks_outputs")),
    )


# -- the records ---------------------------------------------------------------------------------------------


def file_record(record: UndoRecord) -> dict[str, Any]:
    return {
        "record_id": record.record_id,
        "path": str(record.path),
        "prior_absent": record.prior is None,
        "created_at": record.created_at,
        "after_sha256": record.after_sha256,
        "shown_as": record.shown_as,
        "after_absent": record.after_absent,
    }


def file_record_from(session_id: str, payload: dict[str, Any], content: bytes | None) -> UndoRecord:
    return UndoRecord(
        payload["record_id"],
        session_id,
        Path(payload["path"]),
        None if payload.get("prior_absent") else (content or b""),
        float(payload["created_at"]),
        after_sha256=payload.get("after_sha256"),
        shown_as=payload.get("shown_as"),
        after_absent=bool(payload.get("after_absent")),
    )


def notebook_entry(entry: UndoEntry) -> tuple[dict[str, Any], bytes | None]:
    """An entry's data (its closures are rebuilt on load); a prior notebook file goes in the blob."""
    payload: dict[str, Any] = {
        "entry_id": entry.entry_id,
        "call_id": entry.call_id,
        "path": entry.path,
        "description": _text(entry.description),
        "cell_id": entry.cell_id,
        "after_stamp": _stamp(entry.after_stamp),
        "reviewed": entry.reviewed,
    }
    content: bytes | None = None
    if entry.inverse is not None:
        payload["inverse"] = _inverse(entry.inverse)
    elif entry.snapshot is not None:
        payload["snapshot"] = {
            "path": entry.snapshot.path,
            "absent": entry.snapshot.content is None,
            "last_modified": _stamp(entry.snapshot.last_modified),
        }
        content = entry.snapshot.content.encode("utf-8") if entry.snapshot.content is not None else None
    elif entry.text_change is not None:
        change = entry.text_change
        payload["text_change"] = {
            "file": str(change.file),
            "planned": change.planned,
            "before": change.before,
        }
    else:
        payload["opaque"] = True
    return payload, content


def notebook_entry_from(
    session_id: str, payload: dict[str, Any], content: bytes | None, undo: TurnUndo, contexts: ContextFactory
) -> UndoEntry | None:
    """The entry as this server can apply it (None: one recorded without data to rebuild it from)."""
    ctx = contexts(session_id=session_id, call_id=payload.get("call_id", ""))
    path = payload["path"]
    entry = UndoEntry(
        session_id=session_id,
        call_id=payload.get("call_id", ""),
        path=path,
        description=_untext(payload["description"]),
        restore=_nothing,
        cell_id=payload.get("cell_id"),
        ctx=ctx,
        after_stamp=_unstamp(payload.get("after_stamp")),
        entry_id=payload["entry_id"],
        reviewed=bool(payload.get("reviewed")),
    )
    runtime = undo.notebooks
    if "inverse" in payload:
        entry.inverse = _uninverse(payload["inverse"])
        entry.restore = entry.undo_cell = runtime.live_undo(ctx, path, entry.inverse)
    elif "snapshot" in payload:
        snapshot = payload["snapshot"]
        entry.snapshot = NotebookSnapshot(
            snapshot["path"],
            None if snapshot.get("absent") else (content or b"").decode("utf-8"),
            _unstamp(snapshot.get("last_modified")),
        )
        entry.restore = partial(runtime.file_gateway(ctx).restore, path, entry.snapshot)
    elif "text_change" in payload:
        change = payload["text_change"]
        entry.text_change = TextChange(Path(change["file"]), change["planned"], change["before"])
        entry.ctx = None  # applied as it is, by its restore (as before the restart)
        entry.restore = text_take_back(ctx.text_editors, path, entry.text_change)
    else:
        return None
    return entry


async def _nothing() -> None:
    return None


# -- checkpoints and redo ------------------------------------------------------------------------------------


def _step(step: Step) -> dict[str, Any] | None:
    if isinstance(step, FileStep):
        return {
            "kind": "file",
            "file": str(step.file),
            "path": step.path,
            "content": _bytes(step.content),
            "expected_sha256": step.expected_sha256,
            "checked": step.checked,
            "description": _text(step.description),
        }
    if isinstance(step, NotebookCellStep):
        return {
            "kind": "cell",
            "path": step.path,
            "call_id": step.ctx.call_id,
            "inverse": _inverse(step.inverse),
            "description": _text(step.description),
        }
    if isinstance(step, NotebookFileStep):
        return {
            "kind": "notebook_file",
            "path": step.path,
            "call_id": step.ctx.call_id,
            "content": step.content,
            "expected_stamp": _stamp(step.expected_stamp),
            "restores_stamp": _stamp(step.restores_stamp),
            "description": _text(step.description),
        }
    return None


def _step_from(session_id: str, value: dict[str, Any], undo: TurnUndo, contexts: ContextFactory) -> Step:
    description = _untext(value["description"])
    if value["kind"] == "file":
        return FileStep(
            undo.file_state,
            session_id,
            Path(value["file"]),
            value["path"],
            _unbytes(value["content"]),
            value["expected_sha256"],
            bool(value["checked"]),
            description,
        )
    ctx = contexts(session_id=session_id, call_id=value.get("call_id", ""))
    if value["kind"] == "cell":
        return NotebookCellStep(undo.notebooks, ctx, value["path"], _uninverse(value["inverse"]), description)
    return NotebookFileStep(
        undo.notebooks,
        ctx,
        value["path"],
        value["content"],
        _unstamp(value["expected_stamp"]),
        _unstamp(value["restores_stamp"]),
        description,
    )


def undo_state(marks: list[TurnMark], redo: list[Redo]) -> dict[str, Any]:
    return {
        "marks": [
            {
                "turn_id": mark.turn_id,
                "file_records": mark.file_records,
                "notebook_entries": mark.notebook_entries,
                "created": mark.created,
            }
            for mark in marks
        ],
        "redo": [
            [
                [turn_id, [value for step in steps if (value := _step(step)) is not None]]
                for turn_id, steps in item.turns
            ]
            for item in redo
        ],
    }


# -- the sink and the loader ---------------------------------------------------------------------------------


class UndoPersistence:
    """Writes every change of the undo histories and the journals to the store; loads them on start; keeps
    the stored history under ``limit_bytes`` (None: no bound)."""

    def __init__(
        self,
        store: Any,
        limit_bytes: int | None = None,
        on_pruned: Callable[[str, list[str]], None] | None = None,
    ) -> None:
        self.store = store
        self.limit_bytes = limit_bytes
        # Told which checkpoints of which conversation the bound removed (the server tells the conversation).
        self.on_pruned = on_pruned
        # What each stored row takes, kept here so the bound is checked without reading the store.
        self._sizes: dict[tuple[str, str, str], int] = {}
        self._state_sizes: dict[str, int] = {}
        # A file tool records from a worker thread while the loop may record or sum: one lock for the sizes.
        self._sizes_lock = threading.Lock()
        self._undo: TurnUndo | None = None
        self._pruning = False
        self._loop: asyncio.AbstractEventLoop | None = None

    # UndoRecordSink (file records)
    def record_added(self, record: UndoRecord) -> None:
        payload = file_record(record)
        self._put(record.session_id, FILE, record.record_id, payload, record.prior)

    def record_replaced(self, old: UndoRecord, new: UndoRecord) -> None:
        self.record_added(new)

    def record_removed(self, record: UndoRecord) -> None:
        self._delete(record.session_id, FILE, record.record_id)

    # UndoEntrySink (notebook and editor changes)
    def entry_added(self, entry: UndoEntry) -> None:
        payload, content = notebook_entry(entry)
        self._put(entry.session_id, NOTEBOOK, entry.entry_id, payload, content)

    def entry_removed(self, entry: UndoEntry) -> None:
        self._delete(entry.session_id, NOTEBOOK, entry.entry_id)

    # UndoStateSink (checkpoints, redo); also the end of a session for the three
    def undo_state_changed(self, session_id: str, marks: list[TurnMark], redo: list[Redo]) -> None:
        payload = undo_state(marks, redo)
        self.store.save_undo_state(session_id, payload)
        with self._sizes_lock:
            self._state_sizes[session_id] = len(str(payload))

    def turn_started(self, undo: TurnUndo, session_id: str, turn_id: str) -> None:
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()  # turns start on the server's loop
        self.prune(undo, keep=(session_id, turn_id))

    def session_forgotten(self, session_id: str) -> None:
        self.store.delete_undo(session_id)
        with self._sizes_lock:
            for key in [key for key in self._sizes if key[0] == session_id]:
                del self._sizes[key]
            self._state_sizes.pop(session_id, None)

    # JournalSink
    def notebook_journal_changed(self, path: str, edits: list[dict[str, Any]]) -> None:
        self.store.save_journal(path, NOTEBOOK, edits or None)

    def text_journal_changed(self, path: str, base: str | None, agent: str | None) -> None:
        payload = None if base is None or agent is None else {"base": base, "agent": agent}
        self.store.save_journal(path, "text", payload)

    def _put(self, session_id: str, kind: str, item_id: str, payload: dict[str, Any], content: Any) -> None:
        self.store.put_undo_item(session_id, kind, item_id, payload, content)
        with self._sizes_lock:
            self._sizes[(session_id, kind, item_id)] = len(str(payload)) + (len(content) if content else 0)
        if self._undo is not None and self.limit_bytes is not None and self.stored_bytes() > self.limit_bytes:
            # A turn may record more than the bound allows between two turn starts: checked as it grows, on
            # the event loop (a file tool records from a worker thread; the histories belong to the loop).
            self._call_on_loop(partial(self._prune_during, session_id))

    def _prune_during(self, session_id: str) -> None:
        assert self._undo is not None
        marks = self._undo.marks(session_id)
        self.prune(self._undo, keep=(session_id, marks[-1].turn_id) if marks else None)

    def _call_on_loop(self, call: Callable[[], None]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None:
            call()
        elif self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(call)

    def _delete(self, session_id: str, kind: str, item_id: str) -> None:
        self.store.delete_undo_item(session_id, kind, item_id)
        with self._sizes_lock:
            self._sizes.pop((session_id, kind, item_id), None)

    # -- starting --------------------------------------------------------------------------------------------

    def attach(self, undo: TurnUndo, journal: DocumentJournal, texts: TextJournal) -> None:
        self._undo = undo
        undo.sink = self
        undo.file_state.sink = self
        undo.notebooks.undo.sink = self
        journal.sink = self
        texts.sink = self

    def load(
        self, undo: TurnUndo, journal: DocumentJournal, texts: TextJournal, contexts: ContextFactory
    ) -> None:
        """Rebuild the histories and journals from the store (the server starts), then attach as their sink.

        A session's items that cannot be rebuilt (written by a newer version) are left out with what depends
        on them: its checkpoints are kept only while their counts fit what was rebuilt.
        """
        files: dict[str, list[UndoRecord]] = {}
        entries: dict[str, list[UndoEntry]] = {}
        for session_id, kind, payload, content in self.store.load_undo_items():
            try:
                if kind == FILE:
                    record = file_record_from(session_id, payload, content)
                    files.setdefault(session_id, []).append(record)
                    self._sizes[(session_id, kind, record.record_id)] = len(str(payload)) + len(
                        content or b""
                    )
                elif kind == NOTEBOOK:
                    entry = notebook_entry_from(session_id, payload, content, undo, contexts)
                    if entry is not None:
                        entries.setdefault(session_id, []).append(entry)
                        self._sizes[(session_id, kind, entry.entry_id)] = len(str(payload)) + len(
                            content or b""
                        )
            except (KeyError, TypeError, ValueError) as error:
                log.warning("hdsp-agent: an undo record of %s was not loaded: %s", session_id, error)
        for session_id, records in files.items():
            undo.file_state.load(session_id, records)
        for session_id, loaded in entries.items():
            undo.notebooks.undo.load(session_id, loaded)
        for session_id, state in self.store.load_undo_states().items():
            try:
                marks = [
                    TurnMark(
                        m["turn_id"], int(m["file_records"]), int(m["notebook_entries"]), float(m["created"])
                    )
                    for m in state.get("marks", [])
                ]
                marks = [
                    mark
                    for mark in marks
                    if mark.file_records <= len(files.get(session_id, []))
                    and mark.notebook_entries <= len(entries.get(session_id, []))
                ]
                redo = [
                    Redo(
                        [
                            (turn_id, [_step_from(session_id, step, undo, contexts) for step in steps])
                            for turn_id, steps in item
                        ]
                    )
                    for item in state.get("redo", [])
                ]
                undo.load(session_id, marks, redo)
                self._state_sizes[session_id] = len(str(undo_state(marks, redo)))
            except (KeyError, TypeError, ValueError) as error:
                log.warning("hdsp-agent: the checkpoints of %s were not loaded: %s", session_id, error)
        for path, kind, payload in self.store.load_journals():
            try:
                if kind == NOTEBOOK:
                    journal.load(path, payload)
                elif kind == "text":
                    texts.load(path, payload["base"], payload["agent"])
            except (KeyError, TypeError, ValueError) as error:
                log.warning("hdsp-agent: the journal of %s was not loaded: %s", path, error)
        self.attach(undo, journal, texts)

    # -- the bound -------------------------------------------------------------------------------------------

    def stored_bytes(self) -> int:
        with self._sizes_lock:
            return sum(self._sizes.values()) + sum(self._state_sizes.values())

    def prune(self, undo: TurnUndo, keep: tuple[str, str] | None = None) -> dict[str, list[str]]:
        """Drop the oldest checkpoints (any conversation) while the stored history is over the bound; never
        ``keep`` (session id, turn id: the turn just started). Returns the turns dropped, per session."""
        dropped: dict[str, list[str]] = {}
        if self.limit_bytes is None or self._pruning or self.stored_bytes() <= self.limit_bytes:
            return dropped
        self._pruning = True  # dropping records tells this sink again: no pruning inside pruning
        try:
            self._prune(undo, keep, dropped)
        finally:
            self._pruning = False
        if self.on_pruned is not None:
            for session_id, turn_ids in dropped.items():
                self.on_pruned(session_id, turn_ids)
        return dropped

    def _prune(self, undo: TurnUndo, keep: tuple[str, str] | None, dropped: dict[str, list[str]]) -> None:
        assert self.limit_bytes is not None
        while self.stored_bytes() > self.limit_bytes:
            candidates = [
                (marks[0].created, session_id)
                for session_id in undo.sessions()
                if (marks := undo.marks(session_id)) and (session_id, marks[0].turn_id) != keep
            ]
            if not candidates:
                break
            _, session_id = min(candidates)
            turn_id = undo.drop_oldest_checkpoint(session_id)
            if turn_id is None:
                break
            dropped.setdefault(session_id, []).append(turn_id)
