"""One browser tab's NotebookBridge, seen from the server: what it has open, and its requests and answers.

The messages are the models of ``bridge_wire.py``; ``OpenTabs`` keeps every connection and decides which one
serves a path, for the notebooks (``live.py``) and the text editors (``live_texts.py``). A connection knows
nothing of tornado: ``send`` is anything that takes a dict; the route feeds it the browser's messages with
``receive``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

import nbformat
from pydantic import ValidationError

from ..tools.base import ToolError
from ..user_text import user_text
from .bridge_wire import BRIDGE_REQUESTS, TAB_MESSAGES, BridgeResponse, OpenAnnouncement
from .edits import ensure_cell_ids
from .gateway import PathLocks

E_NOTEBOOK_BRIDGE = "E_NOTEBOOK_BRIDGE"
# A reloading tab announces its documents again within a few seconds; until then the agent's unsaved changes
# are not written to the file (the reloaded tab might have read the file before the write, and would then
# overwrite it).
RECONNECT_GRACE_SECONDS = 5.0
log = logging.getLogger("hdsp_agent.live")
# A tab answers from memory; this long means it is frozen or gone ...
REQUEST_TIMEOUT_SECONDS = 20.0
# ... plus a second per this many bytes of the largest answer it gave for the document: serializing and
# sending a notebook of 50 MB takes the tab seconds (``request_timeout``).
BYTES_PER_EXTRA_SECOND = 1024 * 1024


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
        self._pending: dict[int, asyncio.Future[BridgeResponse]] = {}
        self._pending_paths: dict[int, str] = {}
        # The size of the largest answer about each document (a brief read counts what it left out).
        self.answer_bytes: dict[str, int] = {}
        self._ids = itertools.count(1)
        self.closed = False

    def request_timeout(self, path: str) -> float:
        """How long to wait for the tab's answer about ``path``: longer for a large document."""
        return REQUEST_TIMEOUT_SECONDS + self.answer_bytes.get(_normalized(path), 0) / BYTES_PER_EXTRA_SECOND

    def receive(self, message: dict[str, Any], size: int = 0) -> None:
        """One message from the tab; ``size``: its length on the wire (for ``request_timeout``)."""
        try:
            parsed = TAB_MESSAGES.validate_python(message)
        except ValidationError as error:
            log.warning(
                "hdsp-agent notebook bridge: a message that is not the protocol's was ignored: %s", error
            )
            return
        if isinstance(parsed, OpenAnnouncement):
            announced = {_normalized(path) for path in parsed.paths}
            just_loaded = {_normalized(path) for path in parsed.loaded}
            self.editors = {_normalized(path) for path in parsed.editors}
            before = self.paths | self.editors
            opened = just_loaded & (announced | self.editors)
            self.paths = announced
            gone = before - (announced | self.editors)
            # A rename shows as one path gone and a new one there in the same message: not a close.
            if gone and not (announced | self.editors) - before and self._on_close is not None:
                self._on_close(gone)
            if opened and self._on_open is not None:
                self._on_open(self, opened)
        elif isinstance(parsed, BridgeResponse) and parsed.id is not None:
            path = self._pending_paths.pop(parsed.id, None)
            if path is not None:
                omitted = (parsed.result or {}).get("omitted_chars")
                whole = size + (omitted if isinstance(omitted, int) else 0)
                self.answer_bytes[path] = max(self.answer_bytes.get(path, 0), whole)
            future = self._pending.pop(parsed.id, None)
            if future is not None and not future.done():
                future.set_result(parsed)

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
        sent = self._send(_message(None, method, path, payload))
        return sent if isinstance(sent, int) else 0

    async def request(self, method: str, path: str, **payload: Any) -> dict[str, Any]:
        """Ask the tab and wait for its result (raises ``ToolError`` with the tab's error code)."""
        if self.closed:
            raise ToolError(E_NOTEBOOK_BRIDGE, user_text("the JupyterLab tab holding the notebook is gone"))
        request_id = next(self._ids)
        message = _message(request_id, method, path, payload)
        future: asyncio.Future[BridgeResponse] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._pending_paths[request_id] = _normalized(path)
        timeout = self.request_timeout(path)
        self._send(message)
        try:
            reply = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise ToolError(
                E_NOTEBOOK_BRIDGE,
                user_text(
                    "JupyterLab did not answer within %1 s (%2 %3)",
                    format(timeout, ".0f"),
                    method,
                    path,
                ),
                user_text("The browser tab may be frozen or asleep; try again."),
            ) from None
        finally:
            self._pending.pop(request_id, None)
            self._pending_paths.pop(request_id, None)
        if reply.error is not None:
            raise ToolError(
                reply.error.code or E_NOTEBOOK_BRIDGE,
                user_text("%1: %2", path, reply.error.message),
                user_text("Read the notebook again (read_notebook) and retry."),
            )
        return reply.result or {}


def _message(request_id: int | None, method: str, path: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The request as it goes on the wire, checked against its model (``bridge_wire.BridgeRequest``): a
    malformed request is the server's bug, said here rather than by the tab."""
    message = {"type": "request", "id": request_id, "method": method, "path": path, **payload}
    BRIDGE_REQUESTS.validate_python(message)
    return message


class OpenTabs:
    """Every connected tab's bridge: which one serves a path (the one that opened it last), the change counter
    of the documents the agent changed through them, and one lock per document."""

    reconnect_grace_seconds = RECONNECT_GRACE_SECONDS

    def __init__(
        self,
        on_open: Callable[[BridgeConnection, set[str]], None] | None = None,
        on_close: Callable[[set[str]], None] | None = None,
    ) -> None:
        self.connections: list[BridgeConnection] = []
        self.on_open = on_open
        self.on_close = on_close
        # Applying, replaying and settling one document never interleave (a replay must finish before the
        # next edit or read, or the agent would see the document without its own changes).
        self.locks = PathLocks()
        # When each document last got an agent change, on a counter: a turn settles the documents changed
        # since it started (``change_mark``), not other conversations' (whose tabs may be long gone).
        self.changes = 0
        self.changed_at: dict[str, int] = {}

    def changed(self, path: str) -> None:
        self.changes += 1
        self.changed_at[path] = self.changes

    def connect(self, send: Callable[[dict[str, Any]], Any]) -> BridgeConnection:
        connection = BridgeConnection(send, on_open=self._opened, on_close=self._closed)
        self.connections.append(connection)
        return connection

    def _opened(self, connection: BridgeConnection, paths: set[str]) -> None:
        if self.on_open is not None:
            self.on_open(connection, paths)

    def _closed(self, paths: set[str]) -> None:
        if self.on_close is not None:
            self.on_close(paths)

    def disconnect(self, connection: BridgeConnection) -> None:
        connection.close()
        if connection in self.connections:
            self.connections.remove(connection)

    def holder(self, path: str) -> BridgeConnection | None:
        """The tab with the notebook ``path`` open (the last one that opened it)."""
        path = _normalized(path)
        for connection in reversed(self.connections):
            if path in connection.paths and not connection.closed:
                return connection
        return None

    def editor_holder(self, path: str) -> BridgeConnection | None:
        """The tab with ``path`` open in a file editor (the last one that opened it)."""
        path = _normalized(path)
        for connection in reversed(self.connections):
            if path in connection.editors and not connection.closed:
                return connection
        return None

    async def wait(
        self, find: Callable[[str], BridgeConnection | None], path: str, seconds: float | None = None
    ) -> BridgeConnection | None:
        """``find(path)``, waiting up to ``seconds`` (default: the reconnect grace) for a reloading tab."""
        deadline = time.monotonic() + (self.reconnect_grace_seconds if seconds is None else seconds)
        while True:
            holder = find(path)
            if holder is not None or time.monotonic() >= deadline:
                return holder
            await asyncio.sleep(0.1)


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
