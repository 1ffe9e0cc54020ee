"""The model's context window, asked of the server that runs it.

Local servers each say it their own way, and none in the OpenAI API:

- vLLM: ``GET /v1/models`` → ``data[].max_model_len``.
- llama.cpp: ``GET /props`` → ``default_generation_settings.n_ctx`` (newer builds also a top-level ``n_ctx``).
- LM Studio: ``GET /api/v0/models`` → ``data[].loaded_context_length`` or ``max_context_length``.
- Ollama: ``POST /api/show {"model"}`` → ``parameters`` (``num_ctx N``) or
  ``model_info["<arch>.context_length"]``. Ollama runs a model with ``num_ctx`` (its default, 4096, unless the
  Modelfile or request sets it), not with the model's trained length, and cuts the front of a longer prompt
  silently: without ``num_ctx`` we assume 4096.

Each probe is short and failures are quiet: a server that answers none of them gets the configured default.
The probes run at once and the first in the order above that answers wins: a new chat waits for one round
trip (the slowest probe), not for up to four in a row, before its first request. The runtime hands in one
long-lived HTTP client: making a client loads the CA bundle, which costs more than the probes themselves.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from .llm import ModelSettings

OLLAMA_DEFAULT_NUM_CTX = 4_096
PROBE_TIMEOUT_SECONDS = 2.0


Request = Callable[..., Awaitable[httpx.Response]]


async def detect_context_window(
    settings: ModelSettings,
    *,
    timeout: float = PROBE_TIMEOUT_SECONDS,
    client: httpx.AsyncClient | None = None,
) -> int | None:
    """The window the server reports for ``settings.model``, or None when no probe answers."""
    if client is None:
        async with httpx.AsyncClient(trust_env=True) as own:
            return await detect_context_window(settings, timeout=timeout, client=own)
    base_url = settings.resolved_base_url().rstrip("/")
    root = base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url
    headers = {**settings.extra_headers}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"

    def request(method: str, url: str, **options: Any) -> Awaitable[httpx.Response]:
        return client.request(method, url, headers=headers, timeout=timeout, **options)

    async def attempt(probe: Callable[[Request, str, str, str], Awaitable[int | None]]) -> int | None:
        try:
            return await probe(request, base_url, root, settings.model)
        except (httpx.HTTPError, ValueError, TypeError, KeyError, AttributeError):
            return None

    found = await asyncio.gather(*(attempt(probe) for probe in (_vllm, _llama_cpp, _lm_studio, _ollama)))
    return next((window for window in found if window), None)


async def _vllm(request: Request, base_url: str, root: str, model: str) -> int | None:
    entries = await _json(request("GET", f"{base_url}/models"), "data")
    return _from_entries(entries, model, ("max_model_len",))


async def _llama_cpp(request: Request, base_url: str, root: str, model: str) -> int | None:
    props = await _json(request("GET", f"{root}/props"))
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings") or {}
    return _positive(settings.get("n_ctx")) or _positive(props.get("n_ctx"))


async def _lm_studio(request: Request, base_url: str, root: str, model: str) -> int | None:
    entries = await _json(request("GET", f"{root}/api/v0/models"), "data")
    return _from_entries(entries, model, ("loaded_context_length", "max_context_length"))


async def _ollama(request: Request, base_url: str, root: str, model: str) -> int | None:
    shown = await _json(request("POST", f"{root}/api/show", json={"model": model}))
    if not isinstance(shown, dict) or not shown.get("model_info"):
        return None
    match = re.search(r"^\s*num_ctx\s+(\d+)", str(shown.get("parameters") or ""), re.MULTILINE)
    if match:
        return int(match.group(1))
    trained = next(
        (
            _positive(value)
            for key, value in shown["model_info"].items()
            if str(key).endswith(".context_length")
        ),
        None,
    )
    return min(trained, OLLAMA_DEFAULT_NUM_CTX) if trained else OLLAMA_DEFAULT_NUM_CTX


async def _json(pending: Any, key: str | None = None) -> Any:
    response = await pending
    if response.status_code != 200:
        return None
    payload = response.json()
    if key is None:
        return payload
    return payload.get(key) if isinstance(payload, dict) else None


def _from_entries(entries: Any, model: str, fields: tuple[str, ...]) -> int | None:
    if not isinstance(entries, list):
        return None
    # The entry for our model, else the only one (servers that serve one model name it as they like).
    matching = [e for e in entries if isinstance(e, dict) and model in (e.get("id"), e.get("name"))]
    if not matching and len(entries) == 1 and isinstance(entries[0], dict):
        matching = entries
    for entry in matching:
        for field in fields:
            value = _positive(entry.get(field))
            if value:
                return value
    return None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
