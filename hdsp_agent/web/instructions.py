"""``GET /hdsp-agent/instructions?path=P``: the project instructions and rules that apply to the next message.

The sidebar shows them as chips, so the user knows what the agent is told besides their message (AGENTS.md,
CLAUDE.md, .cursorrules, ``.hdsp/rules``): the same selection the system prompt makes.
"""

from __future__ import annotations

import asyncio

import tornado.web

from ..permissions.paths import display_path
from ..tools.builtin.rules import INSTRUCTION_FILES, applicable_rules
from .rest_models import InstructionsQuery, InstructionsReply
from .routes import _AgentHandler, route


class InstructionsHandler(_AgentHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        root = self.agent.root_dir
        path = self.query(InstructionsQuery).path
        rules = await asyncio.to_thread(applicable_rules, root, [path] if path else [])
        self.reply(
            InstructionsReply,
            {
                "instructions": [
                    {
                        "name": rule.name,
                        "path": display_path(rule.path, root),
                        "kind": "instructions" if rule.path.name in INSTRUCTION_FILES else "rule",
                    }
                    for rule in rules
                ]
            },
        )


def build_instructions_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [(route("instructions"), InstructionsHandler)]
