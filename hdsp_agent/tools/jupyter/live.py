"""The notebooks open in connected JupyterLab tabs, as a ``NotebookGateway`` (live mode).

Each browser tab running the sidebar keeps one WebSocket to ``/hdsp-agent/notebooks/ws`` (its NotebookBridge).
Over it the tab says which notebooks it has open and answers requests: read the live model (unsaved edits
included), apply an edit from ``edits.py`` to it, snapshot it, restore a snapshot. The tab applies edits to
the shared notebook model, so with real-time collaboration every collaborator sees them too, and the user's
unsaved typing elsewhere in the notebook stays.

This module knows nothing of tornado: a connection is anything with a ``send(dict)``; the route feeds it the
browser's messages.

Wire (JSON):
- browser → server ``{"type": "open", "paths": [...]}``: every notebook open in the tab, sent on connect and
  on every change.
- server → browser ``{"type": "request", "id", "method": "read"|"apply"|"snapshot"|"restore", "path",
  "edit"?, "content"?}``; ``id`` is null for ``apply`` sent only to show progress (no answer wanted).
- browser → server ``{"type": "response", "id", "result": {...}}`` or ``{"type": "response", "id", "error":
  {"code", "message"}}``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from typing import Any

import nbformat
from pydantic import BaseModel

from ...user_text import user_text
from ..base import ToolError
from .document import NotebookSnapshot
from .edits import ensure_cell_ids

E_NOTEBOOK_BRIDGE = "E_NOTEBOOK_BRIDGE"
# A tab answers from memory; this long means it is frozen or gone.
REQUEST_TIMEOUT_SECONDS = 20.0


def _normalized(path: str) -> str:
    # The frontend's paths can carry a drive ("RTC:nb.ipynb") and never a leading slash.
    drive, sep, rest = path.partition(":")
    if sep and "/" not in drive and rest:
        path = rest
    return path.lstrip("/")


class BridgeConnection:
    """One browser tab's bridge: the notebooks it has open and its requests waiting for an answer."""

    def __init__(self, send: Callable[[dict[str, Any]], Any]) -> None:
        self._send = send
        self.paths: set[str] = set()
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self.closed = False

    def receive(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "open":
            paths = message.get("paths")
            if isinstance(paths, list):
                self.paths = {_normalized(path) for path in paths if isinstance(path, str)}
        elif kind == "response":
            future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result(message)

    def close(self) -> None:
        self.closed = True
        self.paths = set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(
                    ToolError(
                        E_NOTEBOOK_BRIDGE,
                        user_text("the JupyterLab tab holding the notebook disconnected before it answered"),
                        user_text("Read the notebook again: the change may or may not have been applied."),
                    )
                )
        self._pending.clear()

    def notify(self, method: str, path: str, **payload: Any) -> int:
        """A request that wants no answer (output updates while a cell runs); returns the bytes sent."""
        if self.closed:
            return 0
        sent = self._send({"type": "request", "id": None, "method": method, "path": path, **payload})
        return sent if isinstance(sent, int) else 0

    async def request(self, method: str, path: str, **payload: Any) -> dict[str, Any]:
        if self.closed:
            raise ToolError(E_NOTEBOOK_BRIDGE, user_text("the JupyterLab tab holding the notebook is gone"))
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._send({"type": "request", "id": request_id, "method": method, "path": path, **payload})
        try:
            reply = await asyncio.wait_for(future, REQUEST_TIMEOUT_SECONDS)
        except asyncio.TimeoutError:
            raise ToolError(
                E_NOTEBOOK_BRIDGE,
                user_text(
                    "JupyterLab did not answer within %1 s (%2 %3)",
                    format(REQUEST_TIMEOUT_SECONDS, ".0f"),
                    method,
                    path,
                ),
                user_text("The browser tab may be frozen or asleep; try again."),
            ) from None
        finally:
            self._pending.pop(request_id, None)
        error = reply.get("error")
        if error is not None:
            code = (
                str(error.get("code") or E_NOTEBOOK_BRIDGE) if isinstance(error, dict) else E_NOTEBOOK_BRIDGE
            )
            message = str(error.get("message") if isinstance(error, dict) else error)
            raise ToolError(
                code,
                user_text("%1: %2", path, message),
                user_text("Read the notebook again (read_notebook) and retry."),
            )
        result = reply.get("result")
        return result if isinstance(result, dict) else {}


def _notebook(result: dict[str, Any], path: str) -> nbformat.NotebookNode:
    content = result.get("notebook")
    if not isinstance(content, dict):
        raise ToolError(E_NOTEBOOK_BRIDGE, user_text("JupyterLab sent no notebook for %1", path))
    notebook = nbformat.from_dict(content)
    ensure_cell_ids(notebook)
    return notebook


class LiveNotebooks:
    """The ``NotebookGateway`` over every connected tab; a path is served by the tab that opened it last."""

    def __init__(self) -> None:
        self._connections: list[BridgeConnection] = []

    def connect(self, send: Callable[[dict[str, Any]], Any]) -> BridgeConnection:
        connection = BridgeConnection(send)
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
        return _notebook(await self._holder_or_error(path).request("read", path), path)

    async def apply(self, path: str, edit: BaseModel) -> nbformat.NotebookNode:
        result = await self._holder_or_error(path).request("apply", path, edit=edit.model_dump())
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
