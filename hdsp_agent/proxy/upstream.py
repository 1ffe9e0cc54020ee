"""Forwarding chat-completion requests to the model endpoint configured for hdsp-agent.

The client's key is its Jupyter token; the model's key never leaves the server. Requests are passed through as
they are (``stream_options`` and other fields included), except for what must change: the model name, tools
the administrator disabled, empty ``tools``/``tool_choice`` (vLLM answers 422), and ``content: null`` on
assistant tool-call messages (llama.cpp's server answers 500).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from ..agent.llm import ModelError, ModelSettings
from ..agent.models import ModelCatalog


class UpstreamError(Exception):
    def __init__(self, status: int, payload: dict[str, Any]) -> None:
        super().__init__(f"upstream answered {status}")
        self.status = status
        self.payload = payload


@dataclass
class Upstream:
    models: ModelCatalog
    disabled_tools: frozenset[str] = frozenset()
    # The administrator lets clients name models hdsp-agent does not list (sent to the default endpoint).
    pass_through_models: bool = False

    def prepare(self, request: dict[str, Any]) -> tuple[ModelSettings, dict[str, Any]]:
        requested = request.get("model") if isinstance(request.get("model"), str) else None
        settings = self.models.get(requested)
        body = dict(request)
        known = self.models.find(requested) is not None
        body["model"] = requested if requested and not known and self.pass_through_models else settings.model
        tools = [tool for tool in body.get("tools") or [] if _tool_name(tool) not in self.disabled_tools]
        if tools:
            body["tools"] = tools
        else:
            body.pop("tools", None)
            body.pop("tool_choice", None)
        body["messages"] = [_sendable(message) for message in body.get("messages") or []]
        return settings, body

    def _client(self, settings: ModelSettings) -> httpx.AsyncClient:
        try:
            key = settings.resolved_api_key()
        except ModelError as error:  # an unreadable key file: the caller gets a clear answer, not a crash
            raise UpstreamError(500, {"error": {"message": error.message, "code": error.code}}) from None
        headers = {"Authorization": f"Bearer {key}", **settings.extra_headers}
        return httpx.AsyncClient(
            base_url=settings.resolved_base_url().rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(settings.timeout, connect=10.0),
            trust_env=True,
        )

    async def complete(self, settings: ModelSettings, body: dict[str, Any]) -> dict[str, Any]:
        async with self._client(settings) as client:
            response = await client.post("chat/completions", json={**body, "stream": False})
            payload = _json_or_error(response.content, response.status_code)
            if response.status_code != 200:
                raise UpstreamError(response.status_code, payload)
            return payload

    async def stream(self, settings: ModelSettings, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        async with self._client(settings) as client:
            async with client.stream("POST", "chat/completions", json={**body, "stream": True}) as response:
                if response.status_code != 200:
                    content = await response.aread()
                    raise UpstreamError(response.status_code, _json_or_error(content, response.status_code))
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return
                    try:
                        yield json.loads(data)
                    except json.JSONDecodeError:
                        continue  # a keep-alive or garbage line: nothing a client could use


def _tool_name(tool: Any) -> Any:
    return (tool.get("function") or {}).get("name") if isinstance(tool, dict) else None


def _sendable(message: Any) -> Any:
    if isinstance(message, dict) and message.get("role") == "assistant" and message.get("content") is None:
        return {**message, "content": ""}
    return message


def _json_or_error(content: bytes, status: int) -> dict[str, Any]:
    try:
        payload = json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError):
        payload = None
    if isinstance(payload, dict):
        return payload
    return {
        "error": {
            "message": content[:500].decode(errors="replace") or f"HTTP {status}",
            "type": "upstream_error",
        }
    }
