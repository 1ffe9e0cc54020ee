"""One JupyterLab tab for the tests, talking to the real ``/hdsp-agent/notebooks/ws`` over a real WebSocket.

It plays src/notebookBridge.ts from the bridge's wire models (``documents/bridge_wire.py``): every request
the server sends is parsed as a ``BridgeRequest`` (a malformed one fails the test), every answer is built from
the result models (``NotebookResult``, ``CellResult``, ``AppliedDelta``, ``TextResult``, ``RevertResult``).
Notebooks change by the server's own rules (``edits.apply_edit``; the TypeScript twin is tested in
src/__tests__/notebookBridge.spec.ts and the two together in Chromium by ui-tests/tests/notebook.spec.ts).

- ``notebooks``: the live models of the notebooks open in the tab (the user's unsaved typing is a change to
  them); ``editors``: the texts of the files open in file editors, with ``saved`` what each last loaded or
  saved (an editor is dirty while they differ).
- ``loaded``: what the next ``announce`` says was just loaded from the file (a page reload, a reopened
  document): the server replays the agent's unsaved changes into those.
- ``save`` goes through the server's contents manager, as JupyterLab's save does.
- ``versions``: each notebook model's version, counting every change (the agent's and the user's: ``type``);
  an ``apply`` with a ``base_version`` other than the current one is refused with ``E_NOTEBOOK_CHANGED``.
  ``before_apply``: called when an apply arrives, before it is applied (the user typing in between).
- ``transferred()``: the bytes of every request and answer so far, as they went over the socket.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

from hdsp_agent.documents.bridge_wire import (
    BRIDGE_REQUESTS,
    OMITTED_KEY,
    OMITTED_TEXT_MARK,
    AppliedDelta,
    ApplyRequest,
    BridgeError,
    BridgeResponse,
    CellResult,
    NotebookResult,
    OpenAnnouncement,
    ReadCellRequest,
    ReadRequest,
    ReadTextRequest,
    RestoreRequest,
    RevertResult,
    RevertTextRequest,
    SaveRequest,
    SetTextRequest,
    SnapshotRequest,
    TextResult,
)
from hdsp_agent.documents.edits import apply_edit, cell_at, cell_index
from hdsp_agent.tools.base import ToolError


class FakeTab:
    def __init__(
        self,
        ws: Any,
        notebooks: dict[str, nbformat.NotebookNode] | None = None,
        *,
        editors: dict[str, str] | None = None,
        contents_manager: Any = None,
        root: Path | None = None,
        loaded: bool = False,
        answer: bool = True,
    ) -> None:
        self.ws = ws
        self.notebooks = notebooks if notebooks is not None else {}
        self.editors = editors if editors is not None else {}
        self.saved = {path: (root / path).read_text() for path in self.editors} if root is not None else {}
        self.root = root
        self.contents_manager = contents_manager
        self.loaded: set[str] = set(self.notebooks) if loaded else set()
        self.answer = answer
        self.versions: dict[str, int] = {}
        # Every request as it came over the wire (JSON), progress pushes included.
        self.requests: list[dict[str, Any]] = []
        # The JSON text of every request received and every answer sent.
        self.received: list[str] = []
        self.replies: list[str] = []
        self.before_apply: Callable[[], None] | None = None
        self.task = asyncio.ensure_future(self._serve())

    async def announce(self, loaded: list[str] | None = None) -> None:
        just_loaded = sorted(self.loaded if loaded is None else set(loaded))
        message = OpenAnnouncement(
            paths=sorted(self.notebooks), editors=sorted(self.editors), loaded=just_loaded
        )
        await self.ws.write_message(message.model_dump_json())
        # The server handles messages in order: a moment later the announcement has landed.
        await asyncio.sleep(0.05)

    async def _serve(self) -> None:
        while True:
            message = await self.ws.read_message()
            if message is None:
                return
            raw = json.loads(message)
            self.received.append(message if isinstance(message, str) else message.decode())
            self.requests.append(raw)
            request = BRIDGE_REQUESTS.validate_python(raw)
            if not self.answer:
                continue
            try:
                reply = BridgeResponse(id=request.id, result=self.run(request))
            except ToolError as error:
                reply = BridgeResponse(
                    id=request.id, error=BridgeError(code=error.code, message=error.message)
                )
            if request.id is not None:
                text = reply.model_dump_json(exclude_none=True)
                self.replies.append(text)
                await self.ws.write_message(text)

    def run(self, request: Any) -> dict[str, Any]:
        """The result of one request, as the tab's NotebookBridge computes it."""
        path = request.path
        if isinstance(request, ReadTextRequest):
            text = self.editors[path]
            return TextResult(text=text, dirty=text != self.saved.get(path)).model_dump()
        if isinstance(request, SetTextRequest):
            if self.editors[path] != request.expected:
                raise ToolError("E_EDITOR_CHANGED", "the user typed meanwhile")
            self.editors[path] = request.text
            return {}
        if isinstance(request, RevertTextRequest):
            if self.editors[path] != self.saved[path] or self.editors[path] != request.expected:
                return RevertResult(reverted=False).model_dump()
            assert self.root is not None
            self.editors[path] = self.saved[path] = (self.root / path).read_text()
            return RevertResult(reverted=True).model_dump()
        if isinstance(request, SaveRequest):
            return self._save(path)
        if path not in self.notebooks:
            raise ToolError("E_NOTEBOOK_BRIDGE", "the notebook is no longer open in this JupyterLab tab")
        notebook = self.notebooks[path]
        if isinstance(request, ReadRequest) and request.output_chars is not None:
            brief = copy.deepcopy(notebook)
            start, stop = request.outputs_start or 0, request.outputs_stop
            for index, cell in enumerate(brief.cells):
                if cell.cell_type == "code" and not (start <= index and (stop is None or index < stop)):
                    cell.outputs = []
            return brief_outputs(brief, request.output_chars).model_dump()
        if isinstance(request, ReadRequest | SnapshotRequest):
            return NotebookResult(notebook=copy.deepcopy(notebook)).model_dump()
        if isinstance(request, ReadCellRequest):
            return self._read_cell(path, notebook, request)
        if isinstance(request, RestoreRequest):
            self.notebooks[path] = nbformat.from_dict(request.notebook)
            self._changed(path)
            return {}
        assert isinstance(request, ApplyRequest)
        return self._apply(path, notebook, request)

    def _read_cell(
        self, path: str, notebook: nbformat.NotebookNode, request: ReadCellRequest
    ) -> dict[str, Any]:
        if request.cell_id is not None:
            index = cell_index(notebook, request.cell_id)
            if index is None:
                raise ToolError("E_CELL_NOT_FOUND", f"no cell with id {request.cell_id!r}")
        else:
            index, _ = cell_at(notebook, request.index if request.index is not None else -1)
        language = (notebook.metadata.get("language_info") or {}).get("name")
        return CellResult(
            version=self.versions.get(path, 0),
            index=index,
            cell_count=len(notebook.cells),
            cell=copy.deepcopy(notebook.cells[index]),
            kernelspec=dict(notebook.metadata.get("kernelspec") or {}),
            language=language,
        ).model_dump()

    def type(self, path: str, cell_id: str, source: str) -> None:
        """The user types in a cell: a change to the model, so a new version."""
        notebook = self.notebooks[path]
        index = cell_index(notebook, cell_id)
        assert index is not None
        notebook.cells[index].source = source
        self._changed(path)

    def transferred(self) -> int:
        """Bytes over the socket so far: every request and every answer."""
        return sum(len(text.encode()) for text in (*self.received, *self.replies))

    def _apply(self, path: str, notebook: nbformat.NotebookNode, request: ApplyRequest) -> dict[str, Any]:
        if request.id is not None and self.before_apply is not None:
            self.before_apply()
        if request.base_version is not None and request.base_version != self.versions.get(path, 0):
            raise ToolError("E_NOTEBOOK_CHANGED", "the notebook changed after the agent read the cell")
        edit = request.edit
        cell_id = str(edit.cell["id"]) if edit.op == "insert_cell" else edit.cell_id
        prior_index = cell_index(notebook, cell_id)
        prior = copy.deepcopy(notebook.cells[prior_index]) if prior_index is not None else None
        apply_edit(notebook, edit)
        version = self._changed(path)
        if request.id is None:
            return {}  # a progress push: nobody reads the answer
        index = cell_index(notebook, cell_id)
        cell = copy.deepcopy(notebook.cells[index]) if index is not None else None
        return AppliedDelta(
            version=version, index=index, cell=cell, prior_index=prior_index, prior_cell=prior
        ).model_dump()

    def _changed(self, path: str) -> int:
        self.versions[path] = self.versions.get(path, 0) + 1
        return self.versions[path]

    def _save(self, path: str) -> dict[str, Any]:
        if self.contents_manager is None:
            return {}
        if path in self.editors:
            model: dict[str, Any] = {"type": "file", "format": "text", "content": self.editors[path]}
            self.saved[path] = self.editors[path]
        else:
            model = {"type": "notebook", "format": "json", "content": self.notebooks[path]}
        result = self.contents_manager.save(model, path)
        if asyncio.iscoroutine(result):
            asyncio.ensure_future(result)
        return {}

    def progress_outputs(self) -> list[list[str]]:
        """The outputs texts of every progress-only update, in order."""
        return [
            ["".join(output.get("text", "")) for output in request["edit"]["outputs"]]
            for request in self.requests
            if request["id"] is None and request["edit"]["op"] == "set_cell_outputs"
        ]

    async def close(self) -> None:
        self.ws.close()
        await asyncio.wait({self.task}, timeout=5)


_IMAGE_MIME = re.compile(r"^image/(png|jpeg|gif|webp)$")


def brief_outputs(notebook: dict[str, Any], chars: int) -> NotebookResult:
    """A brief read's answer, as src/notebookBridge.ts ``briefOutputs`` builds it (see ReadRequest)."""
    omitted_chars = 0

    def cut(value: Any) -> str:
        nonlocal omitted_chars
        text = "".join(value) if isinstance(value, list) else str(value)
        if len(text) <= chars:
            return text
        omitted_chars += len(text) - chars
        return f"{text[:chars]}{OMITTED_TEXT_MARK}{len(text) - chars} more characters]"

    for cell in notebook["cells"]:
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if output.get("output_type") == "stream":
                output["text"] = cut(output["text"])
                continue
            data = output.get("data")
            if not isinstance(data, dict):
                continue
            omitted = {}
            for mime, value in list(data.items()):
                if _IMAGE_MIME.match(mime):
                    encoded = re.sub(r"\s", "", "".join(value) if isinstance(value, list) else str(value))
                    padding = 2 if encoded.endswith("==") else 1 if encoded.endswith("=") else 0
                    omitted[mime] = {"bytes": len(encoded) * 3 // 4 - padding, "head": encoded[:44]}
                    omitted_chars += len(encoded)
                    data[mime] = ""
                elif isinstance(value, str | list):
                    data[mime] = cut(value)
            if omitted:
                output["metadata"] = {**output.get("metadata", {}), OMITTED_KEY: omitted}
    return NotebookResult(notebook=notebook, omitted_chars=omitted_chars)
