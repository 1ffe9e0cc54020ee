"""``GET /hdsp-agent/instructions?path=P``: the project instructions and rules that apply to the next message.

The sidebar shows them as chips, so the user knows what the agent is told besides their message (AGENTS.md,
CLAUDE.md, .cursorrules, ``.hdsp/rules``): the same selection the system prompt makes.

``GET /hdsp-agent/skills``: every skill found, with its trust; ``POST /hdsp-agent/skills/trust {path,
sha256}``: trust a project skill as the user saw it (``skills/trust.py`` decides).
"""

from __future__ import annotations

import asyncio

import tornado.web

from ..permissions.paths import display_path
from ..skills.trust import SkillTrust
from ..tools.builtin.rules import INSTRUCTION_FILES, applicable_rules
from .errors import RestError
from .rest_models import InstructionsQuery, InstructionsReply, SkillsReply, SkillTrustReply, SkillTrustRequest
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


class SkillsHandler(_AgentHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        root = self.agent.root_dir
        skills = await asyncio.to_thread(SkillTrust(root).skills)
        self.reply(SkillsReply, {"skills": [skill.public(root) for skill in skills]})


class SkillTrustHandler(_AgentHandler):
    @tornado.web.authenticated
    async def post(self) -> None:
        root = self.agent.root_dir
        body = self.body(SkillTrustRequest)
        try:
            skill = await asyncio.to_thread(SkillTrust(root).trust, body.path, body.sha256)
        except LookupError as error:
            raise RestError("skill_not_found", error) from None
        except ValueError as error:
            raise RestError("skill_trust_changed", error) from None
        self.reply(SkillTrustReply, {"skill": skill.public(root)})


def build_instructions_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [
        (route("instructions"), InstructionsHandler),
        (route("skills"), SkillsHandler),
        (route("skills/trust"), SkillTrustHandler),
    ]
