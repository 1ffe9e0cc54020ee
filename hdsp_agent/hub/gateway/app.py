"""The gateway's tornado application: its routes under the service's prefix (``/services/<name>/``)."""

from __future__ import annotations

import tornado.web

from .handlers import CompletionsHandler, Gateway, ModelsHandler


class HealthHandler(tornado.web.RequestHandler):
    """The service's root: the hub (and an administrator's probe) see it is up; no model behind it."""

    def get(self) -> None:
        self.finish({"service": "hdsp-agent model gateway", "api": "v1"})


def make_app(gateway: Gateway) -> tornado.web.Application:
    prefix = "/" + gateway.settings.prefix.strip("/") + "/" if gateway.settings.prefix.strip("/") else "/"
    return tornado.web.Application(
        [
            (prefix + r"v1/(chat/completions|completions)", CompletionsHandler, {"gateway": gateway}),
            (prefix + "v1/models", ModelsHandler, {"gateway": gateway}),
            (prefix, HealthHandler),
        ]
    )
