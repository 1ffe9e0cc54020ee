"""The gateway's routes: ``v1/chat/completions``, ``v1/completions`` and ``v1/models``, forwarded upstream.

Each request is authenticated (``auth.py``), admitted by the user's quotas (``quotas.py``), forwarded with the
model's key (streamed chunk by chunk; a client that goes away cancels the upstream request), counted
(``usage.py``) and written to the central audit log, whatever its outcome. Errors are OpenAI-shaped
(``{"error": {"message", "type", "code"}}``) so every client, the sidebar included, shows the message.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx
import tornado.iostream
import tornado.web

from ...audit.log import AuditLog
from .auth import Identify, bearer_token
from .quotas import QuotaRefused, Quotas
from .settings import GatewaySettings
from .usage import UsageCount, estimate_prompt_tokens


@dataclass
class Gateway:
    """The long-lived parts every request shares."""

    settings: GatewaySettings
    identify: Identify
    quotas: Quotas
    audit: AuditLog
    client: httpx.AsyncClient


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code}}


class _GatewayHandler(tornado.web.RequestHandler):
    gateway: Gateway
    user: str

    def initialize(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.started = time.monotonic()

    async def prepare(self) -> None:
        token = bearer_token(self.request.headers.get("Authorization"))
        user = await self.gateway.identify(token) if token else None
        if user is None:
            self._audit(None, outcome="unauthenticated", status=401)
            self.refuse(
                401,
                error_body(
                    "the model gateway needs the hub token of a user allowed to use it as the API key",
                    "authentication_error",
                    "invalid_api_key",
                ),
            )
            return
        self.user = user

    def refuse(self, status: int, body: dict[str, Any], *, retry: bool = True) -> None:
        self.set_status(status)
        if not retry:
            # The OpenAI SDKs honour this: a quota refusal is not worth retrying.
            self.set_header("x-should-retry", "false")
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def upstream_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.gateway.settings.upstream_key()}"}

    def _audit(self, user: str | None, **record: Any) -> None:
        self.gateway.audit.write(
            {
                "event": "model_request",
                "user": user,
                "endpoint": self.request.path.rsplit("/v1/", 1)[-1],
                "duration_ms": round((time.monotonic() - self.started) * 1000),
                **record,
            }
        )


class ModelsHandler(_GatewayHandler):
    async def get(self) -> None:
        try:
            response = await self.gateway.client.get(
                self.gateway.settings.upstream_url + "/models", headers=self.upstream_headers()
            )
        except (httpx.HTTPError, OSError) as error:
            self.refuse(
                502, error_body(f"the model gateway cannot reach the model: {error}", "upstream_error")
            )
            return
        self.set_status(response.status_code)
        self.set_header("Content-Type", response.headers.get("Content-Type", "application/json"))
        self.finish(response.content)


class CompletionsHandler(_GatewayHandler):
    """``chat/completions`` and ``completions`` (the route names which)."""

    relay: asyncio.Future[tuple[str, int]] | None = None

    async def post(self, endpoint: str) -> None:
        try:
            body = json.loads(self.request.body or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            self.refuse(400, error_body(f"invalid JSON body: {error}", "invalid_request_error"))
            return
        if not isinstance(body, dict):
            self.refuse(400, error_body("the body must be a JSON object", "invalid_request_error"))
            return
        model = str(body.get("model") or "")
        try:
            self.gateway.quotas.admit(self.user)
        except QuotaRefused as refused:
            self._audit(self.user, model=model, outcome="refused", status=429, code=refused.code)
            self.refuse(429, error_body(refused.message, "quota_exceeded", refused.code), retry=False)
            return
        count = UsageCount(estimate_prompt_tokens(body))
        outcome, status = "ok", 200
        try:
            self.relay = asyncio.ensure_future(self._forward(endpoint, body, count))
            outcome, status = await self.relay
        except asyncio.CancelledError:
            outcome, status = "cancelled", 499
        finally:
            self.gateway.quotas.release(self.user)
            prompt, completion = count.totals()
            if outcome != "unreachable":
                self.gateway.quotas.spent(self.user, prompt + completion)
            self._audit(
                self.user,
                model=model,
                outcome=outcome,
                status=status,
                prompt_tokens=prompt,
                completion_tokens=completion,
                estimated=count.estimated,
            )

    def on_connection_close(self) -> None:
        # The client went away (a cancelled turn): stop the model's work for it too.
        if self.relay is not None and not self.relay.done():
            self.relay.cancel()

    async def _forward(self, endpoint: str, body: dict[str, Any], count: UsageCount) -> tuple[str, int]:
        streaming = bool(body.get("stream"))
        usage_asked = bool((body.get("stream_options") or {}).get("include_usage"))
        if streaming and not usage_asked:
            # Ask for the exact count; the usage chunk is kept from a client that did not ask for it.
            body = {**body, "stream_options": {**(body.get("stream_options") or {}), "include_usage": True}}
        try:
            headers = self.upstream_headers()
        except OSError as error:
            self.refuse(500, error_body(f"the model gateway cannot read its key: {error}", "gateway_error"))
            return "unreachable", 500
        request = self.gateway.client.build_request(
            "POST", f"{self.gateway.settings.upstream_url}/{endpoint}", json=body, headers=headers
        )
        try:
            response = await self.gateway.client.send(request, stream=True)
        except (httpx.HTTPError, OSError) as error:
            self.refuse(
                502, error_body(f"the model gateway cannot reach the model: {error}", "upstream_error")
            )
            return "unreachable", 502
        try:
            if response.status_code != 200 or not streaming:
                content = await response.aread()
                self._count_json(content, count)
                self.set_status(response.status_code)
                self.set_header("Content-Type", response.headers.get("Content-Type", "application/json"))
                self.finish(content)
                return ("ok" if response.status_code == 200 else "upstream_error"), response.status_code
            return await self._relay_stream(response, count, keep_usage=usage_asked)
        finally:
            await response.aclose()

    async def _relay_stream(
        self, response: httpx.Response, count: UsageCount, *, keep_usage: bool
    ) -> tuple[str, int]:
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        dropped = False
        try:
            async for line in response.aiter_lines():
                if not line:
                    if not dropped:
                        self.write("\n")
                        await self.flush()  # one event through as soon as it is whole
                    dropped = False
                    continue
                if line.startswith("data:"):
                    chunk = _json_object(line[5:].strip())
                    if chunk is not None:
                        count.add(chunk)
                        if not keep_usage and chunk.get("usage") and not chunk.get("choices"):
                            dropped = True
                            continue
                self.write(line + "\n")
        except httpx.HTTPError as error:
            # Headers are out: tell the client in the stream's own terms, then end it.
            message = error_body(f"the model's stream broke off: {error}", "upstream_error")
            self.write(f"data: {json.dumps(message)}\n\n")
            self.finish()
            return "upstream_error", 502
        except tornado.iostream.StreamClosedError:
            return "cancelled", 499
        self.finish()
        return "ok", 200

    @staticmethod
    def _count_json(content: bytes, count: UsageCount) -> None:
        payload = _json_object(content)
        if payload is not None:
            count.add(payload)


def _json_object(raw: str | bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
