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
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from .llm import ModelSettings

OLLAMA_DEFAULT_NUM_CTX = 4_096
PROBE_TIMEOUT_SECONDS = 2.0


async def detect_context_window(
    settings: ModelSettings, *, timeout: float = PROBE_TIMEOUT_SECONDS
) -> int | None:
    """The window the server reports for ``settings.model``, or None when no probe answers."""
    base_url = settings.resolved_base_url().rstrip("/")
    root = base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url
    headers = {**settings.extra_headers}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    async with httpx.AsyncClient(timeout=timeout, trust_env=True, headers=headers) as client:
        for probe in (_vllm, _llama_cpp, _lm_studio, _ollama):
            try:
                found = await probe(client, base_url, root, settings.model)
            except (httpx.HTTPError, ValueError, TypeError, KeyError, AttributeError):
                found = None
            if found:
                return found
    return None


async def _vllm(client: httpx.AsyncClient, base_url: str, root: str, model: str) -> int | None:
    entries = await _json(client.get(f"{base_url}/models"), "data")
    return _from_entries(entries, model, ("max_model_len",))


async def _llama_cpp(client: httpx.AsyncClient, base_url: str, root: str, model: str) -> int | None:
    props = await _json(client.get(f"{root}/props"))
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings") or {}
    return _positive(settings.get("n_ctx")) or _positive(props.get("n_ctx"))


async def _lm_studio(client: httpx.AsyncClient, base_url: str, root: str, model: str) -> int | None:
    entries = await _json(client.get(f"{root}/api/v0/models"), "data")
    return _from_entries(entries, model, ("loaded_context_length", "max_context_length"))


async def _ollama(client: httpx.AsyncClient, base_url: str, root: str, model: str) -> int | None:
    shown = await _json(client.post(f"{root}/api/show", json={"model": model}))
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
