"""Reading the model's context window from the server that runs it (each local server says it its own way)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.agent.context_window import OLLAMA_DEFAULT_NUM_CTX, detect_context_window
from hdsp_agent.agent.llm import DEFAULT_CONTEXT_WINDOW, ModelSettings
from hdsp_agent.agent.models import ModelCatalog
from hdsp_agent.assembly import assemble
from hdsp_agent.permissions.decision import ReadOnlyPolicy
from hdsp_agent.tools.base import ToolContext

Routes = dict[tuple[str, str], dict[str, Any]]


@contextmanager
def server(routes: Routes) -> Iterator[str]:
    """A server answering ``routes[(method, path)]`` with JSON and 404 otherwise; yields its /v1 base URL."""
    seen: list[tuple[str, str, dict[str, Any]]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            seen.append((method, self.path, body))
            payload = routes.get((method, self.path))
            data = json.dumps(payload if payload is not None else {"error": "not found"}).encode()
            self.send_response(200 if payload is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


CASES: dict[str, tuple[Routes, int]] = {
    "vllm": ({("GET", "/v1/models"): {"data": [{"id": "m", "max_model_len": 8192}]}}, 8192),
    "llama.cpp": ({("GET", "/props"): {"default_generation_settings": {"n_ctx": 4096}}}, 4096),
    "lm studio": (
        {
            ("GET", "/v1/models"): {"data": [{"id": "m"}]},
            ("GET", "/api/v0/models"): {
                "data": [{"id": "other", "max_context_length": 1}, {"id": "m", "max_context_length": 32768}]
            },
        },
        32768,
    ),
    "ollama num_ctx": (
        {
            ("POST", "/api/show"): {
                "parameters": "num_ctx 12288\nstop <eot>",
                "model_info": {"llama.context_length": 131072},
            }
        },
        12288,
    ),
    "ollama default": (
        {("POST", "/api/show"): {"parameters": "", "model_info": {"qwen2.context_length": 32768}}},
        OLLAMA_DEFAULT_NUM_CTX,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_the_window_is_read_from_the_server(case: str) -> None:
    routes, expected = CASES[case]
    with server(routes) as base_url:
        assert await detect_context_window(ModelSettings(model="m", base_url=base_url)) == expected


async def test_a_server_that_says_nothing_gets_the_default_and_the_configuration_wins() -> None:
    with server({("GET", "/props"): {"default_generation_settings": {"n_ctx": 4096}}}) as base_url:
        quiet = ModelSettings(model="m", base_url=base_url.replace("/v1", "/nothing/v1"))
        configured = ModelSettings(model="m", base_url=base_url, context_window=100_000)
        runtime = assemble(
            None,
            Path("."),
            lambda **overrides: ToolContext(root_dir=".", **overrides),
            tools=[],
            policy=ReadOnlyPolicy(),
            models=ModelCatalog([quiet, configured]),
        ).runtime
        assert await detect_context_window(quiet) is None
        assert await runtime.context_window(quiet) == DEFAULT_CONTEXT_WINDOW
        assert await runtime.context_window(configured) == 100_000
        assert runtime.profile(configured, 100_000) == "full"
        assert runtime.profile(ModelSettings(model="m", profile="compact"), 100_000) == "compact"
