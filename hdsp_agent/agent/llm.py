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

from ..user_text import user_text
from .accumulator import AssistantMessage, StepDelta, StreamAccumulator
from .text_tools import TextToolCallParser, with_tool_descriptions

# Sent when no key is configured: local servers (Ollama, LM Studio, llama.cpp, vLLM) ignore it, and the SDK
# refuses an empty key, while some gateways reject an empty Authorization header.
PLACEHOLDER_API_KEY = "no-key"
# The window assumed when neither the configuration nor the server says.
DEFAULT_CONTEXT_WINDOW = 32_768


@dataclass
class ModelSettings:
    """One model endpoint. ``api_key`` stays on the server: it is never put in an event or a response."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    # A file holding the key, read at every request (see ``resolved_api_key``).
    api_key_file: str | None = None
    name: str = ""
    extra_headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 120.0
    max_retries: int = 3
    # Tokens; 0: ask the server (see context_window.py), else DEFAULT_CONTEXT_WINDOW.
    context_window: int = 0
    vision: bool = False
    # The tool profile (compact, standard, full); "auto" chooses by the context window.
    profile: str = "auto"
    # How tools reach the model: "native" (the request's ``tools``), "text" (described in the system prompt,
    # calls read from the answer: text_tools.py), "auto" (native unless the readiness check, the server's
    # metadata or a refusal of ``tools`` says the model cannot; tool_support.py).
    tool_calls: str = "auto"
    # Dollars per million prompt / completion tokens, for the usage breakdown's cost estimate (0: unknown).
    price_per_mtok_in: float = 0.0
    price_per_mtok_out: float = 0.0
    # Whether ``$OPENAI_API_KEY`` stands in for a missing key. False for the model saved in the sidebar: the
    # user named its URL, and a key is only ever sent to the endpoint it was saved with.
    key_from_environment: bool = True

    @property
    def label(self) -> str:
        return self.name or self.model

    def public(self) -> dict[str, Any]:
        """What the browser may see about this model."""
        return {
            "name": self.label,
            "model": self.model,
            "base_url": self.resolved_base_url(),
            "context_window": self.context_window or DEFAULT_CONTEXT_WINDOW,
            "vision": self.vision,
            "profile": self.profile,
            "tool_calls": self.tool_calls,
            "price_per_mtok_in": self.price_per_mtok_in,
            "price_per_mtok_out": self.price_per_mtok_out,
        }

    def resolved_base_url(self) -> str:
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"

    def resolved_api_key(self) -> str:
        """The key to send: ``api_key``; else the contents of ``api_key_file``, read now; else
        ``$OPENAI_API_KEY`` (unless ``key_from_environment`` is off); else a placeholder. Raises
        ``ModelError`` when the key file cannot be read.

        A key file keeps the key out of the server's environment and command line, which any process the
        server starts (a shell command, a kernel) can read in ``/proc/<pid>/environ`` and ``cmdline``; reading
        it at each request also picks up a rotated key without a restart.
        """
        if self.api_key:
            return self.api_key
        if self.api_key_file:
            return read_api_key_file(self.api_key_file)
        if not self.key_from_environment:
            return PLACEHOLDER_API_KEY
        return os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_API_KEY


# The hub's model gateway refused the request: one of the user's quotas is used up.
E_MODEL_QUOTA = "E_MODEL_QUOTA"
# The server refused a prompt longer than its context (llama.cpp, vLLM, OpenAI word it differently).
E_MODEL_CONTEXT = "E_MODEL_CONTEXT"
# The endpoint refused the request's ``tools``
# (Ollama: "registry.ollama.ai/library/x does not support tools").
E_MODEL_REFUSES_TOOLS = "E_MODEL_REFUSES_TOOLS"
_TOOLS_REFUSAL_WORDS = ("does not support tools", "tools are not supported", "tool use is not supported")
# The endpoint refused ``stream_options`` (some older servers and gateways validate fields strictly).
E_MODEL_REFUSES_USAGE = "E_MODEL_REFUSES_USAGE"
_CONTEXT_ERROR_WORDS = (
    "context size",
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
)


class ModelError(Exception):
    """A failure talking to the model, with a stable code for the UI."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


E_API_KEY_FILE = "E_API_KEY_FILE"


def read_api_key_file(path: str) -> str:
    """The key in ``path`` (``~`` expanded, surrounding whitespace dropped); ``ModelError`` when it cannot be
    read or is empty. The message names the file, never its contents."""
    location = os.path.expanduser(path)
    try:
        with open(location, encoding="utf-8") as handle:
            key = handle.read(64 * 1024).strip()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else type(error).__name__
        raise ModelError(
            E_API_KEY_FILE, user_text("cannot read the API key file %1: %2", location, reason)
        ) from None
    if not key:
        raise ModelError(E_API_KEY_FILE, user_text("the API key file %1 is empty", location))
    return key


StreamCallback = Callable[[StepDelta], None]


class ModelClient:
    def __init__(self, settings: ModelSettings) -> None:
        # Imported here: the SDK takes ~0.4 s to import, which every Jupyter server start would otherwise pay.
        import openai

        self.settings = settings
        # "native" or "text" (see ModelSettings.tool_calls); the runtime resolves "auto" before a turn, and a
        # refusal of ``tools`` switches it to "text" for the rest of this client's life.
        self.tool_mode = "text" if settings.tool_calls == "text" else "native"
        # Cleared when the endpoint refuses ``stream_options`` (usage is then estimated).
        self.usage_in_stream = True
        # trust_env: proxies and CA bundles come from the environment (HTTPS_PROXY, SSL_CERT_FILE, ...).
        # A key file is read at each request (stream), not once here.
        initial_key = PLACEHOLDER_API_KEY if settings.api_key_file and not settings.api_key else None
        self._client = openai.AsyncOpenAI(
            base_url=settings.resolved_base_url(),
            api_key=initial_key or settings.resolved_api_key(),
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
        try:
            return await self._stream_once(messages, tools, on_delta)
        except ModelError as error:
            if error.code == E_MODEL_REFUSES_TOOLS and self.tool_mode == "native" and tools:
                # The endpoint says the model cannot take tools (Ollama: "does not support tools"): describe
                # them in the prompt instead, now and for the rest of this client's life.
                self.tool_mode = "text"
                return await self._stream_once(messages, tools, on_delta)
            if error.code == E_MODEL_REFUSES_USAGE and self.usage_in_stream:
                self.usage_in_stream = False
                return await self._stream_once(messages, tools, on_delta)
            raise

    async def _stream_once(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_delta: StreamCallback
    ) -> AssistantMessage:
        if self.settings.api_key_file and not self.settings.api_key:
            self._client.api_key = self.settings.resolved_api_key()  # the SDK builds the header per request
        text_mode = self.tool_mode == "text" and bool(tools)
        request: dict[str, Any] = {"model": self.settings.model, "stream": True}
        if text_mode:
            request["messages"] = with_tool_descriptions(messages, tools)
        else:
            request["messages"] = messages
            if tools:  # vLLM answers 422 to tool_choice without tools; send neither when there are none
                request["tools"] = tools
                request["tool_choice"] = "auto"
        if self.usage_in_stream:
            # The server's own token counts for the usage breakdown (servers that refuse it: estimates).
            request["stream_options"] = {"include_usage": True}
        import openai

        accumulator = StreamAccumulator()
        parser = (
            TextToolCallParser({str(t.get("function", {}).get("name")) for t in tools}) if text_mode else None
        )
        received = 0
        try:
            stream = await self._client.chat.completions.create(**request)
            async for chunk in _chunks(stream):
                received += 1
                step = accumulator.add(chunk)
                if parser is not None and step.text:
                    parsed = parser.feed(step.text)
                    step.text, step.calls_touched = parsed.text, [*step.calls_touched, *parsed.calls_touched]
                if step.text or step.reasoning or step.calls_touched:
                    on_delta(step)
        except openai.APIError as error:
            if received and isinstance(error, openai.APIConnectionError):
                raise ModelError(
                    "E_MODEL_STREAM",
                    user_text("the model's stream broke off after %1 chunks: %2", received, error),
                ) from error
            raise _model_error(error, self.settings) from error
        except httpx.HTTPError as error:
            raise ModelError(
                "E_MODEL_STREAM", user_text("the model's stream broke off: %1", error)
            ) from error
        except ValueError as error:
            # The SDK parses each event with json.loads and lets its error through: a server that sends
            # something other than JSON mid-stream (a proxy's HTML page, a truncated line) ends here.
            raise ModelError(
                "E_MODEL_STREAM",
                user_text("the model's stream sent something that is not JSON after %1 chunks", received),
            ) from error
        answer = accumulator.result()
        if parser is None:
            return answer
        tail = parser.finish()
        if tail.text or tail.calls_touched:
            on_delta(tail)
        answer.content = parser.content
        answer.tool_calls = [*answer.tool_calls, *parser.calls]
        if answer.tool_calls:
            answer.finish_reason = "tool_calls"
        return answer


async def _chunks(stream: Any) -> AsyncIterator[Any]:
    async with stream:
        async for chunk in stream:
            yield chunk


def _model_error(error: Any, settings: ModelSettings) -> ModelError:
    import openai

    where = settings.resolved_base_url()
    if isinstance(error, openai.AuthenticationError):
        return ModelError(
            "E_MODEL_AUTH",
            user_text("the model endpoint %1 rejected the API key (401): %2", where, error.message),
        )
    if isinstance(error, openai.NotFoundError):
        return ModelError(
            "E_MODEL_NOT_FOUND",
            user_text(
                "model %1 or the endpoint was not found at %2 (404): %3",
                repr(settings.model),
                where,
                error.message,
            ),
        )
    if isinstance(error, openai.APITimeoutError):
        return ModelError(
            "E_MODEL_TIMEOUT",
            user_text("the model at %1 did not answer within %2 s", where, f"{settings.timeout:g}"),
        )
    if isinstance(error, openai.APIConnectionError):
        return ModelError(
            "E_MODEL_UNREACHABLE", user_text("cannot reach the model endpoint %1: %2", where, error)
        )
    if isinstance(error, openai.RateLimitError) and _error_type(error) == "quota_exceeded":
        # The hub's model gateway (hdsp_agent/hub/gateway) refused: its message says which limit, what to do.
        return ModelError(
            E_MODEL_QUOTA, user_text("the model gateway refused this request: %1", _error_message(error))
        )
    if isinstance(error, openai.RateLimitError):
        return ModelError(
            "E_MODEL_RATE_LIMITED",
            user_text("the model endpoint is rate limiting (429) after retries: %1", error.message),
        )
    if isinstance(error, openai.APIStatusError) and error.status_code in (400, 422):
        text = f"{error.message} {getattr(error, 'body', '')}".lower()
        if any(words in text for words in _TOOLS_REFUSAL_WORDS):
            return ModelError(
                E_MODEL_REFUSES_TOOLS,
                user_text("the model at %1 does not support tool calls: %2", where, error.message),
            )
        if "stream_options" in text:
            return ModelError(
                E_MODEL_REFUSES_USAGE, user_text("the endpoint refused stream_options: %1", error.message)
            )
    if isinstance(error, openai.APIStatusError) and error.status_code in (400, 413):
        text = f"{error.message} {getattr(error, 'body', '')}".lower()
        if "exceed_context_size" in text or any(words in text for words in _CONTEXT_ERROR_WORDS):
            return ModelError(
                E_MODEL_CONTEXT,
                user_text(
                    "the model's context window is too small for this request (HTTP %1): %2",
                    error.status_code,
                    error.message,
                ),
            )
    if isinstance(error, openai.APIStatusError):
        return ModelError(
            "E_MODEL_HTTP",
            user_text("the model endpoint answered HTTP %1: %2", error.status_code, error.message),
        )
    return ModelError("E_MODEL_STREAM", user_text("the model's stream failed: %1", error))


def _error_type(error: Any) -> str | None:
    body = getattr(error, "body", None)
    found = body.get("type") if isinstance(body, dict) else None
    return found if isinstance(found, str) else None


def _error_message(error: Any) -> str:
    body = getattr(error, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) else str(getattr(error, "message", error))
