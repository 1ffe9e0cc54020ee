"""A completion nobody waits for any more costs nothing more: when the browser drops ``POST complete`` (the
completer aborts a stale request as the user types on), the server drops its request to the model at once —
not when the model answers or the 15 s timeout ends."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import tornado.httpclient


class HeldEndpoint:
    """An OpenAI-compatible endpoint that answers ``GET /props`` with 404 and never answers a completion:
    it notes when a completion is asked and when the asker closes the connection."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.asked = threading.Event()
        self.dropped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    chunk = connection.recv(65536)
                    if not chunk:
                        if self.asked.is_set():
                            self.dropped.set()
                        return
                    buffer += chunk
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                while len(buffer) < length:
                    buffer += connection.recv(65536)
                buffer = buffer[length:]
                if head.startswith(b"GET"):
                    connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    continue
                self.asked.set()  # held: the next recv returns b"" only when the asker hangs up

    def close(self) -> None:
        self._socket.close()


@pytest.fixture
def held() -> Iterator[HeldEndpoint]:
    endpoint = HeldEndpoint()
    yield endpoint
    endpoint.close()


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], held: HeldEndpoint) -> dict[str, Any]:
    return {
        "ServerApp": {**jp_server_config["ServerApp"], "allow_unauthenticated_access": False},
        "HdspAgentApp": {"model": "m", "base_url": f"http://127.0.0.1:{held.port}/v1", "api_key": "k"},
    }


async def test_the_model_request_is_dropped_with_the_browsers(jp_fetch: Any, held: HeldEndpoint) -> None:
    body = json.dumps({"prefix": "df.", "suffix": "", "language": "python", "path": "a.ipynb"})
    asking = asyncio.ensure_future(
        # The browser gives up after 3 s and closes its connection (a stale completion aborted).
        jp_fetch("hdsp-agent", "complete", method="POST", body=body, request_timeout=3)
    )
    assert await asyncio.to_thread(held.asked.wait, 10), "the completion never reached the model"
    assert not held.dropped.is_set()
    with pytest.raises(tornado.httpclient.HTTPClientError) as gave_up:
        await asking
    assert gave_up.value.code == 599
    # Dropped at once, not when the model answers or the completer's own 15 s timeout ends.
    assert await asyncio.to_thread(held.dropped.wait, 5), "the model request outlived the browser's"
