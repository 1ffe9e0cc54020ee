"""What a live document is, as types: the contract between the tools and whoever serves the document.

A notebook is served two ways — the tab that has it open (``live.LiveNotebooks``, over the NotebookBridge) and
its file on disk (``gateway.FileNotebookGateway``) — and a text file open in a file editor one way
(``live_texts.LiveTexts``). The tools and the runtime call these Protocols only: no ``Any``, no probing for a
method, no asking which concrete class serves the document. mypy checks that both notebook gateways satisfy
``NotebookGateway`` and the live ones ``LiveNotebookGateway`` / ``LiveTextGateway``; tests/test_contract.py
checks it at run time too.

Every change returns its own undo step: the gateway that made it knows best what puts it back (the file's
exact prior content; in an open tab, the inverse edit on the one cell, so the user's typing elsewhere stays).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import nbformat
from pydantic import BaseModel

if TYPE_CHECKING:
    from .gateway import NotebookSnapshot
    from .inverse import InverseEdit

# show: the model sees this content, so later changes are checked against it. change: read in order to
# change the notebook, which must still be what the model saw. peek: neither (e.g. only the kernel name).
ReadPurpose = Literal["show", "change", "peek"]
# full: every output whole. brief: a live tab leaves out the outputs' large payloads (images, long text: see
# ``bridge_wire.ReadRequest``), for a read that shows sources and a line per output; such a notebook is never
# written back or used as an edit's ``before``. A file is read whole either way (it is parsed whole anyway).
OutputDetail = Literal["full", "brief"]
Settled = Literal["saved", "left_unsaved", "written", "unchanged"]


class ContentsManager(Protocol):
    """What ``documents/`` uses of a Jupyter contents manager (jupyter_server's, sync or async: a call is
    awaited when it returns an awaitable, ``gateway._call``). Typed: a method is called, never probed for."""

    def get(self, path: str, content: bool = True, type: str | None = None, format: str | None = None) -> Any:
        """The model of ``path`` (raises jupyter_server's HTTP error 404 when there is none)."""
        ...

    def save(self, model: dict[str, Any], path: str) -> Any: ...

    def file_exists(self, path: str) -> Any: ...

    def dir_exists(self, path: str) -> Any: ...

    def delete(self, path: str) -> Any: ...


@dataclass(frozen=True)
class FileUndo:
    """Undo of a change to a notebook's file: its exact content before, and its ``last_modified`` after."""

    snapshot: NotebookSnapshot
    after_stamp: Any = None


@dataclass(frozen=True)
class CellRead:
    """One cell as a tool read it in order to change or run it (``NotebookGateway.read_cell``).

    An open tab sends only this cell, whatever the notebook's size; a file is read whole anyway, and keeps it
    (``notebook``) so its edit and undo work as before.
    """

    cell: nbformat.NotebookNode
    index: int
    cell_count: int
    kernelspec: dict[str, Any]
    language: str | None
    # The tab's model version at the read: an edit computed from this read is refused when it has moved
    # (``apply(..., version=)``). None for a file (its ``last_modified`` stamp does that).
    version: int | None = None
    notebook: nbformat.NotebookNode | None = None

    @property
    def cell_id(self) -> str:
        return str(self.cell.get("id"))


@dataclass(frozen=True)
class Applied:
    """One edit as the gateway applied it."""

    # An open tab's: the inverse edit of the one cell the change touched; a file's: its content before.
    undo: InverseEdit | FileUndo
    # The whole notebook after the edit when the gateway has it without asking for more (the file; an open
    # tab when the caller gave the notebook as it read it): None otherwise.
    notebook: nbformat.NotebookNode | None
    # The document's version after the edit (an open tab counts every change to its model; a file: None).
    version: int | None = None
    # The cell the edit touched, after (None when deleted) and its index: an open tab's answer, so the caller
    # can update what it remembers of the notebook without reading it. None from a file (see ``notebook``).
    cell: dict[str, Any] | None = None
    index: int | None = None


@dataclass(frozen=True)
class SettleOutcome:
    """What the end of a turn did with one document the agent changed (``LiveNotebookGateway.settle``)."""

    path: str
    outcome: Settled
    problem: str | None = None


@dataclass(frozen=True)
class TextEdit:
    """An agent edit put into an open editor, as its own undo step: the text the agent's edit started from
    and the text as the agent made it (the user's unsaved typing around it is in neither)."""

    before: str
    after: str


@runtime_checkable
class NotebookGateway(Protocol):
    """Access to notebook documents. Paths are API paths (relative to the server root, ``/``-separated)."""

    # True for the notebook open in a tab (the user sees each change at once; nothing is written to disk).
    live: bool

    async def is_open(self, path: str) -> bool:
        """Whether this gateway holds ``path`` (live: open in a connected JupyterLab; file: it exists)."""
        ...

    async def read(
        self,
        path: str,
        purpose: ReadPurpose = "show",
        outputs: OutputDetail = "full",
        output_cells: tuple[int, int] | None = None,
    ) -> nbformat.NotebookNode:
        """The notebook as it is now (live: including unsaved edits); every cell has an id. ``output_cells``:
        a brief read needs the outputs of these cells only (start, stop): a live tab sends the others without
        outputs; a file is read whole anyway."""
        ...

    async def read_cell(
        self, path: str, cell_id: str | None = None, index: int | None = None, purpose: ReadPurpose = "change"
    ) -> CellRead:
        """One cell by id or index (negative: from the end), with the notebook's cell count, kernelspec and
        language; ``E_CELL_NOT_FOUND`` when there is none. A live tab sends only that cell."""
        ...

    async def apply(
        self,
        path: str,
        edit: BaseModel,
        before: nbformat.NotebookNode | CellRead | None = None,
        version: int | None = None,
    ) -> Applied:
        """Apply one ``edits.NotebookEdit``; the result carries its undo step. ``before``: the notebook, or
        the cell the edit addresses, as the caller read it just before (its undo is computed from it).
        ``version``: the live version that read saw; a tab changed since refuses the edit
        (``E_NOTEBOOK_CHANGED``)."""
        ...

    async def acknowledge(self, path: str) -> None:
        """The notebook as it is now is what the caller checked: later changes are judged against it (the
        file: its current ``last_modified``; a live tab always holds the latest, nothing to do)."""
        ...

    async def snapshot(self, path: str) -> NotebookSnapshot:
        """The exact current state, to give back to ``restore``."""
        ...

    async def restore(self, path: str, snapshot: NotebookSnapshot) -> None:
        """Put the notebook back exactly as ``snapshot`` holds it."""
        ...


@runtime_checkable
class LiveNotebookGateway(NotebookGateway, Protocol):
    """The notebooks open in connected tabs, and the journal of the agent's changes to them not yet saved."""

    def show(self, path: str, edit: BaseModel) -> int:
        """Apply ``edit`` without waiting for the tab (a running cell's outputs so far); the bytes sent."""
        ...

    async def reclaim(self, path: str, contents_manager: ContentsManager) -> bool:
        """Before ``path`` is used as a file: True when a tab holds it again, else its unsaved agent changes
        are written to the file first (False)."""
        ...

    def change_mark(self, session_id: str | None = None) -> int:
        """Where the change counter is now; ``settle(..., since=mark)`` covers what changed after it. With
        ``session_id``: that session's turn starts here (``closed_during_turn``)."""
        ...

    def closed_during_turn(self, session_id: str, path: str) -> bool:
        """Whether the user closed ``path`` after ``session_id``'s turn started : its work there ends."""
        ...

    async def settle(
        self, contents_manager: ContentsManager, since: int = 0, paths: Collection[str] | None = None
    ) -> list[SettleOutcome]:
        """At the end of a turn: every document changed after ``since`` (or the documents ``paths``, after an
        undo or a redo) is saved or kept safe."""
        ...


@runtime_checkable
class LiveTextGateway(Protocol):
    """Text files open in a JupyterLab file editor: the agent's edits go into the editor, merged with what
    the user typed there and did not save."""

    def is_open(self, path: str) -> bool:
        """Whether an editor of a connected tab holds ``path``."""
        ...

    async def state(self, path: str) -> tuple[str, bool] | None:
        """The editor's text and whether it has unsaved changes (None: no editor)."""
        ...

    async def reload(self, path: str, expected: str) -> bool:
        """Reload the editor from the file while it still shows ``expected`` with nothing unsaved."""
        ...

    def agent_text(self, path: str) -> str | None:
        """The text the agent made of ``path`` while it is unsaved in an editor (None: the file's own)."""
        ...

    async def edit_text(self, path: str, base: str, changed: str, on_disk: str) -> TextEdit:
        """Merge the agent's change (``base`` → ``changed``) into the editor with the user's typing."""
        ...

    async def revert(self, path: str, edit: TextEdit) -> bool:
        """Take ``edit`` back out of the open editor (its undo step); False when the editor is gone."""
        ...

    async def reclaim(self, path: str, contents_manager: ContentsManager) -> bool:
        """Before ``path`` is edited on disk: True when an editor holds it again, else the agent's unsaved
        change is written to the file first (False)."""
        ...
