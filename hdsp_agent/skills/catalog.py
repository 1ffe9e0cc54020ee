"""Skills: folders with a ``SKILL.md`` (YAML front matter ``name`` and ``description``, then the
instructions; scripts and files may sit beside it), found in three places:

1. built in, shipped in this package (``skills/builtin/``);
2. the user's, ``jupyter_config_dir()/hdsp_agent/skills/`` (beside ``mcp.json``);
3. the project's, ``.agents/skills/`` and ``.hdsp/skills/`` under the root.

Only each offered skill's name and description go into the system prompt (``skills_section``); the body is
read on demand by the ``use_skill`` tool (``tools/builtin/skills.py``). A skill's text becomes the agent's
instructions, so a project skill is offered only once the user trusted it, pinned to the hash of its whole
folder (``skills/trust.py``): a skill a shell command wrote, or one changed since, waits for the user's word.
Built-in and user skills are trusted (the user's config dir is a protected place). Problems (no front matter,
bad YAML, a name or description out of bounds) are reported with the skill, never raised.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from jupyter_core.paths import jupyter_config_dir

from ..permissions.paths import is_inside, is_sensitive

SKILL_FILE = "SKILL.md"
PROJECT_SKILL_DIRS = (Path(".agents") / "skills", Path(".hdsp") / "skills")
BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
# The name and description are in every request the model gets: bounded, one line, plain words (the
# Agent Skills format allows 64 and 1,024; a description of a few sentences is plenty to choose by).
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 300
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# A SKILL.md larger than this is not a skill anyone wrote by hand; its body goes to the model whole.
MAX_SKILL_BYTES = 64_000
# What a folder's pin covers; a bigger folder is refused rather than pinned in part.
MAX_PINNED_FILES = 200
MAX_PINNED_BYTES = 20_000_000
# Per place: a project with hundreds of skill folders must not fill the prompt.
MAX_SKILLS_PER_PLACE = 40
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)

Source = Literal["builtin", "user", "project"]
Status = Literal["trusted", "untrusted", "changed", "invalid"]


class SkillError(ValueError):
    """A SKILL.md that cannot be used, with the reason in words its author can act on."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    source: Source
    directory: Path
    sha256: str
    status: Status
    problem: str | None = None

    @property
    def offered(self) -> bool:
        return self.status == "trusted"

    def public(self, root: Path) -> dict[str, Any]:
        """For the sidebar: a project skill's folder relative to the root (the user opens it there)."""
        shown = self.directory
        if self.source == "project" and is_inside(self.directory, root.resolve()):
            shown = self.directory.relative_to(root.resolve())
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": shown.as_posix(),
            "sha256": self.sha256,
            "status": self.status,
            "problem": self.problem,
        }


def user_skills_dir(config_dir: Path | None = None) -> Path:
    return (config_dir or Path(jupyter_config_dir()) / "hdsp_agent") / "skills"


def parse_skill(text: str) -> tuple[str, str, str]:
    """(name, description, body) of a SKILL.md's text; ``SkillError`` says what is wrong."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise SkillError("SKILL.md must start with YAML front matter between '---' lines (name, description)")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        raise SkillError(f"invalid YAML front matter: {str(error).splitlines()[0]}") from None
    if not isinstance(meta, dict):
        raise SkillError("the front matter must be a mapping with 'name' and 'description'")
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not NAME_PATTERN.match(name) or len(name) > MAX_NAME_CHARS:
        raise SkillError(
            f"'name' must be lowercase letters, digits and hyphens, at most {MAX_NAME_CHARS} characters"
        )
    if not isinstance(description, str) or not description.strip():
        raise SkillError("'description' is missing: say what the skill does and when to use it")
    description = " ".join(description.split())  # one line: it is one line of the system prompt
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillError(f"'description' is longer than {MAX_DESCRIPTION_CHARS} characters")
    body = text[match.end() :].strip()
    if not body:
        raise SkillError("the skill has no instructions after its front matter")
    return name, description, body


def folder_digest(directory: Path) -> str:
    """SHA-256 over every file of the folder (its path and content's hash, in order): a changed script
    beside SKILL.md changes the skill as much as a changed SKILL.md. A link counts by where it points."""
    entries: list[str] = []
    total = 0
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory).as_posix()
        if path.is_symlink():
            entries.append(f"{relative} -> {path.readlink()}")
            continue
        if not path.is_file():
            continue
        total += path.stat().st_size
        if len(entries) >= MAX_PINNED_FILES or total > MAX_PINNED_BYTES:
            raise SkillError(
                f"the skill's folder holds more than {MAX_PINNED_FILES} files or "
                f"{MAX_PINNED_BYTES // 1_000_000} MB"
            )
        entries.append(f"{relative} {hashlib.sha256(path.read_bytes()).hexdigest()}")
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()


def read_skill_file(directory: Path, source: Source, root: Path) -> str:
    """The SKILL.md's text. A project skill's file (or folder) that is a link out of the project or to a
    secret is refused: its text would go to the model."""
    path = directory / SKILL_FILE
    try:
        resolved = path.resolve(strict=True)
        size = resolved.stat().st_size
    except OSError as error:
        raise SkillError(f"cannot read {SKILL_FILE}: {error.strerror or error}") from None
    if source == "project" and (not is_inside(resolved, root.resolve()) or is_sensitive(resolved)):
        raise SkillError(f"{SKILL_FILE} is a link out of the project or to a secret file")
    if size > MAX_SKILL_BYTES:
        raise SkillError(f"{SKILL_FILE} is larger than {MAX_SKILL_BYTES:,} bytes")
    return resolved.read_text(encoding="utf-8", errors="replace")


def skill_places(root: Path, config_dir: Path | None = None) -> list[tuple[Source, Path]]:
    return [
        ("builtin", BUILTIN_DIR),
        ("user", user_skills_dir(config_dir)),
        *(("project", root / place) for place in PROJECT_SKILL_DIRS),
    ]


def load_skill(directory: Path, source: Source, root: Path, pinned: dict[str, str]) -> Skill:
    """One folder as a skill: parsed, hashed, and (a project skill) its trust from ``pinned``."""
    try:
        digest = folder_digest(directory)
        name, description, _ = parse_skill(read_skill_file(directory, source, root))
    except (SkillError, OSError) as error:
        return Skill(directory.name, "", source, directory, "", "invalid", str(error))
    status: Status = "trusted"
    if source == "project":
        known = pinned.get(str(directory.resolve()))
        status = "trusted" if known == digest else "changed" if known else "untrusted"
    return Skill(name, description, source, directory, digest, status)


def discover(root: Path, pinned: dict[str, str], config_dir: Path | None = None) -> list[Skill]:
    """Every skill folder of the three places, offered or not (the sidebar lists them all). Blocking: it
    reads and hashes the folders (call it through ``asyncio.to_thread`` on the event loop)."""
    skills: list[Skill] = []
    for source, place in skill_places(root, config_dir):
        try:
            folders = sorted(path for path in place.iterdir() if (path / SKILL_FILE).exists())
        except OSError:
            continue
        skills += [load_skill(folder, source, root, pinned) for folder in folders[:MAX_SKILLS_PER_PLACE]]
    return skills


def offered(skills: list[Skill]) -> list[Skill]:
    """The trusted skills by name: a user skill replaces a built-in of its name, a project skill both."""
    by_name: dict[str, Skill] = {}
    for skill in skills:
        if skill.offered:
            by_name[skill.name] = skill
    return sorted(by_name.values(), key=lambda skill: skill.name)


def skills_section(skills: list[Skill]) -> str:
    """The system prompt's lines: names and descriptions only ("" without skills)."""
    chosen = offered(skills)
    if not chosen:
        return ""
    lines = [f"- {skill.name}: {skill.description}" for skill in chosen]
    return (
        "Skills (when one fits the task, call use_skill with its name first, then follow it):\n"
        + "\n".join(lines)
    )
