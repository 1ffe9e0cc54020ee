"""Reading and changing a notebook document without losing anything the user typed.

Two ways to the same ``NotebookGateway`` protocol (``contract.py``):

- live: the notebook is open in a connected JupyterLab. The sidebar's NotebookBridge implements the protocol
  over the WebSocket and applies each edit to the frontend's notebook model (with or without real-time
  collaboration), so the user sees the change and unsaved edits stay.
- file: ``FileNotebookGateway`` goes through the server's contents manager (sync or async). It remembers the
  ``last_modified`` it last read or wrote per path and refuses to save over a file that changed since
  (``E_NOTEBOOK_CHANGED``): never write ``.ipynb`` JSON blindly.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import nbformat
from pydantic import BaseModel

from ..permissions.paths import display_path, resolve_in_root
from ..tools.base import ToolContext, ToolError
from ..user_text import user_text
from .contract import (
    Applied,
    CellRead,
    ContentsManager,
    FileUndo,
    NotebookGateway,
    OutputDetail,
    ReadPurpose,
)
from .edits import InsertCell, apply_edit, cell_at, ensure_cell_ids, find_cell

__all__ = ["NotebookGateway", "ReadPurpose"]

E_NO_NOTEBOOK = "E_NO_NOTEBOOK"
E_NOT_A_NOTEBOOK = "E_NOT_A_NOTEBOOK"
E_NOTEBOOK_NOT_FOUND = "E_NOTEBOOK_NOT_FOUND"
E_NOTEBOOK_INVALID = "E_NOTEBOOK_INVALID"
E_NOTEBOOK_CHANGED = "E_NOTEBOOK_CHANGED"
E_NO_CONTENTS_MANAGER = "E_NO_CONTENTS_MANAGER"


@dataclass(frozen=True)
class NotebookSnapshot:
    """A notebook's exact prior state, for undo. ``content`` is None when the notebook did not exist."""

    path: str
    content: str | None
    # The file's last_modified when the snapshot was taken (file mode; None: unknown or no file).
    last_modified: Any = None


def notebook_path(ctx: ToolContext, path: str | None) -> str:
    """The API path of the notebook to work on: ``path``, else the notebook active in the sidebar."""
    if not path:
        active = ctx.client_context.get("active_document") or {}
        candidate = active.get("path") if isinstance(active, dict) else None
        if isinstance(candidate, str) and candidate.endswith(".ipynb"):
            path = candidate
    if not path:
        raise ToolError(
            E_NO_NOTEBOOK,
            user_text("no notebook given and no notebook is active in JupyterLab"),
            user_text('Pass the notebook\'s path, e.g. {"path": "analysis.ipynb"}.'),
        )
    # JupyterLab prefixes paths on other drives (real-time collaboration's "RTC:"); the server knows them
    # without.
    drive, sep, rest = path.partition(":")
    if sep and "/" not in drive and rest:
        path = rest
    if not path.endswith(".ipynb"):
        raise ToolError(
            E_NOT_A_NOTEBOOK,
            user_text("%1 is not a notebook (.ipynb)", repr(path)),
            user_text("Use the file tools for other files."),
        )
    resolved = resolve_in_root(ctx.root_dir, path.lstrip("/"))
    return display_path(resolved, ctx.root_dir)


def notebook_name(path: str) -> str:
    return PurePosixPath(path).name


async def _call(method: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a contents-manager method, sync or async, as jupyter_server's own handlers do.

    Sync managers are called on the event loop, not in a thread: they are not thread-safe (the notebook notary
    keeps a SQLite connection bound to the thread that opened it). The server's default manager is async.
    """
    result = method(*args, **kwargs)
    return await result if inspect.isawaitable(result) else result


class PathLocks:
    """One lock per notebook path, so read-modify-save sequences on the same file never interleave."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def __call__(self, path: str) -> asyncio.Lock:
        return self._locks.setdefault(path, asyncio.Lock())


class ParsedNotebooks:
    """Notebooks as last read or written, by path, with the file's (last_modified, size) then.

    Reading a notebook through the contents manager parses, validates and checks its signature; a run_cell
    reads the same notebook three times. A cheap ``get(content=False)`` tells whether the file is still what
    was parsed. Entries are shared read-only: a change works on a copy. Only the ``MAX_ENTRIES`` notebooks
    used last are kept (a notebook with its outputs can take megabytes).
    """

    MAX_ENTRIES = 16

    def __init__(self) -> None:
        self._entries: OrderedDict[str, tuple[tuple[Any, Any], nbformat.NotebookNode]] = OrderedDict()

    def get(self, path: str, stat: dict[str, Any]) -> nbformat.NotebookNode | None:
        entry = self._entries.get(path)
        if entry is None or entry[0] != _file_key(stat):
            return None
        self._entries.move_to_end(path)
        return entry[1]

    def put(self, path: str, stat: dict[str, Any], notebook: nbformat.NotebookNode) -> None:
        self._entries[path] = (_file_key(stat), notebook)
        self._entries.move_to_end(path)
        while len(self._entries) > self.MAX_ENTRIES:
            self._entries.popitem(last=False)

    def forget(self, path: str) -> None:
        self._entries.pop(path, None)


def _file_key(model: dict[str, Any]) -> tuple[Any, Any]:
    return model.get("last_modified"), model.get("size")


def cell_read(
    notebook: nbformat.NotebookNode, cell_id: str | None, index: int | None, version: int | None = None
) -> CellRead:
    """The ``CellRead`` of one cell of a notebook read whole (by id, else by index)."""
    if cell_id is not None:
        position, cell = find_cell(notebook, cell_id)
    else:
        position, cell = cell_at(notebook, index if index is not None else -1)
    kernelspec = notebook.metadata.get("kernelspec") or {}
    language = (notebook.metadata.get("language_info") or {}).get("name")
    return CellRead(cell, position, len(notebook.cells), dict(kernelspec), language, version, notebook)


class FileNotebookGateway:
    """Notebooks through the contents manager, refusing to overwrite changes made since they were read.

    ``stamps`` maps path → the ``last_modified`` this agent session last saw; it is shared by every call of
    the session, so a conflict is detected across tool calls.
    """

    live = False

    def __init__(
        self,
        contents_manager: ContentsManager,
        stamps: dict[str, Any],
        locks: PathLocks,
        parsed: ParsedNotebooks | None = None,
    ) -> None:
        self.contents_manager = contents_manager
        self.stamps = stamps
        self.locks = locks
        self.parsed = parsed if parsed is not None else ParsedNotebooks()

    async def is_open(self, path: str) -> bool:
        return bool(await _call(self.contents_manager.file_exists, path))

    async def read(
        self,
        path: str,
        purpose: ReadPurpose = "show",
        outputs: OutputDetail = "full",
        output_cells: tuple[int, int] | None = None,
    ) -> nbformat.NotebookNode:
        """The notebook; ``purpose`` says how the read relates to conflict detection.

        show: the model sees this content, so later changes are checked against it. change: a tool reads in
        order to change the notebook, which must still be what the model saw (else ``E_NOTEBOOK_CHANGED``).
        peek: neither (e.g. only the kernel name from the metadata).
        """
        notebook, last_modified = await self._load(path)
        if purpose == "show":
            self.stamps[path] = last_modified
        elif purpose == "change":
            self._check_unchanged(path, last_modified)
        return notebook

    async def read_cell(
        self, path: str, cell_id: str | None = None, index: int | None = None, purpose: ReadPurpose = "change"
    ) -> CellRead:
        """The file is read whole (it must be parsed anyway); the cell keeps the notebook with it."""
        return cell_read(await self.read(path, purpose), cell_id, index)

    async def apply(
        self,
        path: str,
        edit: BaseModel,
        before: nbformat.NotebookNode | CellRead | None = None,
        version: int | None = None,
    ) -> Applied:
        """Apply ``edit`` to the file; its undo step is the file's exact content before (``before`` is not
        needed: the file is read under the lock; ``version`` neither: its stamp catches a change since)."""
        snapshot = await self.snapshot(path)
        notebook = await self._apply(path, edit)
        return Applied(FileUndo(snapshot, self.stamps.get(path)), notebook)

    async def acknowledge(self, path: str) -> None:
        await self.read(path, "show")

    async def _apply(self, path: str, edit: BaseModel) -> nbformat.NotebookNode:
        async with self.locks(path):
            if isinstance(edit, InsertCell) and not await self.is_open(path):
                notebook = nbformat.v4.new_notebook()
            else:
                current, last_modified = await self._load(path)
                self._check_unchanged(path, last_modified)
                self.stamps[path] = last_modified
                notebook = copy.deepcopy(current)
            apply_edit(notebook, edit)
            saved = await self._save(path, {"type": "notebook", "format": "json", "content": notebook})
            self.parsed.put(path, saved, notebook)
            return notebook

    async def _load(self, path: str) -> tuple[nbformat.NotebookNode, Any]:
        """The notebook and its ``last_modified``: parsed again only when the file changed since."""
        stat = await self._get(path, content=False)
        notebook = self.parsed.get(path, stat)
        if notebook is not None:
            return notebook, stat["last_modified"]
        model = await self._get(path, content=True)
        notebook = model["content"]
        ensure_cell_ids(notebook)
        self.parsed.put(path, model, notebook)
        return notebook, model["last_modified"]

    async def snapshot(self, path: str) -> NotebookSnapshot:
        if not await self.is_open(path):
            return NotebookSnapshot(path, None)
        model = await self._get(path, content=True, type="file", format="text")
        return NotebookSnapshot(path, model["content"], model.get("last_modified"))

    async def last_modified(self, path: str) -> Any:
        """The file's ``last_modified`` now; None when there is no file."""
        if not await self.is_open(path):
            return None
        return (await self._get(path, content=False))["last_modified"]

    async def restore(self, path: str, snapshot: NotebookSnapshot) -> None:
        async with self.locks(path):
            exists = await self.is_open(path)
            if exists:
                current = await self._get(path, content=False)
                self._check_unchanged(path, current["last_modified"])
            self.parsed.forget(path)
            if snapshot.content is None:
                if exists:
                    await _call(self.contents_manager.delete, path)
                self.stamps.pop(path, None)
                return
            await self._save(path, {"type": "file", "format": "text", "content": snapshot.content})

    # -- contents manager ------------------------------------------------------------------------------------

    async def _get(self, path: str, *, content: bool, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("type", "notebook")
        try:
            model: dict[str, Any] = await _call(self.contents_manager.get, path, content=content, **kwargs)
        except Exception as error:
            # The contents manager's errors are HTTP errors (tornado's, known only to web/): what went wrong
            # is asked of the contents manager and nbformat instead of read from a status code.
            if not await _call(self.contents_manager.file_exists, path):
                raise ToolError(
                    E_NOTEBOOK_NOT_FOUND,
                    user_text("%1 does not exist", path),
                    user_text(
                        "Check the path (relative to the project root); insert_cell or "
                        "run_cell with code creates it."
                    ),
                ) from None
            if kwargs["type"] == "notebook" and await self._unreadable(path):
                raise ToolError(
                    E_NOTEBOOK_INVALID, user_text("%1 is not a valid notebook: %2", path, error)
                ) from None
            raise
        return model

    async def _unreadable(self, path: str) -> bool:
        """Whether the file at ``path`` is not a notebook nbformat can read (what jupyter_server answers 400
        for), as opposed to a file it could not get at all."""
        try:
            model = await _call(self.contents_manager.get, path, content=True, type="file", format="text")
            nbformat.reads(str(model["content"]), as_version=4)
        except Exception:
            return True
        return False

    def _check_unchanged(self, path: str, last_modified: Any) -> None:
        known = self.stamps.get(path)
        if known is not None and known != last_modified:
            raise ToolError(
                E_NOTEBOOK_CHANGED,
                user_text(("%1 changed on disk since this session last read it; nothing was written"), path),
                user_text(
                    "Read the notebook again (read_notebook) and redo the change on the current content."
                ),
            )

    async def _save(self, path: str, model: dict[str, Any]) -> dict[str, Any]:
        """Save and return the saved file's model (no content)."""
        # Re-check right before writing: the window between our read and this save is where edits get lost.
        if path in self.stamps and await self.is_open(path):
            current = await self._get(path, content=False)
            self._check_unchanged(path, current["last_modified"])
        saved: dict[str, Any] = await _call(self.contents_manager.save, model, path)
        self.stamps[path] = saved["last_modified"]
        return saved
