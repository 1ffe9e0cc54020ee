"""``/hdsp-agent/v1/...``: an OpenAI-compatible endpoint on the Jupyter port for clients that run tools
themselves.

Authenticated with the Jupyter token (``Authorization: Bearer <token>``, what Continue sends as its
``apiKey``).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import tornado.web

from ..agent.llm import ModelSettings
from ..agent.models import ModelNotConfigured
from ..proxy.normalize import StreamNormalizer, normalize_completion, tool_names
from ..proxy.upstream import UpstreamError
from .routes import _AgentHandler, route


def _error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind}}


class ChatCompletionsHandler(_AgentHandler):
    @tornado.web.authenticated
    async def post(self) -> None:
        # OpenAI's protocol, OpenAI's error shape (not the sidebar's error table).
        try:
            request = json.loads(self.request.body or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            self.write_json(_error(f"invalid JSON body: {error}"), status=400)
            return
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            self.write_json(_error("'messages' (a list) is required"), status=400)
            return
        upstream = self.agent.upstream
        await upstream.models.discover()
        try:
            settings, body = upstream.prepare(request)
        except ModelNotConfigured as error:
            self.write_json(_error(str(error), "model_not_configured"), status=503)
            return
        offered = tool_names(body)
        try:
            if request.get("stream"):
                await self._stream(settings, body, offered)
            else:
                completion = await upstream.complete(settings, body)
                self._log_usage(completion.get("usage"))
                self.write_json(normalize_completion(completion, offered))
        except UpstreamError as error:
            self.write_json(error.payload, status=error.status)
        except httpx.HTTPError as error:
            if not self._headers_written:
                self.write_json(
                    _error(f"the model endpoint failed: {error}", "upstream_unreachable"), status=502
                )
            else:
                await self._send({"error": {"message": f"the model's stream broke off: {error}"}})
                self.finish()

    async def _stream(self, settings: ModelSettings, body: dict[str, Any], offered: list[str]) -> None:
        normalizer = StreamNormalizer(offered)
        async for chunk in self.agent.upstream.stream(settings, body):
            if chunk.get("usage"):
                self._log_usage(chunk["usage"])
            for out in normalizer.feed(chunk):
                await self._send(out)
        for out in normalizer.finish():
            await self._send(out)
        self.write("data: [DONE]\n\n")
        self.finish()

    async def _send(self, chunk: dict[str, Any]) -> None:
        if not self._headers_written:
            self.set_header("Content-Type", "text/event-stream")
            self.set_header("Cache-Control", "no-cache")
        self.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n")
        await self.flush()

    def _log_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self.log.info(
                "hdsp-agent v1: user=%s prompt_tokens=%s completion_tokens=%s",
                getattr(self.current_user, "username", "?"),
                usage.get("prompt_tokens"),
                usage.get("completion_tokens"),
            )


class ModelListHandler(_AgentHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        await self.agent.runtime.models.discover()
        models = self.agent.runtime.models.models
        self.write_json(
            {
                "object": "list",
                "data": [
                    {"id": m.label, "object": "model", "owned_by": "hdsp-agent", "created": 0} for m in models
                ],
            }
        )


def build_openai_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [(route("v1/chat/completions"), ChatCompletionsHandler), (route("v1/models"), ModelListHandler)]
