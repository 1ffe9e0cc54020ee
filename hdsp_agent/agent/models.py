"""Which models the user can talk to: the configured ones, and local servers found on this machine."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from ..user_text import join_texts, user_text
from .llm import ModelSettings
from .model_setup import EndpointError, SavedModel, UserModelFile, endpoint_models

# Well-known local OpenAI-compatible servers, probed on loopback only.
LOCAL_SERVERS = (("Ollama", 11434), ("LM Studio", 1234), ("llama.cpp", 8080), ("vLLM", 8000))

ADMIN_CONFIG_EXAMPLE = (
    "  c.HdspAgentApp.base_url = 'http://127.0.0.1:11434/v1'   # Ollama, LM Studio, llama.cpp, vLLM, ...\n"
    "  c.HdspAgentApp.model = 'llama3.1'   # optional: without it, the endpoint's own model list is used\n"
    "  c.HdspAgentApp.api_key_file = '/path/to/key'   # if the endpoint needs a key (or OPENAI_API_KEY)"
)
# The first line is what the sidebar shows (translated); the rest is for an administrator reading a log.
SETUP_HELP = join_texts(
    "\n",
    [
        user_text("No model is configured yet: choose one in the hdsp-agent sidebar."),
        user_text("An administrator can also set one in jupyter_server_config.py:"),
        ADMIN_CONFIG_EXAMPLE,
    ],
)


DISCOVERY_RETRY_SECONDS = 15.0
# What a ``models`` entry may set for itself (else the top-level setting applies).
MODEL_ENTRY_OPTIONS = (
    "context_window", "vision", "timeout", "profile", "tool_calls", "price_per_mtok_in", "price_per_mtok_out",
)  # fmt: skip


class ModelNotConfigured(Exception):
    pass


@dataclass
class ModelCatalog:
    """The models the user can talk to. One object for the server's life: the sidebar's model setup replaces
    its
    contents in place, so everything holding it (sessions, the /v1 endpoint) sees the change at once."""

    models: list[ModelSettings]
    # An endpoint known without a model name (``OPENAI_BASE_URL`` alone): its own model list fills ``models``.
    endpoint: ModelSettings | None = None
    _discovery_error: str = field(default="", repr=False)
    # After a failed listing, when to ask the endpoint again (a down server must not slow every request).
    _retry_at: float = field(default=0.0, repr=False)

    @property
    def configured(self) -> bool:
        return bool(self.models)

    def get(self, name: str | None) -> ModelSettings:
        if not self.models:
            raise ModelNotConfigured(self._discovery_error or SETUP_HELP)
        return self.find(name) or self.models[0]

    def find(self, name: str | None) -> ModelSettings | None:
        for settings in self.models if name else ():
            if name in (settings.label, settings.model):
                return settings
        return None

    def setup_message(self) -> str:
        return self._discovery_error or SETUP_HELP

    def replace_with(self, other: ModelCatalog) -> None:
        self.models, self.endpoint = list(other.models), other.endpoint
        self._discovery_error, self._retry_at = "", 0.0

    async def discover(self) -> None:
        """With an endpoint but no model configured, list the endpoint's models (until it answers once)."""
        if self.models or self.endpoint is None or time.monotonic() < self._retry_at:
            return
        endpoint = self.endpoint
        try:
            names = await endpoint_models(endpoint.resolved_base_url(), endpoint.resolved_api_key())
        except EndpointError as error:
            self._discovery_error = join_texts(
                "\n",
                [
                    user_text("No model is configured, and the endpoint's model list failed: %1", error),
                    SETUP_HELP,
                ],
            )
            self._retry_at = time.monotonic() + DISCOVERY_RETRY_SECONDS
            return
        if not names:
            self._discovery_error = user_text("%1 lists no models.", endpoint.resolved_base_url())
        self.models = [replace(endpoint, model=name) for name in names]

    def public(self) -> list[dict[str, Any]]:
        return [settings.public() for settings in self.models]


def catalog_from_config(config: Any, saved: SavedModel | None = None) -> ModelCatalog:
    """The configured models; the user's own (saved in the sidebar) first when the administrator allows it,
    and
    an endpoint without a model name (``base_url`` or ``OPENAI_BASE_URL`` alone) to list models from."""
    if saved is None and getattr(config, "allow_user_models", False):
        saved = UserModelFile().load()
    common = {
        "timeout": config.request_timeout,
        "max_retries": config.max_retries,
        "context_window": config.context_window,
        "vision": config.vision,
        "profile": config.profile,
        "tool_calls": getattr(config, "tool_calls", "auto"),
        "extra_headers": dict(config.extra_headers),
    }
    models: list[ModelSettings] = []
    if saved is not None:
        # Its own key or none: never $OPENAI_API_KEY, nor the administrator's headers (they may carry a
        # gateway's token), to a URL the browser named.
        models.append(
            ModelSettings(
                model=saved.model,
                base_url=saved.base_url,
                api_key=saved.api_key or None,
                key_from_environment=False,
                **{**common, "extra_headers": {}, "tool_calls": saved.tool_calls},
            )
        )
    if config.model:
        models.append(
            ModelSettings(
                model=config.model,
                base_url=config.base_url or None,
                api_key=config.api_key or None,
                api_key_file=config.api_key_file or None,
                **common,
            )
        )
    for entry in config.models:
        if not entry.get("model"):
            continue
        options: dict[str, Any] = {
            **common,
            **{key: entry[key] for key in MODEL_ENTRY_OPTIONS if key in entry},
        }
        options["extra_headers"] = {**common["extra_headers"], **entry.get("extra_headers", {})}
        models.append(
            ModelSettings(
                model=entry["model"],
                name=entry.get("name", ""),
                base_url=entry.get("base_url") or config.base_url or None,
                **_key_options(entry, config),
                **options,
            )
        )
    endpoint = None
    base_url = config.base_url or os.environ.get("OPENAI_BASE_URL", "")
    if not models and base_url:
        # base_url stays None for OPENAI_BASE_URL: it is read when used, like the model client does.
        endpoint = ModelSettings(
            model="",
            base_url=config.base_url or None,
            api_key=config.api_key or None,
            api_key_file=config.api_key_file or None,
            **common,
        )
    return ModelCatalog(models, endpoint=endpoint)


def _key_options(entry: dict[str, Any], config: Any) -> dict[str, Any]:
    """A model entry's own key or key file; without either, the top-level ones."""
    if entry.get("api_key") or entry.get("api_key_file"):
        return {"api_key": entry.get("api_key") or None, "api_key_file": entry.get("api_key_file") or None}
    return {"api_key": config.api_key or None, "api_key_file": config.api_key_file or None}


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
