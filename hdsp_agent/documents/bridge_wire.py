"""The NotebookBridge's messages, both directions, as pydantic models (``contracts/wire.json`` keeps
src/notebookBridge.ts in step with them; ``wire_schema.py``).

server → tab: a ``request`` per ``method``. ``id`` is null for an ``apply`` sent only to show progress (a
running cell's outputs so far): nobody waits for its answer.

tab → server: ``open`` (every notebook and text-file editor the tab has open, sent on connect and on every
change; ``loaded``: those announced for the first time, i.e. just loaded from the file) and ``response`` (the
``result`` of a request, or its ``error``).

Results by method: ``read``/``snapshot`` → ``NotebookResult``; ``read_cell`` → ``CellResult`` (one cell, what
a tool needs around it, and the notebook's version); ``apply`` → ``AppliedDelta`` (the cell the edit touched
before and after, and the notebook's version: never the whole notebook, so an edit costs O(cell));
``read_text`` → ``TextResult``; ``revert_text`` → ``RevertResult``; the others → ``{}``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from .edits import NotebookEdit

# Where a brief ``read`` (``ReadRequest.output_chars``) says what it left out of an output.
OMITTED_KEY = "hdsp_agent_omitted"
OMITTED_TEXT_MARK = "\n[… not read: "


class _Request(BaseModel):
    type: Literal["request"] = "request"
    id: int | None
    path: str


class ReadRequest(_Request):
    """``output_chars`` None: the whole notebook. A number: the outputs without their large payloads (a
    notebook of 2,000 cells and plots is 50 MB; an overview needs its sources and a line per output): each
    image's data is "" with ``metadata[OMITTED_KEY][mime] = {"bytes": n, "head": the first 44 base64
    characters}`` (its size and, for PNG and GIF, dimensions), each text longer than ``output_chars`` is cut
    to that many characters followed by ``OMITTED_TEXT_MARK`` and how many were left out."""

    method: Literal["read"] = "read"
    output_chars: int | None = None
    # A brief read's cells whose outputs are sent, by index: ``outputs_start`` to ``outputs_stop`` (excluded;
    # None: from the first, to the last). The others come with their sources and no outputs, so an overview of
    # the first 200 of 2,000 cells does not carry the other 1,800 cells' outputs.
    outputs_start: int | None = None
    outputs_stop: int | None = None


class ReadCellRequest(_Request):
    """One cell, by id or by index (negative: from the end); refused with ``E_CELL_NOT_FOUND``."""

    method: Literal["read_cell"] = "read_cell"
    cell_id: str | None = None
    index: int | None = None


class ApplyRequest(_Request):
    """``base_version``: the version the edit was computed from (a ``read_cell``'s); the tab refuses it with
    ``E_NOTEBOOK_CHANGED`` when its notebook has changed since (the user typed between the read and the edit).
    None: no check (a run's outputs, which the user may type around while it runs)."""

    method: Literal["apply"] = "apply"
    edit: NotebookEdit
    base_version: int | None = None


class SnapshotRequest(_Request):
    method: Literal["snapshot"] = "snapshot"


class RestoreRequest(_Request):
    method: Literal["restore"] = "restore"
    notebook: dict[str, Any]


class SaveRequest(_Request):
    method: Literal["save"] = "save"


class ReadTextRequest(_Request):
    method: Literal["read_text"] = "read_text"


class SetTextRequest(_Request):
    """Refused with ``E_EDITOR_CHANGED`` when the editor no longer shows ``expected``."""

    method: Literal["set_text"] = "set_text"
    expected: str
    text: str


class RevertTextRequest(_Request):
    """Reload the editor from its file while it shows ``expected`` with nothing unsaved."""

    method: Literal["revert_text"] = "revert_text"
    expected: str


BridgeRequest = Annotated[
    ReadRequest
    | ReadCellRequest
    | ApplyRequest
    | SnapshotRequest
    | RestoreRequest
    | SaveRequest
    | ReadTextRequest
    | SetTextRequest
    | RevertTextRequest,
    Field(discriminator="method"),
]


class OpenAnnouncement(BaseModel):
    type: Literal["open"] = "open"
    paths: list[str]
    editors: list[str] = []
    loaded: list[str] = []


class BridgeError(BaseModel):
    code: str
    message: str


class BridgeResponse(BaseModel):
    type: Literal["response"] = "response"
    id: int | None
    result: dict[str, Any] | None = None
    error: BridgeError | None = None


TabMessage = Annotated[OpenAnnouncement | BridgeResponse, Field(discriminator="type")]


class NotebookResult(BaseModel):
    notebook: dict[str, Any]
    # A brief read: how many characters of output it left out (the whole notebook's size, for the wait).
    omitted_chars: int = 0


class CellResult(BaseModel):
    """One cell at ``index`` of ``cell_count``, the notebook's kernelspec and language (which kernel runs
    it), and the notebook model's version now: what edit_cell, delete_cell, move_cell and run_cell need,
    O(cell)."""

    version: int
    index: int
    cell_count: int
    cell: dict[str, Any]
    kernelspec: dict[str, Any] = {}
    language: str | None = None


class AppliedDelta(BaseModel):
    """What an ``apply`` changed: the touched cell after (``cell`` at ``index``; None when deleted) and before
    (``prior_cell`` at ``prior_index``; None when inserted), and the notebook model's version after."""

    version: int
    index: int | None = None
    cell: dict[str, Any] | None = None
    prior_index: int | None = None
    prior_cell: dict[str, Any] | None = None


class TextResult(BaseModel):
    text: str
    dirty: bool


class RevertResult(BaseModel):
    reverted: bool


BRIDGE_REQUESTS: TypeAdapter[Any] = TypeAdapter(BridgeRequest)
TAB_MESSAGES: TypeAdapter[Any] = TypeAdapter(TabMessage)
# The results that carry something, by the method that returns them (for the schema and its TS mirror).
BRIDGE_RESULTS: dict[str, type[BaseModel]] = {
    "NotebookResult": NotebookResult,
    "CellResult": CellResult,
    "AppliedDelta": AppliedDelta,
    "TextResult": TextResult,
    "RevertResult": RevertResult,
}
