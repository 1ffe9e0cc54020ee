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
from ..agent.model_setup import EndpointError, endpoint_models, normalize_base_url
from ..agent.readiness import MAX_CHECK_TOKENS, check_readiness
from ..user_text import texts_for
from .errors import RestError
from .rest_models import (
    EndpointModels,
    EndpointModelsRequest,
    ModelSetupRequest,
    ModelSetupState,
    ModelsOverview,
    ModelTestCost,
    ModelTestReply,
)
from .routes import _AgentHandler, route


class _SetupHandler(_AgentHandler):
    def require_allowed(self) -> None:
        if not self.agent.allow_user_models:
            raise RestError("models_locked", self.agent.admin_contact or "your administrator")

    def endpoint_and_key(self, body: EndpointModelsRequest | ModelSetupRequest) -> tuple[str, str]:
        """The endpoint the browser names and the key to use with it: the one sent, or the one saved for that
        same endpoint — never a key from the server's configuration or environment (it could leave for any
        URL)."""
        try:
            base_url = normalize_base_url(body.base_url)
        except EndpointError as error:
            raise RestError("invalid_endpoint", error, field="base_url") from None
        if not base_url:
            raise RestError("invalid_field", "base_url", "is required", field="base_url")
        if body.api_key is not None and body.api_key.strip():
            return base_url, body.api_key.strip()
        return base_url, self.agent.user_models.key_for(base_url)


class ModelSetupHandler(_SetupHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        self.reply(ModelSetupState, self.agent.model_setup_state())

    @tornado.web.authenticated
    async def put(self) -> None:
        self.require_allowed()
        body = self.body(ModelSetupRequest)
        api_key: str | None = body.api_key
        if body.clear_key:
            api_key = ""
        elif api_key is None or not api_key.strip():
            api_key = None  # keep the key saved for this endpoint
        try:
            self.agent.user_models.save(
                body.base_url, body.model, api_key, body.tool_calls, body.completion_model
            )
        except EndpointError as error:
            raise RestError("invalid_endpoint", error) from None
        self.agent.reload_models()
        self.reply(ModelsOverview, await self.agent.models_overview())


class EndpointModelsHandler(_SetupHandler):
    """The models an endpoint lists, so the user picks one instead of typing its name."""

    @tornado.web.authenticated
    async def post(self) -> None:
        self.require_allowed()
        base_url, api_key = self.endpoint_and_key(self.body(EndpointModelsRequest))
        try:
            self.reply(
                EndpointModels, {"base_url": base_url, "models": await endpoint_models(base_url, api_key)}
            )
        except EndpointError as error:
            self.reply(EndpointModels, {"base_url": base_url, "models": [], "error": str(error)})


class TestModelHandler(_SetupHandler):
    """The readiness check (agent/readiness.py) of the model the form names: streaming, tool calls, window,
    prompt size, each with a verdict and the next action. Kept with the model and shown in the picker."""

    @tornado.web.authenticated
    def get(self) -> None:
        # What the form says before the check runs: what it costs at most.
        self.reply(ModelTestCost, {"max_tokens": MAX_CHECK_TOKENS, "requests": 2})

    @tornado.web.authenticated
    async def post(self) -> None:
        self.require_allowed()
        body = self.body(ModelSetupRequest)
        base_url, api_key = self.endpoint_and_key(body)
        model = body.model.strip()
        if not model:
            raise RestError("invalid_field", "model", "is required", field="model")
        configured = self.agent.runtime.models.find(model)
        settings = ModelSettings(
            model=model,
            base_url=base_url,
            api_key=api_key or None,
            # Never $OPENAI_API_KEY to a URL the browser named: behind the hub's gateway it is the server's
            # own hub token, which opens the user's server.
            key_from_environment=False,
            tool_calls=body.tool_calls,
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
        self.reply(ModelTestReply, reply)


def build_model_setup_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [
        (route("model-setup"), ModelSetupHandler),
        (route("model-setup/models"), EndpointModelsHandler),
        (route("model-setup/test"), TestModelHandler),
    ]
