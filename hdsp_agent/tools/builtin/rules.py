"""Project rules: ``create_rule_block``, ``request_rule`` (Continue's names and parameters), and the loader
the
system prompt uses.

A rule is a Markdown file with YAML front matter under ``.hdsp/rules/`` (``.continue/rules/`` is read too, so
a
project's Continue rules apply unchanged)::

    ---
    name: Type hints
    description: Python style
    globs: "**/*.py"
    alwaysApply: false
    ---
    Add type hints to every function.

When a rule applies (as in Continue): ``alwaysApply: true`` → always; otherwise a rule with ``globs`` and/or
``regex`` applies when a file in play matches the globs (and its content matches the regex); a rule with
neither
applies unless ``alwaysApply: false``, which leaves it to be fetched on demand with ``request_rule``.
"""

from __future__ import annotations

import asyncio
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec
import yaml
from pydantic import Field

from ...instruction_places import INSTRUCTION_FILES, RULE_DIRS, RULES_DIR
from ...permissions.paths import display_path, is_inside, is_sensitive
from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template, user_text
from ..base import PermissionAction, PermissionKind, Tool, ToolArgs, ToolContext, ToolError

# An instruction file longer than this is cut: it goes into every request of every turn.
MAX_INSTRUCTIONS_CHARS = 16_000
# Regex rules look at file contents; a huge file is not worth reading for it.
_MAX_REGEX_SCAN_BYTES = 1024 * 1024
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)
_BRACES = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class Rule:
    name: str
    rule: str
    path: Path
    description: str | None = None
    globs: tuple[str, ...] = ()
    regex: str | None = None
    always_apply: bool | None = None
    problems: tuple[str, ...] = field(default=(), compare=False)

    def applies_to(self, root: Path, paths_in_play: Sequence[Path | str]) -> bool:
        if self.always_apply:
            return True
        if not self.globs and not self.regex:
            return self.always_apply is None
        candidates = [path for path in (_relative(root, path) for path in paths_in_play) if path is not None]
        if self.globs:
            spec = pathspec.GitIgnoreSpec.from_lines(expand_braces(self.globs))
            candidates = [path for path in candidates if spec.match_file(path)]
        if not self.regex:
            return bool(candidates)
        try:
            pattern = re.compile(self.regex, re.MULTILINE)
        except re.error:
            return False
        return any(_content_matches(root / path, pattern) for path in candidates)

    def as_prompt(self) -> str:
        """The rule as the system prompt shows it."""
        return f"<rule name={self.name!r}>\n{self.rule.strip()}\n</rule>"


def _relative(root: Path, path: Path | str) -> str | None:
    """``path`` relative to the root (None when it lies outside: such a file is not in play)."""
    candidate = Path(path)
    if not candidate.is_absolute():
        return candidate.as_posix()
    resolved_root = root.resolve()
    resolved = candidate.resolve()
    return display_path(resolved, resolved_root) if is_inside(resolved, resolved_root) else None


def _content_matches(path: Path, pattern: re.Pattern[str]) -> bool:
    try:
        with open(path, "rb") as handle:
            text = handle.read(_MAX_REGEX_SCAN_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    return pattern.search(text) is not None


def expand_braces(globs: Iterable[str]) -> list[str]:
    """``**/*.{ts,tsx}`` → ``**/*.ts``, ``**/*.tsx`` (gitignore patterns have no braces; rule globs often
    do)."""
    expanded: list[str] = []
    pending = list(globs)
    while pending:
        glob = pending.pop(0)
        match = _BRACES.search(glob)
        if match is None:
            expanded.append(glob)
            continue
        pending[:0] = [
            glob[: match.start()] + option + glob[match.end() :] for option in match.group(1).split(",")
        ]
    return expanded


def _globs_of(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else str(value).split(",")
    return tuple(str(item).strip() for item in items if str(item).strip())


def parse_rule(path: Path) -> Rule:
    text = path.read_text(encoding="utf-8", errors="replace")
    meta: dict[str, Any] = {}
    problems: list[str] = []
    body = text
    match = _FRONT_MATTER.match(text)
    if match:
        body = text[match.end() :]
        try:
            loaded = yaml.safe_load(match.group(1))
            meta = loaded if isinstance(loaded, dict) else {}
        except yaml.YAMLError as error:
            problems.append(f"invalid front matter: {error}")
    always = meta.get("alwaysApply")
    return Rule(
        name=str(meta.get("name") or path.stem),
        rule=body.strip(),
        path=path,
        description=str(meta["description"]) if meta.get("description") else None,
        globs=_globs_of(meta.get("globs")),
        regex=str(meta["regex"]) if meta.get("regex") else None,
        always_apply=always if isinstance(always, bool) else None,
        problems=tuple(problems),
    )


def _readable_rule_file(root: Path, path: Path, names: Mapping[tuple[int, int], int]) -> bool:
    """A rule file goes into the system prompt, so into every request: one that is a link to a file outside
    the project, to a secret (``AGENTS.md -> ~/.ssh/id_rsa``), into ``.git/`` (``CLAUDE.md -> .git/config``,
    with its credentials) or to a notebook (its outputs) would send that file to the model. So a link is
    followed only to a target inside the root that is none of these.

    A hard link is the same file under two names, and the other name cannot be seen from this one: a
    regular file with more names than the rule files found (``names``: how many of them are each file) is
    not read — ``ln AGENTS.md CLAUDE.md`` is fine, ``ln .git/config CLAUDE.md`` is not."""
    try:
        resolved = path.resolve(strict=True)
        info = resolved.stat()
    except OSError:
        return False
    resolved_root = root.resolve()
    if not resolved.is_file() or not is_inside(resolved, resolved_root) or is_sensitive(resolved):
        return False
    inside = resolved.relative_to(resolved_root).parts
    if any(part.lower() == ".git" for part in inside[:-1]) or resolved.suffix.lower() == ".ipynb":
        return False
    return info.st_nlink <= names.get((info.st_dev, info.st_ino), 1)


def _names_per_file(paths: Iterable[Path]) -> dict[tuple[int, int], int]:
    """How many of ``paths`` are names of each file (device and inode); a symbolic link is not a name."""
    counts: dict[tuple[int, int], int] = {}
    for path in set(paths):
        try:
            info = path.lstat()
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        counts[(info.st_dev, info.st_ino)] = counts.get((info.st_dev, info.st_ino), 0) + 1
    return counts


def instruction_rule(path: Path) -> Rule:
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    if len(text) > MAX_INSTRUCTIONS_CHARS:
        text = text[:MAX_INSTRUCTIONS_CHARS] + f"\n... ({path.name} is cut here: it is longer than the limit)"
    return Rule(name=path.name, rule=text, path=path, always_apply=True)


def load_rules(root: Path) -> list[Rule]:
    """Every rule of the project: the root's instruction files (AGENTS.md, CLAUDE.md, .cursorrules), then
    ``.hdsp/rules`` and ``.continue/rules`` in file-name order."""
    instructions = [root / name for name in INSTRUCTION_FILES if (root / name).is_file()]
    rule_files = [
        path
        for directory in RULE_DIRS
        if (root / directory).is_dir()
        for path in sorted((root / directory).rglob("*.md"))
    ]
    names = _names_per_file([*instructions, *rule_files])
    rules: list[Rule] = []
    for path in instructions:
        if _readable_rule_file(root, path, names):
            try:
                rules.append(instruction_rule(path))
            except OSError:
                continue
    for path in rule_files:
        if not _readable_rule_file(root, path, names):
            continue
        try:
            rules.append(parse_rule(path))
        except OSError:
            continue
    return rules


def applicable_rules(root: Path, paths_in_play: Sequence[Path | str] = ()) -> list[Rule]:
    """The rules for the system prompt, given the files in play (open, selected, mentioned), relative or
    absolute.

    Blocking (reads rule files and, for regex rules, the files in play): call it through
    ``asyncio.to_thread``.
    """
    return [rule for rule in load_rules(root) if rule.applies_to(root, paths_in_play)]


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:60].strip("-") or "rule"


def render_rule_file(
    name: str,
    rule: str,
    description: str | None = None,
    globs: str | None = None,
    regex: str | None = None,
    always_apply: bool | None = None,
) -> str:
    meta: dict[str, Any] = {"name": name}
    if description:
        meta["description"] = description
    if globs:
        meta["globs"] = globs
    if regex:
        meta["regex"] = regex
    if always_apply is not None:
        meta["alwaysApply"] = always_apply
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{front}---\n\n{rule.strip()}\n"


class CreateRuleBlockArgs(ToolArgs):
    name: str = Field(description="Short name, e.g. 'Type hints'.")
    rule: str = Field(description="One imperative instruction.")
    description: str | None = Field(default=None, description="When the rule applies.")
    globs: str | None = Field(
        default=None,
        description="Files it applies to, e.g. '**/*.py'.",
    )
    regex: str | None = Field(default=None, description="Applies to files whose content matches.")
    alwaysApply: bool | None = Field(
        default=None,
        description="Always in context (default: unless globs/regex are set).",
    )


class CreateRuleBlockTool(Tool[CreateRuleBlockArgs]):
    name = "create_rule_block"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It writes a rule file into the project"),
        changes="other",
        profiles=frozenset({"full"}),
        words=ToolWords(
            question=user_template("Save a rule the agent follows in every chat?"),
            statement=user_template("Save a rule"),
        ),
    )
    description = "Save a lasting project rule: a standard or preference the user wants kept in future chats."
    args_model = CreateRuleBlockArgs
    read_only = False

    def permission(self, args: CreateRuleBlockArgs, ctx: ToolContext) -> PermissionAction:
        path = (RULES_DIR / f"{slugify(args.name)}.md").as_posix()
        return PermissionAction(
            PermissionKind.FILE_WRITE, target=path, detail=f"rule: {args.rule.strip()[:200]}"
        )

    async def run(self, args: CreateRuleBlockArgs, ctx: ToolContext) -> str:
        if not args.rule.strip():
            raise ToolError(
                "E_EMPTY_RULE",
                user_text("the rule text is empty"),
                user_text("Write the instruction in `rule`."),
            )
        if args.regex:
            try:
                re.compile(args.regex)
            except re.error as error:
                raise ToolError(
                    "E_INVALID_REGEX",
                    user_text("invalid regex %1: %2", repr(args.regex), error),
                    user_text("Fix the regex."),
                ) from None
        relative = RULES_DIR / f"{slugify(args.name)}.md"
        text = render_rule_file(
            args.name, args.rule, args.description, args.globs, args.regex, args.alwaysApply
        )
        replaced = await asyncio.to_thread(_write, ctx.root_dir / relative, text)
        verb = "Updated" if replaced else "Created"
        return f"{verb} rule {args.name!r} in {relative.as_posix()}."


def _write(path: Path, text: str) -> bool:
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return existed


class RequestRuleArgs(ToolArgs):
    name: str = Field(description="The rule's name.")


class RequestRuleTool(Tool[RequestRuleArgs]):
    name = "request_rule"
    facts = ToolFacts(
        level="deny",
        changes="other",
        profiles=frozenset({"full", "standard"}),
        words=ToolWords(
            question=user_template("Read a project rule?"),
            statement=user_template("Read a project rule"),
        ),
    )
    description = "Read a project rule by name (one not already in your context)."
    args_model = RequestRuleArgs
    read_only = True

    async def run(self, args: RequestRuleArgs, ctx: ToolContext) -> str:
        rules = await asyncio.to_thread(load_rules, ctx.root_dir)
        wanted = args.name.strip().lower()
        for rule in rules:
            if wanted in (rule.name.lower(), rule.path.stem.lower(), slugify(rule.name)):
                header = f"Rule {rule.name!r}" + (f" ({rule.description})" if rule.description else "")
                return f"{header}:\n{rule.rule}"
        available = ", ".join(repr(rule.name) for rule in rules) or "none"
        raise ToolError(
            "E_RULE_NOT_FOUND",
            user_text("no rule named %1", repr(args.name)),
            user_text("Available rules: %1.", available),
        )
