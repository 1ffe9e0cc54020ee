"""``use_skill``: a skill's instructions, read when the model chooses it (the system prompt names the skills
and no more: ``skills/catalog.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import Field

from ...skills.catalog import SKILL_FILE, Skill, SkillError, offered, parse_skill, read_skill_file
from ...skills.trust import SkillTrust
from ...user_text import user_template, user_text
from ..base import Tool, ToolArgs, ToolContext, ToolError
from ..facts import ToolFacts, ToolWords

# The files beside SKILL.md the answer names (the model reads them with the file tools when it needs them).
MAX_LISTED_FILES = 30


class UseSkillArgs(ToolArgs):
    name: str = Field(description="The skill's name, as listed under Skills.")


class UseSkillTool(Tool[UseSkillArgs]):
    name = "use_skill"
    facts = ToolFacts(
        level="allow",
        changes="none",
        # Not compact: a small window has no room for a skill's instructions (the system prompt then names
        # no skills either: ``AgentRuntime.system_prompt``).
        profiles=frozenset({"standard", "full"}),
        words=ToolWords(
            question=user_template("Read the instructions of a skill?"),
            statement=user_template("Read the instructions of a skill"),
        ),
    )
    description = "Read a skill's instructions (Skills in the system prompt) before a task it fits."
    args_model = UseSkillArgs
    read_only = True

    def __init__(self, config_dir: Path | None = None) -> None:
        # The user's hdsp_agent config dir (None: Jupyter's); tests point it elsewhere.
        self.config_dir = config_dir

    async def run(self, args: UseSkillArgs, ctx: ToolContext) -> str:
        return await asyncio.to_thread(self._read, args.name.strip(), Path(ctx.root_dir))

    def _read(self, wanted: str, root: Path) -> str:
        skills = SkillTrust(root, self.config_dir).skills()
        chosen = next((skill for skill in offered(skills) if skill.name == wanted), None)
        if chosen is None:
            waiting = [skill for skill in skills if skill.name == wanted and not skill.offered]
            available = ", ".join(skill.name for skill in offered(skills)) or "none"
            if waiting:
                raise ToolError(
                    "E_SKILL_NOT_TRUSTED",
                    user_text("the project skill %1 is not trusted yet", repr(wanted)),
                    user_text("The user can review and trust it in the sidebar's skills list."),
                )
            raise ToolError(
                "E_SKILL_NOT_FOUND",
                user_text("no skill named %1", repr(wanted)),
                user_text("Available skills: %1.", available),
            )
        try:
            _, _, body = parse_skill(read_skill_file(chosen.directory, chosen.source, root))
        except SkillError as error:
            raise ToolError(
                "E_SKILL_INVALID", user_text("the skill %1 cannot be read: %2", wanted, error)
            ) from None
        return f"Skill {chosen.name!r} (folder {_folder(chosen, root)}):\n\n{body}{_files(chosen)}"


def _folder(skill: Skill, root: Path) -> str:
    return str(skill.public(root)["path"])


def _files(skill: Skill) -> str:
    beside = sorted(
        path.relative_to(skill.directory).as_posix()
        for path in skill.directory.rglob("*")
        if path.is_file() and path.name != SKILL_FILE
    )
    if not beside:
        return ""
    listed = beside[:MAX_LISTED_FILES]
    more = f"\n- … and {len(beside) - len(listed)} more" if len(beside) > len(listed) else ""
    return "\n\nFiles in the skill's folder:\n" + "\n".join(f"- {name}" for name in listed) + more
