"""Permission rules as people write them: ``tool`` or ``tool(pattern)``, and how a pattern matches a call.

- ``run_terminal_command(git status*)``: a command pattern is matched word by word against the *parsed*
  command, as a prefix (``git status`` also matches ``git status --short``); each word is a glob; it is
  matched against every part of a compound command separately, so ``git*`` never covers the ``rm`` in
  ``git status; rm -rf ~``.
- ``read_file(**/.env*)``, ``create_new_file(src/**)``: a path pattern is a glob on the path relative to the
  root (or absolute, when the pattern starts with ``/`` or ``~``): ``*`` and ``?`` stay within one directory,
  ``**`` crosses directories, ``**/`` also matches no directory at all.
- ``fetch_url_content(https://docs.python.org/*)``: URLs and other text are matched with ``fnmatch`` (``*``
  matches anything, ``/`` included).
- ``myserver__*``: the tool name itself may be a glob, for a whole group of MCP tools.

A pattern with no wildcard names one subject exactly; ``glob_escape`` turns a subject into such a pattern (how
"always allow" is persisted). Exact rules carry more weight in the policy: they lift the cautions a broad rule
does not.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

SubjectKind = Literal["command", "path", "url", "text"]
RuleSource = Literal["admin", "user", "default"]

_RULE_SYNTAX = re.compile(r"^\s*(?P<tool>[A-Za-z0-9_\-*?\[\]]+)\s*(?:\((?P<pattern>.*)\))?\s*$", re.DOTALL)


class RuleError(ValueError):
    """A rule that cannot be read; the message says what is wrong and shows the expected form."""


@dataclass(frozen=True)
class Subject:
    """What a rule's pattern is matched against for one call (or one part of a shell command)."""

    kind: SubjectKind
    text: str
    # The parsed words of one command part; None for unparsed text (then only exact rules can match it).
    argv: tuple[str, ...] | None = None
    # For paths: the forms to match (relative to the root when inside it, and absolute).
    relative: str | None = None
    absolute: str | None = None


@dataclass(frozen=True)
class Rule:
    text: str
    tool: str
    pattern: str | None
    source: RuleSource = "user"

    @classmethod
    def parse(cls, text: str, source: RuleSource = "user") -> Rule:
        found = _RULE_SYNTAX.match(text)
        if found is None:
            raise RuleError(
                f"cannot read the rule {text!r}: write a tool name, optionally with a pattern in "
                "parentheses, e.g. run_terminal_command(git status*), read_file(**/.env*) or myserver__*"
            )
        pattern = found.group("pattern")
        return cls(
            text.strip(),
            found.group("tool"),
            pattern.strip() if pattern and pattern.strip() else None,
            source,
        )

    def covers_tool(self, tool_name: str) -> bool:
        return fnmatchcase(tool_name, self.tool)

    def matches(self, tool_name: str, subject: Subject | None) -> bool:
        """Whether this rule applies to a call of ``tool_name`` about ``subject``."""
        if not self.covers_tool(tool_name):
            return False
        if self.pattern is None:
            return True
        if subject is None:
            return False
        if self.is_exact_for(subject):
            return True
        if subject.kind == "command":
            return subject.argv is not None and _command_matches(self.pattern, subject.argv)
        if subject.kind == "path":
            return _path_matches(self.pattern, subject)
        if subject.kind == "url":
            bare = subject.text.split("://", 1)[-1]
            return fnmatchcase(subject.text, self.pattern) or (
                "://" not in self.pattern and fnmatchcase(bare, self.pattern)
            )
        return fnmatchcase(subject.text, self.pattern)

    def is_exact_for(self, subject: Subject) -> bool:
        """Whether the pattern has no wildcard and names exactly this subject (as "always allow" saves it)."""
        if self.pattern is None:
            return False
        named = literal_text(self.pattern)
        if named is None:
            return False
        if subject.kind == "path":
            return _normal_path(named) in {subject.relative, subject.absolute, _normal_path(subject.text)}
        return named.strip() == subject.text.strip()


def parse_rules(texts: list[str] | tuple[str, ...], source: RuleSource) -> tuple[list[Rule], list[str]]:
    """The rules that parse, and a message for each that does not (for ``policy show`` and the log)."""
    rules: list[Rule] = []
    problems: list[str] = []
    for text in texts:
        try:
            rules.append(Rule.parse(str(text), source))
        except RuleError as error:
            problems.append(str(error))
    return rules, problems


def glob_escape(text: str) -> str:
    """``text`` as a pattern that matches only itself (``*`` → ``[*]``)."""
    return "".join(f"[{char}]" if char in "*?[" else char for char in text)


def literal_text(pattern: str) -> str | None:
    """The one string ``pattern`` matches, or None if it has wildcards (``[*]`` is a literal ``*``)."""
    chars: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char in "*?":
            return None
        if char == "[":
            close = pattern.find("]", index + 2)
            inner = pattern[index + 1 : close] if close > 0 else ""
            if len(inner) != 1 or inner in "!^":
                return None
            chars.append(inner)
            index = close + 1
            continue
        chars.append(char)
        index += 1
    return "".join(chars)


def rule_for_subject(tool_name: str, subject_text: str | None) -> str:
    """The rule that allows exactly this call again: ``tool(escaped subject)``, or ``tool`` without one."""
    if not subject_text or not subject_text.strip():
        return tool_name
    return f"{tool_name}({glob_escape(subject_text.strip())})"


# -- matching
# ----------------------------------------------------------------------------------------------------


def _command_matches(pattern: str, argv: tuple[str, ...]) -> bool:
    try:
        words = shlex.split(pattern)
    except ValueError:
        return False
    if not words:
        return False
    for index, word in enumerate(words):
        if index == len(words) - 1 and word == "*":
            return True  # a trailing lone * stands for any further words, or none
        if index >= len(argv) or not fnmatchcase(argv[index], word):
            return False
    return True  # a prefix: the command may have more words


def _path_matches(pattern: str, subject: Subject) -> bool:
    if pattern.startswith(("/", "~")):
        expanded = os.path.expanduser(pattern)
        return subject.absolute is not None and _path_regex(expanded).match(subject.absolute) is not None
    forms = [form for form in (subject.relative, _normal_path(subject.text)) if form]
    if pattern.startswith("**") and subject.absolute:
        forms.append(subject.absolute.lstrip("/"))
    regex = _path_regex(_normal_path(pattern))
    return any(regex.match(form) for form in forms)


def _normal_path(text: str) -> str:
    normalized = os.path.normpath(text.replace("\\", "/")) if text else text
    return normalized[2:] if normalized.startswith("./") else normalized


@functools.lru_cache(maxsize=512)
def _path_regex(pattern: str) -> re.Pattern[str]:
    """A glob where ``*``/``?`` stay inside one path segment and ``**`` crosses segments."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        elif pattern[index] == "[" and pattern.find("]", index + 2) > 0:
            close = pattern.find("]", index + 2)
            inner = pattern[index + 1 : close]
            negate = inner[:1] in ("!", "^")
            body = re.escape(inner[1:] if negate else inner).replace("\\-", "-")
            out.append(f"[{'^/' if negate else ''}{body}]")
            index = close + 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)
