"""A real llama.cpp ``llama-server`` serving SmolLM2-135M-Instruct on 127.0.0.1, for the tests that must see
what an actual local model server does (its model list, ``/props``, streaming, refusals, a crash).

The binary and the model come from ``scripts/build_llama_server.py`` (built once per machine, cached in the
user's cache folder; ``make llama-server`` runs it). When they are missing the tests are skipped with the
command to run — except under ``CI``, where a missing server is a failure: CI must never pass by skipping
them.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
from pathlib import Path
from types import ModuleType

import httpx
import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "build_llama_server.py"
START_TIMEOUT_SECONDS = 60.0
# The server's own cap on an answer's length when a request sets none (as the agent's requests do).
MAX_ANSWER_TOKENS = 64


def _build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_llama_server", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def binary_and_model() -> tuple[Path, Path]:
    """The built server and the GGUF; skips (fails under CI) when either is missing."""
    build = _build_script()
    binary, model = build.cached_binary(), build.cached_model()
    if binary is None or model is None:
        reason = f"llama-server is not built on this machine: run `make llama-server` (python {SCRIPT})"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(reason)
        pytest.skip(reason)
    return binary, model


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """One ``llama-server`` process; ``base_url`` is its OpenAI-compatible root (``…/v1``)."""

    def __init__(self, context: int = 8192, parallel: int = 1) -> None:
        self.binary, self.model_path = binary_and_model()
        self.context = context
        self.parallel = parallel
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    @property
    def model(self) -> str:
        """The id the server lists: the GGUF's path (llama-server names the model by its file)."""
        return str(self.model_path)

    def start(self) -> LlamaServer:
        self.process = subprocess.Popen(
            [
                str(self.binary), "-m", str(self.model_path), "-c", str(self.context), "--jinja",
                "--host", "127.0.0.1", "--port", str(self.port), "-np", str(self.parallel),
                "-t", "2", "--no-webui",
                # Short, repeatable answers: the tests stay fast and do not depend on the sampler's luck.
                "-n", str(MAX_ANSWER_TOKENS), "--temp", "0", "--seed", "1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                raise RuntimeError(f"llama-server exited with {self.process.returncode}:\n{log[-3000:]}")
            try:
                if httpx.get(f"{self.root}/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama-server did not become healthy within {START_TIMEOUT_SECONDS:g} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
