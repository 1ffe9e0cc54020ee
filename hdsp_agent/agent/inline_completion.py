"""Inline completion: the ghost text JupyterLab's inline completer shows in a cell or a file editor.

One short, non-streamed model request per pause in typing. Three ways to ask, tried in this order the first
time an endpoint is used, and the one that worked is kept for that endpoint (``InlineCompleter.modes``):

- ``infill``: llama.cpp's ``/infill`` (``input_prefix``, ``input_suffix``, ``input_extra``), when the server
  answers llama.cpp's ``/props``: its ``/v1/completions`` takes no suffix;
- ``fim``: ``/v1/completions`` with ``suffix`` (Ollama, OpenAI's and most servers' legacy completions);
- ``chat``: ``/v1/chat/completions`` with the code and a cursor mark, for endpoints that only chat.

What is sent is bounded (the prefix's end, the suffix's start, the nearest cells above, a few hundred names)
and redacted like a tool's result (``SecretRedactor``: the server's keys and tokens, credentials in URLs and
headers); a file whose name says it holds secrets (``.env``, keys) is never sent at all. Keys stay here.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from ..permissions.paths import is_sensitive
from ..tools.redaction import SecretRedactor
from .llm import ModelError, ModelSettings
from .models import ModelCatalog

# What one request carries at most (characters): enough for a few screens of code around the cursor.
PREFIX_CHARS = 6_000
SUFFIX_CHARS = 2_000
CELLS_ABOVE_CHARS = 4_000
VARIABLE_NAMES = 200
MAX_TOKENS = 96
# A completion is worth nothing after a few seconds: the user has typed on.
TIMEOUT_SECONDS = 15.0
MODES = ("infill", "fim", "chat")
# Answers that mean "this endpoint does not do that", not "this request failed".
_UNSUPPORTED = {400, 404, 405, 422, 501}
_FENCE = re.compile(r"^```[\w+-]*\n?|\n?```\s*$")

CHAT_SYSTEM = (
    "You are a code completion engine. The user sends a {language} file with the mark <CURSOR> where the "
    "cursor is. Reply with only the text to insert at <CURSOR>: no explanation, no code fences, nothing "
    "that is already before or after the cursor. Reply with nothing if nothing fits."
)


@dataclass(frozen=True)
class CompletionContext:
    """What the browser sends about the cursor: the text before and after it in the cell or file, the
    language, the document's path, the cells above (nearest last) and the kernel's variable names."""

    prefix: str
    suffix: str = ""
    language: str = "python"
    path: str = ""
    cells_above: tuple[str, ...] = ()
    variables: tuple[str, ...] = ()


@dataclass(frozen=True)
class Completion:
    text: str
    mode: str  # which way it was asked ("infill", "fim", "chat"), or "" when nothing was asked
    model: str = ""


class SensitiveDocument(Exception):
    """The document's name says it holds secrets: nothing of it goes to the model."""


@dataclass
class InlineCompleter:
    """Completions from the configured completion model (``completion_model``: a model's name from the
    catalog, or a name on the chat model's endpoint), else the chat model."""

    models: ModelCatalog
    # The server's secrets (``known_secrets``): read once per request, for every part of it.
    secrets: Callable[[], Iterable[str]] = lambda: ()
    completion_model: Callable[[], str] = lambda: ""
    # Endpoint (base URL + model) → the mode that answered there.
    modes: dict[str, str] = field(default_factory=dict)
    _clients: dict[tuple[str, str], httpx.AsyncClient] = field(default_factory=dict, repr=False)

    def settings(self) -> ModelSettings:
        """The model completions come from (raises ``ModelNotConfigured`` when there is none)."""
        name = self.completion_model().strip()
        if name:
            found = self.models.find(name)
            if found is not None:
                return found
            # A name the catalog does not list: that model on the chat model's endpoint (a small local model
            # served next to the big one, as Ollama does).
            return replace(self.models.get(None), model=name, name="")
        return self.models.get(None)

    async def complete(self, context: CompletionContext) -> Completion:
        if context.path and is_sensitive(context.path):
            raise SensitiveDocument(context.path)
        settings = self.settings()
        context = self._bounded(context)
        key = f"{settings.resolved_base_url().rstrip('/')}|{settings.model}"
        known = self.modes.get(key)
        for mode in (known,) if known else await self._candidates(settings):
            text = await self._ask(mode, settings, context)
            if text is None:  # not supported here: the next way
                continue
            self.modes[key] = mode
            return Completion(_clean(text, context), mode, settings.label)
        return Completion("", "", settings.label)

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    def _bounded(self, context: CompletionContext) -> CompletionContext:
        snapshot = list(self.secrets())
        redact = SecretRedactor(lambda: snapshot).redact
        above: list[str] = []
        room = CELLS_ABOVE_CHARS
        for cell in reversed(context.cells_above):  # the nearest first, until the budget is spent
            if room <= 0:
                break
            above.insert(0, cell[-room:])
            room -= len(cell) + 2
        return replace(
            context,
            prefix=redact(context.prefix[-PREFIX_CHARS:]),
            suffix=redact(context.suffix[:SUFFIX_CHARS]),
            cells_above=tuple(redact(cell) for cell in above),
            variables=tuple(name for name in context.variables[:VARIABLE_NAMES] if name.isidentifier()),
        )

    async def _candidates(self, settings: ModelSettings) -> tuple[str, ...]:
        """``infill`` only where llama.cpp's ``/props`` answers; then ``fim``, then ``chat``."""
        try:
            response = await self._client(settings).get(_server_root(settings) + "props", timeout=3.0)
            llama = response.status_code == 200 and "default_generation_settings" in response.json()
        except (httpx.HTTPError, ValueError):
            llama = False
        return MODES if llama else MODES[1:]

    async def _ask(self, mode: str, settings: ModelSettings, context: CompletionContext) -> str | None:
        client = self._client(settings)
        header = _header(context)
        if mode == "infill":
            url = _server_root(settings) + "infill"
            extra = [{"filename": "context", "text": header}] if header else []
            body: dict[str, Any] = {
                "input_prefix": context.prefix,
                "input_suffix": context.suffix,
                "input_extra": extra,
                "n_predict": MAX_TOKENS,
                "temperature": 0.1,
            }
        elif mode == "fim":
            url = "completions"
            body = {
                "model": settings.model,
                "prompt": header + context.prefix,
                "suffix": context.suffix,
                "max_tokens": MAX_TOKENS,
                "temperature": 0.1,
                "stream": False,
            }
        else:
            url = "chat/completions"
            code = f"{header}{context.prefix}<CURSOR>{context.suffix}"
            body = {
                "model": settings.model,
                "messages": [
                    {"role": "system", "content": CHAT_SYSTEM.format(language=context.language or "code")},
                    {"role": "user", "content": code},
                ],
                "max_tokens": MAX_TOKENS,
                "temperature": 0.1,
                "stream": False,
            }
        response = await client.post(url, json=body)
        if response.status_code in _UNSUPPORTED:
            return None
        response.raise_for_status()
        payload = response.json()
        if mode == "infill":
            return str(payload.get("content") or "")
        choice = (payload.get("choices") or [{}])[0]
        if mode == "fim":
            return str(choice.get("text") or "")
        return str((choice.get("message") or {}).get("content") or "")

    def _client(self, settings: ModelSettings) -> httpx.AsyncClient:
        """One kept-alive client per endpoint and key: a new connection per keystroke pause would cost more
        than the completion's own latency on a local server."""
        try:
            api_key = settings.resolved_api_key()
        except ModelError:
            api_key = ""
        base = settings.resolved_base_url().rstrip("/") + "/"
        client = self._clients.get((base, api_key))
        if client is None:
            client = httpx.AsyncClient(
                base_url=base,
                headers={"Authorization": f"Bearer {api_key}", **settings.extra_headers},
                timeout=httpx.Timeout(min(settings.timeout, TIMEOUT_SECONDS), connect=5.0),
                # Headers and body go out as two writes: with Nagle's algorithm the body waits for the
                # server's delayed ACK of the headers (40 ms on Linux): a third of a small model's answer.
                transport=httpx.AsyncHTTPTransport(
                    socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)], trust_env=True
                ),
                trust_env=True,
            )
            self._clients[(base, api_key)] = client
        return client


def _server_root(settings: ModelSettings) -> str:
    """llama.cpp's own routes (``/props``, ``/infill``) sit beside ``/v1``, not under it (an absolute URL:
    httpx appends a relative one to the base path)."""
    base = settings.resolved_base_url().rstrip("/")
    return (base[: -len("/v1")] if base.endswith("/v1") else base) + "/"


def _header(context: CompletionContext) -> str:
    """The cells above and the kernel's names, before the prefix: what the model reads as earlier code."""
    parts = [cell.rstrip() + "\n\n" for cell in context.cells_above if cell.strip()]
    if context.variables:
        comment = "#" if context.language in ("python", "r", "julia", "") else "//"
        parts.insert(0, f"{comment} variables in the kernel: {', '.join(context.variables)}\n\n")
    return "".join(parts)


def _clean(text: str, context: CompletionContext) -> str:
    """The insertion alone: a chat model's fences taken off, and the suffix it repeated dropped."""
    text = _FENCE.sub("", text) if text.lstrip().startswith("```") else text
    text = text.replace("<CURSOR>", "")
    suffix = context.suffix.strip()
    if suffix and text.rstrip().endswith(suffix):
        text = text.rstrip()[: -len(suffix)]
    return text.rstrip() if "\n" in text.strip() else text.rstrip("\n")
