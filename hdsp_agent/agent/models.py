"""Which models the user can talk to: the configured ones, and local servers found on this machine."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx

from .llm import ModelSettings

# Well-known local OpenAI-compatible servers, probed on loopback only.
LOCAL_SERVERS = (("Ollama", 11434), ("LM Studio", 1234), ("llama.cpp", 8080), ("vLLM", 8000))

SETUP_HELP = (
    "No model is configured. Set one in jupyter_server_config.py, e.g.\n"
    "  c.HdspAgentApp.base_url = 'http://127.0.0.1:11434/v1'   "
    "# Ollama, LM Studio, llama.cpp, vLLM, a gateway\n"
    "  c.HdspAgentApp.model = 'llama3.1'\n"
    "  c.HdspAgentApp.api_key = '...'   # if the endpoint needs one (or set OPENAI_API_KEY)\n"
    "then restart JupyterLab."
)


class ModelNotConfigured(Exception):
    pass


@dataclass
class ModelCatalog:
    models: list[ModelSettings]

    @property
    def configured(self) -> bool:
        return bool(self.models)

    def get(self, name: str | None) -> ModelSettings:
        if not self.models:
            raise ModelNotConfigured(SETUP_HELP)
        if name:
            for settings in self.models:
                if name in (settings.label, settings.model):
                    return settings
        return self.models[0]

    def public(self) -> list[dict[str, Any]]:
        return [settings.public() for settings in self.models]


def catalog_from_config(config: Any) -> ModelCatalog:
    common = {
        "timeout": config.request_timeout,
        "max_retries": config.max_retries,
        "context_window": config.context_window,
        "vision": config.vision,
        "extra_headers": dict(config.extra_headers),
    }
    models: list[ModelSettings] = []
    if config.model:
        models.append(
            ModelSettings(
                model=config.model, base_url=config.base_url or None, api_key=config.api_key or None, **common
            )
        )
    for entry in config.models:
        if not entry.get("model"):
            continue
        options = {
            **common,
            **{key: entry[key] for key in ("context_window", "vision", "timeout") if key in entry},
        }
        options["extra_headers"] = {**common["extra_headers"], **entry.get("extra_headers", {})}
        models.append(
            ModelSettings(
                model=entry["model"],
                name=entry.get("name", ""),
                base_url=entry.get("base_url") or config.base_url or None,
                api_key=entry.get("api_key") or config.api_key or None,
                **options,
            )
        )
    return ModelCatalog(models)


async def probe_local_servers(
    servers: tuple[tuple[str, int], ...] = LOCAL_SERVERS, timeout: float = 0.5
) -> list[dict[str, Any]]:
    """Local servers answering ``GET /v1/models`` in the OpenAI format, with the models they offer."""
    async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
        found = await asyncio.gather(*(_probe(client, name, port) for name, port in servers))
    return [server for server in found if server is not None]


async def _probe(client: httpx.AsyncClient, name: str, port: int) -> dict[str, Any] | None:
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        response = await client.get(f"{base_url}/models")
        payload = response.json()
    except (httpx.HTTPError, ValueError):
        return None
    if (
        response.status_code != 200
        or not isinstance(payload, dict)
        or not isinstance(payload.get("data"), list)
    ):
        return None
    models = [entry.get("id") for entry in payload["data"] if isinstance(entry, dict) and entry.get("id")]
    return {"server": name, "base_url": base_url, "models": models}
