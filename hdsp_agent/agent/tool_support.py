"""Whether a model can make native tool calls, from what its server says about it (no request to the model).

- Ollama: ``POST /api/show {"model"}`` → ``capabilities`` (``["completion", "tools", …]``); no ``tools``: no
  native calls (Ollama would answer HTTP 400 "does not support tools").
- llama.cpp: ``GET /props`` → ``chat_template_caps.supports_tool_calls`` (its model list always says
  ``"capabilities": ["completion"]``, tool-capable or not, so the chat template's capabilities are what
  counts).

None when the server says nothing either way: the readiness check, or a refusal of ``tools``, decides then.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from .llm import ModelSettings

PROBE_TIMEOUT_SECONDS = 2.0


async def server_tool_support(
    settings: ModelSettings, client: httpx.AsyncClient, timeout: float = PROBE_TIMEOUT_SECONDS
) -> bool | None:
    """True / False when the server states whether the model takes tools, else None."""
    base_url = settings.resolved_base_url().rstrip("/")
    root = base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url
    headers = {**settings.extra_headers}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"

    async def ollama() -> bool | None:
        response = await client.post(
            f"{root}/api/show", json={"model": settings.model}, headers=headers, timeout=timeout
        )
        shown = response.json() if response.status_code == 200 else None
        capabilities = shown.get("capabilities") if isinstance(shown, dict) else None
        return "tools" in capabilities if isinstance(capabilities, list) else None

    async def llama_cpp() -> bool | None:
        response = await client.get(f"{root}/props", headers=headers, timeout=timeout)
        props: Any = response.json() if response.status_code == 200 else None
        caps = props.get("chat_template_caps") if isinstance(props, dict) else None
        value = caps.get("supports_tool_calls") if isinstance(caps, dict) else None
        return value if isinstance(value, bool) else None

    async def attempt(probe: Any) -> bool | None:
        try:
            result: bool | None = await probe()
            return result
        except (httpx.HTTPError, ValueError, TypeError, AttributeError):
            return None

    found = await asyncio.gather(attempt(ollama), attempt(llama_cpp))
    return next((verdict for verdict in found if verdict is not None), None)
