"""A real ``jupyter server`` with hdsp-agent in a subprocess, for benchmarks and soak runs."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import tornado.websocket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class JupyterProcess:
    def __init__(
        self,
        *,
        model_url: str | None = None,
        with_agent: bool = True,
        extra: dict[str, Any] | None = None,
        server_config: dict[str, Any] | None = None,
    ) -> None:
        """``extra``: HdspAgentApp settings; ``server_config``: other sections (e.g. ``GatewayClient``)."""
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.scratch = tempfile.TemporaryDirectory(prefix="hdsp-jupyter-")
        self.root = Path(self.scratch.name) / "root"
        self.root.mkdir()
        config: dict[str, Any] = {
            **(server_config or {}),
            "ServerApp": {"jpserver_extensions": {"hdsp_agent": with_agent}},
            "HdspAgentApp": {
                "store_path": str(Path(self.scratch.name) / "sessions.sqlite3"),  # `extra` may override
                "max_retries": 0,
                "probe_local_models": False,
                **({"model": "scripted", "base_url": model_url} if model_url else {}),
                **(extra or {}),
            },
        }
        config_dir = Path(self.scratch.name) / "config"
        config_dir.mkdir()
        (config_dir / "jupyter_server_config.json").write_text(json.dumps(config))
        self.env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(config_dir),
            "JUPYTER_DATA_DIR": str(Path(self.scratch.name) / "data"),
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = Path(self.scratch.name) / "server.log"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    def start(self) -> float:
        """Start and wait until it answers; returns the seconds it took."""
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_server",
                "--no-browser",
                f"--port={self.port}",
                "--ip=127.0.0.1",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root}",
                "--allow-root",
            ],
            env=self.env,
            stdout=subprocess.DEVNULL,
            # The server's log, kept beside its root for a failing test to show (appended across restarts).
            stderr=self.log_path.open("ab"),
        )
        while True:
            try:
                # /api/contents: authenticated and served whatever the kernel manager (a gateway has no
                # /api/status).
                ready = httpx.get(f"{self.base}/api/contents?content=0", headers=self.headers, timeout=1)
                if ready.status_code == 200:
                    return time.perf_counter() - started
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError("jupyter server exited during startup")
            time.sleep(0.02)

    def rss_mb(self) -> float:
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def restart(self) -> float:
        """Stop the server (SIGTERM, as a user's Ctrl-C or a service stop) and start it again on the same
        root, data dir, config and store; a new port (the old one may linger). Returns the start's seconds."""
        assert self.process is not None
        self.process.terminate()
        self.process.wait(30)
        self.port = free_port()
        return self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.scratch.cleanup()

    async def create_session(self, client: httpx.AsyncClient) -> str:
        response = await client.post(f"{self.base}/hdsp-agent/sessions", headers=self.headers, json={})
        response.raise_for_status()
        return str(response.json()["id"])

    async def connect(self, session_id: str) -> Any:
        url = f"ws://127.0.0.1:{self.port}/hdsp-agent/sessions/{session_id}/ws"
        request = tornado.httpclient.HTTPRequest(url, headers=self.headers)
        return await tornado.websocket.websocket_connect(request, max_message_size=64 * 1024 * 1024)


async def run_turn_over_ws(ws: Any, content: str, timeout: float = 120) -> list[dict[str, Any]]:
    """Send a message and collect events until the turn ends."""
    ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    ws.write_message(json.dumps({"type": "send", "content": content}))
    events = []
    while True:
        raw = await asyncio.wait_for(ws.read_message(), timeout)
        if raw is None:
            raise RuntimeError("socket closed mid-turn")
        event = json.loads(raw)
        events.append(event)
        if event.get("type") == "turn.end":
            return events


import tornado.httpclient  # noqa: E402  (used above; imported late to keep the public names first)
