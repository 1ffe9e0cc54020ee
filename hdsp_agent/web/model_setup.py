"""The sidebar's model setup: ``GET|PUT model-setup``, ``POST model-setup/models``, ``POST model-setup/test``.

Saving takes effect at once (no restart). The key goes one way, browser → server: replies say only whether one
is
set. When the administrator locks models (``allow_user_models = False``) every write is refused with who to
ask.
"""

from __future__ import annotations

from typing import Any

import tornado.web

from ..agent.model_setup import EndpointError, endpoint_models, normalize_base_url, try_model
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
        try:
            self.agent.user_models.save(
                str(body.get("base_url") or ""), str(body.get("model") or ""), api_key
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
    """One tiny request to the model; the endpoint's exact error when it fails."""

    @tornado.web.authenticated
    async def post(self) -> None:
        self.require_allowed()
        body = self.body_json()
        base_url, api_key = self.endpoint_and_key(body)
        model = str(body.get("model") or "").strip()
        if not model:
            raise tornado.web.HTTPError(400, "model is required")
        try:
            answer = await try_model(base_url, model, api_key)
        except EndpointError as error:
            self.write_json({"ok": False, "error": str(error)})
            return
        reply: dict[str, Any] = {"ok": True, "answer": answer[:200]}
        # The model works; say so, and also when the server's environment hands its key to every kernel.
        warning = self.agent.inherited_key_warning()
        if warning:
            reply.update(warning=warning, texts=texts_for(warning))
        self.write_json(reply)


def build_model_setup_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [
        (route("model-setup"), ModelSetupHandler),
        (route("model-setup/models"), EndpointModelsHandler),
        (route("model-setup/test"), TestModelHandler),
    ]
