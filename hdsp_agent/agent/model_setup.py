"""The model a user sets up in the sidebar: saved on the server, effective at once, the key never sent back.

The file lives in the user's Jupyter config dir (``hdsp_agent/model.json``, mode 0600) next to ``mcp.json``;
the
agent's tools cannot write there (it is a protected path). The browser learns only whether a key is set.

A key is only ever sent to the endpoint it was saved with: asking for the models of another URL does not use
it,
and keys from the server's configuration or environment are never sent to a URL the browser names.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
from jupyter_core.paths import jupyter_config_dir

from ..user_text import user_text

FILE_NAME = "model.json"
# Listing models: a local server answers in well under this, a remote one too.
LIST_TIMEOUT_SECONDS = 10.0
TOOL_CALL_MODES = ("auto", "native", "text")


class EndpointError(Exception):
    """The endpoint could not be used; the message says exactly why (shown to the user as it is)."""


@dataclass(frozen=True)
class SavedModel:
    base_url: str
    model: str
    api_key: str = ""
    # "auto", "native" or "text": how the model calls tools (ModelSettings.tool_calls).
    tool_calls: str = "auto"
    # The model for inline completion ("": the chat model): a name on the same endpoint or a configured one.
    completion_model: str = ""

    def public(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "model": self.model,
            "key_set": bool(self.api_key),
            "tool_calls": self.tool_calls,
            **({"completion_model": self.completion_model} if self.completion_model else {}),
        }


def default_setup_path() -> Path:
    return Path(jupyter_config_dir()) / "hdsp_agent" / FILE_NAME


class UserModelFile:
    """Reads and writes the user's saved model. Unreadable or malformed content counts as nothing saved."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_setup_path()

    def load(self) -> SavedModel | None:
        try:
            payload = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(payload, dict) or not payload.get("base_url") or not payload.get("model"):
            return None
        mode = payload.get("tool_calls")
        return SavedModel(
            str(payload["base_url"]),
            str(payload["model"]),
            str(payload.get("api_key") or ""),
            mode if mode in TOOL_CALL_MODES else "auto",
            str(payload.get("completion_model") or ""),
        )

    def save(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        tool_calls: str = "auto",
        completion_model: str = "",
    ) -> SavedModel:
        """Save; ``api_key=None`` keeps the key saved for the same endpoint, ``""`` removes it."""
        base_url, model = normalize_base_url(base_url), model.strip()
        if not base_url or not model:
            raise EndpointError("Both the endpoint URL and the model are needed.")
        if api_key is None:
            previous = self.load()
            api_key = previous.api_key if previous and previous.base_url == base_url else ""
        if tool_calls not in TOOL_CALL_MODES:
            raise EndpointError(f"tool_calls must be one of {', '.join(TOOL_CALL_MODES)}.")
        saved = SavedModel(base_url, model, api_key.strip(), tool_calls, completion_model.strip())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        # Created 0600 from the start: the key is never readable by others, not even for a moment.
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(asdict(saved), handle, indent=2)
        os.chmod(partial, 0o600)
        os.replace(partial, self.path)
        return saved

    def key_for(self, base_url: str) -> str:
        """The saved key, only for the endpoint it was saved with."""
        saved = self.load()
        return saved.api_key if saved and saved.base_url == normalize_base_url(base_url) else ""


def normalize_base_url(base_url: str) -> str:
    url = base_url.strip().rstrip("/")
    if url and not url.startswith(("http://", "https://")):
        raise EndpointError(f"{base_url!r} is not an http(s) URL (e.g. http://127.0.0.1:11434/v1).")
    return url


def _headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _describe(error: Exception, base_url: str) -> str:
    if isinstance(error, httpx.ConnectError):
        return f"Could not connect to {base_url}: {error}. Is the server running?"
    if isinstance(error, httpx.TimeoutException):
        return f"{base_url} did not answer in time."
    return f"Request to {base_url} failed: {error}"


def _status_error(response: httpx.Response) -> str:
    try:
        payload = response.json()
        detail = payload.get("error", payload) if isinstance(payload, dict) else payload
        if isinstance(detail, dict):
            detail = detail.get("message") or json.dumps(detail)
    except ValueError:
        detail = response.text[:500]
    return f"{response.request.url} answered HTTP {response.status_code}: {detail}"


async def endpoint_models(
    base_url: str, api_key: str = "", timeout: float = LIST_TIMEOUT_SECONDS
) -> list[str]:
    """The model ids an OpenAI-compatible endpoint lists at ``GET {base_url}/models``."""
    base_url = normalize_base_url(base_url)
    try:
        async with httpx.AsyncClient(timeout=timeout, trust_env=True) as client:
            response = await client.get(f"{base_url}/models", headers=_headers(api_key))
    except httpx.HTTPError as error:
        raise EndpointError(_describe(error, base_url)) from error
    if response.status_code != 200:
        raise EndpointError(_status_error(response))
    try:
        entries = response.json().get("data")
    except (ValueError, AttributeError):
        entries = None
    if not isinstance(entries, list):
        raise EndpointError(f"{base_url}/models did not answer with an OpenAI-style model list.")
    return [str(entry["id"]) for entry in entries if isinstance(entry, dict) and entry.get("id")]


# The variables a model key usually comes in; any variable holding a key in use counts too.
KEY_VARIABLES = ("OPENAI_API_KEY",)


def inherited_key_warning(environ: Mapping[str, str], keys_in_use: Iterable[str]) -> str | None:
    """A warning when the server's own environment holds a model key: every process it starts — kernels
    included, as Jupyter starts them with the server's environment — inherits it (hdsp-agent removes it from
    shell commands, MCP servers and the programs its tools start, but cannot from kernels). ``None`` when the
    environment holds none."""
    keys = {key for key in keys_in_use if len(key) >= 8}
    names = sorted(
        name for name, value in environ.items() if value and (name in KEY_VARIABLES or value in keys)
    )
    if not names:
        return None
    return user_text(
        "The server was started with %1 in its environment, so every kernel it starts inherits the key. "
        "Give the key as a file instead (c.HdspAgentApp.api_key_file) and start the server without it.",
        ", ".join(f"${name}" for name in names),
    )
