"""The only HTTP code: each handler translates between the wire and the domain objects the app built.

Every route lives under ``/hdsp-agent/`` on the Jupyter port and requires Jupyter authentication.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin

from . import __version__
from .tools.definitions import to_summary

if TYPE_CHECKING:
    from .app import HdspAgentApp

NAMESPACE = "hdsp-agent"


class _AgentHandler(ExtensionHandlerMixin, APIHandler):
    @property
    def agent(self) -> HdspAgentApp:
        agent: HdspAgentApp = self.settings["hdsp_agent"]
        return agent

    def write_json(self, payload: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(payload))


class InfoHandler(_AgentHandler):
    """``GET /hdsp-agent/info``: the server's version (for the frontend's handshake) and the tool catalog."""

    @tornado.web.authenticated
    def get(self) -> None:
        self.write_json(
            {
                "name": NAMESPACE,
                "version": __version__,
                "tools": [to_summary(tool) for tool in self.agent.catalog()],
            }
        )


def route(endpoint: str) -> str:
    return f"/{NAMESPACE}/{endpoint}"


def build_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [(route("info"), InfoHandler)]
