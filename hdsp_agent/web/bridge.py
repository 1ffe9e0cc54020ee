"""``/hdsp-agent/notebooks/ws``: the sidebar's NotebookBridge, so notebook tools change the notebook the user
has open instead of its file (see ``documents/live.py`` for the protocol).

Behind Jupyter authentication like every route; the handler only moves JSON between the socket and
``LiveNotebooks``.
"""

from __future__ import annotations

import json
from typing import Any

import tornado.web
import tornado.websocket
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin

from ..documents.bridge_connection import BridgeConnection
from .routes import _AgentMixin, route

# A tab answers a read with the whole notebook, outputs included: tornado's 10 MiB default would close the
# socket on the first notebook with a large plot or log in it.
MAX_NOTEBOOK_MESSAGE_BYTES = 512 * 1024 * 1024


class NotebookBridgeHandler(_AgentMixin, WebSocketMixin, tornado.websocket.WebSocketHandler, JupyterHandler):  # type: ignore[misc]
    connection: BridgeConnection | None = None

    @property
    def max_message_size(self) -> int:
        return int(self.settings.get("websocket_max_message_size") or MAX_NOTEBOOK_MESSAGE_BYTES)

    @ws_authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        await super().get(*args, **kwargs)

    def open(self, *args: Any, **kwargs: Any) -> None:
        self.connection = self.agent.live_notebooks.connect(self._send)

    def on_message(self, message: str | bytes) -> None:
        try:
            payload = json.loads(message)
        except (json.JSONDecodeError, UnicodeDecodeError):
            self.log.warning("hdsp-agent notebook bridge: a message that is not JSON was ignored")
            return
        if isinstance(payload, dict) and self.connection is not None:
            self.connection.receive(payload, len(message))

    def _send(self, payload: dict[str, Any]) -> int:
        text = json.dumps(payload)
        try:
            self.write_message(text)
        except tornado.websocket.WebSocketClosedError:
            self.on_close()
        return len(text)

    def on_close(self) -> None:
        if self.connection is not None:
            self.agent.live_notebooks.disconnect(self.connection)
            self.connection = None


def build_bridge_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [(route("notebooks/ws"), NotebookBridgeHandler)]
