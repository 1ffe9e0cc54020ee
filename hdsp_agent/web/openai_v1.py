"""``/hdsp-agent/v1/...``: an OpenAI-compatible endpoint on the Jupyter port for clients that run tools
themselves.

Authenticated with the Jupyter token (``Authorization: Bearer <token>``, what Continue sends as its
``apiKey``). The same door rules as the sidebar's: ``v1_enabled`` off answers 403, a user over
``daily_token_limit`` gets 429 (OpenAI's ``insufficient_quota`` shape), and every model call is counted in the
day's tokens and written to the audit log (``door: "v1"``).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import tornado.web

from ..agent.llm import ModelSettings
from ..agent.models import ModelNotConfigured
from ..agent.quotas import QuotaExceeded, UsageMeter
from ..proxy.normalize import StreamNormalizer, normalize_completion, tool_names
from ..proxy.upstream import UpstreamError
from ..user_text import user_text
from .routes import _AgentHandler, route

DOOR = "v1"


def _error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, **({"code": code} if code else {})}}


class _V1Handler(_AgentHandler):
    def turned_off(self) -> bool:
        """Answer 403 when the administrator turned ``/v1`` off; True if so."""
        if self.agent.v1_enabled:
            return False
        message = user_text(
            "The OpenAI-compatible endpoint of hdsp-agent is turned off by your administrator "
            "(v1_enabled is false). Use the hdsp-agent sidebar, or ask your administrator."
        )
        self.write_json(_error(message, "permission_denied", "v1_disabled"), status=403)
        return True


class ChatCompletionsHandler(_V1Handler):
    @tornado.web.authenticated
    async def post(self) -> None:
        # OpenAI's protocol, OpenAI's error shape (not the sidebar's error table).
        if self.turned_off():
            return
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
        runtime = self.agent.runtime
        meter = UsageMeter(runtime.quotas, settings.label, audit=runtime.audit, door=DOOR)
        try:
            meter.check()
        except QuotaExceeded as refused:
            if runtime.audit is not None:
                runtime.audit({"event": "quota", "session": "", "code": refused.code, "door": DOOR})
            self.write_json(_error(refused.message, "insufficient_quota", refused.code), status=429)
            return
        offered = tool_names(body)
        try:
            if request.get("stream"):
                await self._stream(settings, body, offered, meter)
            else:
                completion = await upstream.complete(settings, body)
                self._log_usage(completion.get("usage"))
                self._count(meter, body, completion.get("choices"), completion.get("usage"))
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

    async def _stream(
        self, settings: ModelSettings, body: dict[str, Any], offered: list[str], meter: UsageMeter
    ) -> None:
        normalizer = StreamNormalizer(offered)
        deltas: list[Any] = []
        usage: Any = None
        try:
            async for chunk in self.agent.upstream.stream(settings, body):
                if chunk.get("usage"):
                    usage = chunk["usage"]
                    self._log_usage(usage)
                deltas += [choice.get("delta") for choice in chunk.get("choices") or []]
                for out in normalizer.feed(chunk):
                    await self._send(out)
        finally:
            # Counted also when the stream broke off or the client left: the model did the work.
            if deltas or usage:
                self._count(meter, body, deltas, usage)
        for out in normalizer.finish():
            await self._send(out)
        self.write("data: [DONE]\n\n")
        self.finish()

    @staticmethod
    def _count(meter: UsageMeter, body: dict[str, Any], answer: Any, usage: Any) -> None:
        """The call's tokens into the day's count and the audit log (estimated when the model sent none)."""
        meter.record(body.get("messages") or [], body.get("tools") or [], {"answer": answer}, usage)

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


class ModelListHandler(_V1Handler):
    @tornado.web.authenticated
    async def get(self) -> None:
        if self.turned_off():
            return
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
