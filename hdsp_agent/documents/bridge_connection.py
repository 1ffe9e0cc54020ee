"""One browser tab's NotebookBridge, seen from the server: what it has open, and its requests and answers.

The wire is described in ``live.py``, which keeps every connection and decides which one serves a path. A
connection knows nothing of tornado: ``send`` is anything that takes a dict; the route feeds it the
browser's messages with ``receive``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

import nbformat

from ..tools.base import ToolError
from ..user_text import user_text
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

    def __init__(
        self,
        send: Callable[[dict[str, Any]], Any],
        on_open: Callable[[BridgeConnection, set[str]], None] | None = None,
        on_close: Callable[[set[str]], None] | None = None,
    ) -> None:
        self._send = send
        # Called with the paths this tab announces for the first time and as loaded from disk.
        self._on_open = on_open
        # Called with the documents the user closed in this tab (it stays connected).
        self._on_close = on_close
        self.paths: set[str] = set()
        # Text files open in the tab's file editors.
        self.editors: set[str] = set()
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self.closed = False

    def receive(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "open":
            paths = message.get("paths")
            if isinstance(paths, list):
                announced = {_normalized(path) for path in paths if isinstance(path, str)}
                loaded = message.get("loaded")
                just_loaded = (
                    {_normalized(path) for path in loaded if isinstance(path, str)}
                    if isinstance(loaded, list)
                    else set()
                )
                editors = message.get("editors")
                self.editors = (
                    {_normalized(path) for path in editors if isinstance(path, str)}
                    if isinstance(editors, list)
                    else set()
                )
                before = self.paths | self.editors
                opened = just_loaded & (announced | self.editors)
                self.paths = announced
                gone = before - (announced | self.editors)
                # A rename shows as one path gone and a new one there in the same message: not a close.
                if gone and not (announced | self.editors) - before and self._on_close is not None:
                    self._on_close(gone)
                if opened and self._on_open is not None:
                    self._on_open(self, opened)
        elif kind == "response":
            future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result(message)

    def close(self) -> None:
        self.closed = True
        self.paths = set()
        self.editors = set()
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


def _text(result: dict[str, Any], path: str) -> str:
    text = result.get("text")
    if not isinstance(text, str):
        raise ToolError(E_NOTEBOOK_BRIDGE, user_text("JupyterLab sent no text for %1", path))
    return text.replace("\r\n", "\n")


def _notebook(result: dict[str, Any], path: str) -> nbformat.NotebookNode:
    content = result.get("notebook")
    if not isinstance(content, dict):
        raise ToolError(E_NOTEBOOK_BRIDGE, user_text("JupyterLab sent no notebook for %1", path))
    notebook = nbformat.from_dict(content)
    ensure_cell_ids(notebook)
    return notebook
