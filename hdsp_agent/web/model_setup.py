"""The sidebar's model setup: ``GET|PUT model-setup``, ``POST model-setup/models``, ``POST model-setup/test``.

Saving takes effect at once (no restart). The key goes one way, browser → server: replies say only whether one
is
set. When the administrator locks models (``allow_user_models = False``) every write is refused with who to
ask.
"""

from __future__ import annotations

from typing import Any

import tornado.web

from ..agent.llm import ModelSettings
from ..agent.model_setup import TOOL_CALL_MODES, EndpointError, endpoint_models, normalize_base_url
from ..agent.readiness import MAX_CHECK_TOKENS, check_readiness
from ..user_text import texts_for
from .routes import _AgentHandler, route


class _SetupHandler(_AgentHandler):
    def require_allowed(self) -> None:
        if not self.agent.allow_user_models:
            contact = self.agent.admin_contact or "your administrator"
            raise tornado.web.HTTPError(403, f"Models are set by the administrator; ask {contact}.")

    def endpoint_and_key(self, body: dict[str, Any]) -> tuple[str, str]:
        """The endpoint the browser names and the key to use with it: the one sent, or the one saved for that
        same endpoint — never a key from the server's configuration or environment (it could leave for any
        URL)."""
        try:
            base_url = normalize_base_url(str(body.get("base_url") or ""))
        except EndpointError as error:
            raise tornado.web.HTTPError(400, str(error)) from None
        if not base_url:
            raise tornado.web.HTTPError(400, "base_url is required")
        api_key = body.get("api_key")
        if isinstance(api_key, str) and api_key.strip():
            return base_url, api_key.strip()
        return base_url, self.agent.user_models.key_for(base_url)


class ModelSetupHandler(_SetupHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        self.write_json(self.agent.model_setup_state())

    @tornado.web.authenticated
    async def put(self) -> None:
        self.require_allowed()
        body = self.body_json()
        api_key = body.get("api_key")
        if body.get("clear_key"):
            api_key = ""
        elif not isinstance(api_key, str) or not api_key.strip():
            api_key = None  # keep the key saved for this endpoint
        tool_calls = str(body.get("tool_calls") or "auto")
        try:
            self.agent.user_models.save(
                str(body.get("base_url") or ""), str(body.get("model") or ""), api_key, tool_calls
            )
        except EndpointError as error:
            raise tornado.web.HTTPError(400, str(error)) from None
        self.agent.reload_models()
        self.write_json(await self.agent.models_overview())


class EndpointModelsHandler(_SetupHandler):
    """The models an endpoint lists, so the user picks one instead of typing its name."""

    @tornado.web.authenticated
    async def post(self) -> None:
        self.require_allowed()
        base_url, api_key = self.endpoint_and_key(self.body_json())
        try:
            self.write_json({"base_url": base_url, "models": await endpoint_models(base_url, api_key)})
        except EndpointError as error:
            self.write_json({"base_url": base_url, "models": [], "error": str(error)})


class TestModelHandler(_SetupHandler):
    """The readiness check (agent/readiness.py) of the model the form names: streaming, tool calls, window,
    prompt size, each with a verdict and the next action. Kept with the model and shown in the picker."""

    @tornado.web.authenticated
    def get(self) -> None:
        # What the form says before the check runs: what it costs at most.
        self.write_json({"max_tokens": MAX_CHECK_TOKENS, "requests": 2})

    @tornado.web.authenticated
    async def post(self) -> None:
        self.require_allowed()
        body = self.body_json()
        base_url, api_key = self.endpoint_and_key(body)
        model = str(body.get("model") or "").strip()
        if not model:
            raise tornado.web.HTTPError(400, "model is required")
        tool_calls = str(body.get("tool_calls") or "auto")
        if tool_calls not in TOOL_CALL_MODES:
            raise tornado.web.HTTPError(400, f"tool_calls must be one of {', '.join(TOOL_CALL_MODES)}")
        configured = self.agent.runtime.models.find(model)
        settings = ModelSettings(
            model=model,
            base_url=base_url,
            api_key=api_key or None,
            tool_calls=tool_calls,
            context_window=configured.context_window if configured else self.agent.context_window,
            profile=configured.profile if configured else self.agent.profile,
            max_retries=0,
        )
        report = await check_readiness(settings, self.agent.readiness_prompt_tokens)
        if self.agent.runtime.readiness is not None:
            self.agent.runtime.readiness.save(report)
        self.agent.reload_models()  # a new tool-call verdict takes effect for the next conversation
        public = report.public()
        failed = next((line for line in report.lines if line.verdict == "fail"), None)
        reply: dict[str, Any] = {"ok": failed is None, "readiness": public}
        if failed is not None:
            reply["error"] = failed.text
        # Also when the server's environment hands its key to every kernel.
        warning = self.agent.inherited_key_warning()
        if warning:
            reply["warning"] = warning
        reply["texts"] = texts_for(public, warning)
        self.write_json(reply)


def build_model_setup_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [
        (route("model-setup"), ModelSetupHandler),
        (route("model-setup/models"), EndpointModelsHandler),
        (route("model-setup/test"), TestModelHandler),
    ]
