"""The routes behind the composer's slash commands that need the server: ``/context`` (what the next request
holds), ``/compact`` (compact now) and ``/mcp:<server>:<prompt>`` (MCP prompts). The others (``/new``,
``/undo``, ``/model``, ``/mode``, ``/plan``) use routes and socket commands that exist for the buttons.
"""

from __future__ import annotations

from dataclasses import asdict

import tornado.web

from ..agent.conversation import TurnAlreadyRunning
from ..mcp.prompts import get_prompt, list_prompts
from ..tools.base import ToolError
from .errors import RestError
from .rest_models import (
    CompactReply,
    ContextReply,
    ContextRequest,
    McpPromptReply,
    McpPromptRequest,
    McpPromptsReply,
)
from .routes import SESSION_ID, _AgentHandler, route


class SessionContextHandler(_AgentHandler):
    """``POST sessions/{id}/context {context, model, draft?}``: the next request's tokens by part."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body(ContextRequest)
        breakdown = await session.next_request(body.context, body.model, body.draft)
        self.reply(ContextReply, asdict(breakdown))


class SessionCompactHandler(_AgentHandler):
    """``POST sessions/{id}/compact {context, model}``: summarize the conversation now."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body(ContextRequest)
        try:
            outcome = await session.compact_now(body.context, body.model)
        except TurnAlreadyRunning as error:
            raise RestError("turn_running", error) from None
        if outcome is None:
            self.reply(CompactReply, {"compacted": False})
            return
        self.reply(
            CompactReply,
            {
                "compacted": True,
                "summary": outcome["summary"],
                "messages_before": outcome["messages_before"],
                "messages_after": outcome["messages_after"],
            },
        )


class McpPromptsHandler(_AgentHandler):
    """``GET mcp/prompts``: every prompt of the MCP servers that may start."""

    @tornado.web.authenticated
    async def get(self) -> None:
        prompts, problems = await list_prompts(self.agent.mcp.manager)
        self.reply(McpPromptsReply, {"prompts": [asdict(p) for p in prompts], "problems": problems})


class McpPromptHandler(_AgentHandler):
    """``POST mcp/prompts/get {server, name, arguments}``: the prompt's text."""

    @tornado.web.authenticated
    async def post(self) -> None:
        body = self.body(McpPromptRequest)
        try:
            text = await get_prompt(self.agent.mcp.manager, body.server, body.name, body.arguments)
        except ToolError as error:
            raise RestError("mcp_prompt_failed", error.message) from None
        self.reply(McpPromptReply, {"text": text})


def build_command_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [
        (route(f"sessions/{SESSION_ID}/context"), SessionContextHandler),
        (route(f"sessions/{SESSION_ID}/compact"), SessionCompactHandler),
        (route("mcp/prompts"), McpPromptsHandler),
        (route("mcp/prompts/get"), McpPromptHandler),
    ]
