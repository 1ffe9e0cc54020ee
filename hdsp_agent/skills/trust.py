"""Which project skills the user trusted: per skill folder, the SHA-256 of the folder as they saw it
(``catalog.folder_digest``), kept in ``trusted_skills.json`` in the user's config dir beside MCP's
``trusted_projects.json`` (a protected place: the agent cannot write it unasked, the sandbox keeps it
read-only). A changed folder is a different hash: it asks again."""

from __future__ import annotations

import json
from pathlib import Path

from jupyter_core.paths import jupyter_config_dir

from .catalog import Skill, discover


class SkillTrust:
    def __init__(self, root: Path, config_dir: Path | None = None) -> None:
        self.root = root
        self.config_dir = config_dir
        self.store = (config_dir or Path(jupyter_config_dir()) / "hdsp_agent") / "trusted_skills.json"

    def pinned(self) -> dict[str, str]:
        try:
            value = json.loads(self.store.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(value, dict):
            return {}
        return {str(k): str(v) for k, v in value.items() if isinstance(v, str)}

    def skills(self) -> list[Skill]:
        """Every skill with its trust now (blocking: reads and hashes the folders)."""
        return discover(self.root, self.pinned(), self.config_dir)

    def trust(self, path: str, expected_sha256: str) -> Skill:
        """Trust the project skill at ``path`` (as ``Skill.public`` names it) as the user saw it: refused when
        it changed since (``ValueError``) or is not a project skill there (``LookupError``)."""
        for skill in self.skills():
            if skill.source == "project" and skill.public(self.root)["path"] == path:
                if skill.status == "invalid":
                    raise ValueError(f"{path}: {skill.problem}")
                if skill.sha256 != expected_sha256:
                    raise ValueError(f"{path} changed since it was shown; review it again before trusting it")
                pins = self.pinned()
                pins[str(skill.directory.resolve())] = skill.sha256
                self.store.parent.mkdir(parents=True, exist_ok=True)
                self.store.write_text(json.dumps(pins, indent=2, sort_keys=True), encoding="utf-8")
                return Skill(
                    skill.name, skill.description, skill.source, skill.directory, skill.sha256, "trusted"
                )
        raise LookupError(f"no project skill at {path}")
