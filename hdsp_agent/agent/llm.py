"""The model client: ``openai.AsyncOpenAI`` against any OpenAI-compatible endpoint, always streaming.

Retries with backoff on 429/5xx/connection errors are the SDK's (it honours ``Retry-After``); failures that
reach us are mapped to ``ModelError`` with a code and a message a person can act on.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from .accumulator import AssistantMessage, StepDelta, StreamAccumulator

# Sent when no key is configured: local servers (Ollama, LM Studio, llama.cpp, vLLM) ignore it, and the SDK
# refuses an empty key, while some gateways reject an empty Authorization header.
PLACEHOLDER_API_KEY = "no-key"


@dataclass
class ModelSettings:
    """One model endpoint. ``api_key`` stays on the server: it is never put in an event or a response."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    name: str = ""
    extra_headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 120.0
    max_retries: int = 3
    context_window: int = 32_768
    vision: bool = False

    @property
    def label(self) -> str:
        return self.name or self.model

    def public(self) -> dict[str, Any]:
        """What the browser may see about this model."""
        return {
            "name": self.label,
            "model": self.model,
            "base_url": self.resolved_base_url(),
            "context_window": self.context_window,
            "vision": self.vision,
        }

    def resolved_base_url(self) -> str:
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"

    def resolved_api_key(self) -> str:
        return self.api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_API_KEY


class ModelError(Exception):
    """A failure talking to the model, with a stable code for the UI."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


StreamCallback = Callable[[StepDelta], None]


class ModelClient:
    def __init__(self, settings: ModelSettings) -> None:
        # Imported here: the SDK takes ~0.4 s to import, which every Jupyter server start would otherwise pay.
        import openai

        self.settings = settings
        # trust_env: proxies and CA bundles come from the environment (HTTPS_PROXY, SSL_CERT_FILE, ...).
        self._client = openai.AsyncOpenAI(
            base_url=settings.resolved_base_url(),
            api_key=settings.resolved_api_key(),
            default_headers=settings.extra_headers or None,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )

    async def close(self) -> None:
        await self._client.close()

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_delta: StreamCallback
    ) -> AssistantMessage:
        """Stream one assistant message, calling ``on_delta`` for each piece; raises ``ModelError``."""
        request: dict[str, Any] = {"model": self.settings.model, "messages": messages, "stream": True}
        if tools:  # vLLM answers 422 to tool_choice without tools; send neither when there are none
            request["tools"] = tools
            request["tool_choice"] = "auto"
        import openai

        accumulator = StreamAccumulator()
        received = 0
        try:
            stream = await self._client.chat.completions.create(**request)
            async for chunk in _chunks(stream):
                received += 1
                step = accumulator.add(chunk)
                if step.text or step.reasoning or step.calls_touched:
                    on_delta(step)
        except openai.APIError as error:
            if received and isinstance(error, openai.APIConnectionError):
                raise ModelError(
                    "E_MODEL_STREAM", f"the model's stream broke off after {received} chunks: {error}"
                ) from error
            raise _model_error(error, self.settings) from error
        except httpx.HTTPError as error:
            raise ModelError("E_MODEL_STREAM", f"the model's stream broke off: {error}") from error
        return accumulator.result()


async def _chunks(stream: Any) -> AsyncIterator[Any]:
    async with stream:
        async for chunk in stream:
            yield chunk


def _model_error(error: Any, settings: ModelSettings) -> ModelError:
    import openai

    where = settings.resolved_base_url()
    if isinstance(error, openai.AuthenticationError):
        return ModelError(
            "E_MODEL_AUTH", f"the model endpoint {where} rejected the API key (401): {error.message}"
        )
    if isinstance(error, openai.NotFoundError):
        return ModelError(
            "E_MODEL_NOT_FOUND",
            f"model {settings.model!r} or the endpoint was not found at {where} (404): {error.message}",
        )
    if isinstance(error, openai.APITimeoutError):
        return ModelError(
            "E_MODEL_TIMEOUT", f"the model at {where} did not answer within {settings.timeout:g} s"
        )
    if isinstance(error, openai.APIConnectionError):
        return ModelError("E_MODEL_UNREACHABLE", f"cannot reach the model endpoint {where}: {error}")
    if isinstance(error, openai.RateLimitError):
        return ModelError(
            "E_MODEL_RATE_LIMITED",
            f"the model endpoint is rate limiting (429) after retries: {error.message}",
        )
    if isinstance(error, openai.APIStatusError):
        return ModelError(
            "E_MODEL_HTTP", f"the model endpoint answered HTTP {error.status_code}: {error.message}"
        )
    return ModelError("E_MODEL_STREAM", f"the model's stream failed: {error}")
