"""Tool names as providers accept them, and the ``group__export`` rule for tools that come in groups.

OpenAI and Anthropic accept ``^[a-zA-Z0-9_-]{1,64}$``. Tools from MCP servers, HTTP declarations and plugins
are named ``{group}__{export}``: the first ``__`` separates the parts, so neither part may contain one.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME_LENGTH = 64
GROUP_SEPARATOR = "__"
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
_RUNS_OF_UNDERSCORES = re.compile(r"_{2,}")


def is_valid_name(name: str) -> bool:
    return bool(_NAME_RE.match(name))


def sanitize_part(part: str) -> str:
    """One part of a name: invalid characters become ``_``, ``__`` collapses (the separator stays unique)."""
    cleaned = _INVALID_CHARS.sub("_", part.strip())
    cleaned = _RUNS_OF_UNDERSCORES.sub("_", cleaned).strip("_")
    return cleaned or "tool"


def group_tool_name(group: str, export: str) -> str:
    """``{group}__{export}``, sanitized and at most 64 characters.

    A name too long is cut and given a short hash of the full name, so two long exports of one group that
    share a prefix still get different names.
    """
    group_part, export_part = sanitize_part(group), sanitize_part(export)
    name = f"{group_part}{GROUP_SEPARATOR}{export_part}"
    if len(name) <= MAX_NAME_LENGTH:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    group_part = group_part[:24].rstrip("_")
    room = MAX_NAME_LENGTH - len(group_part) - len(GROUP_SEPARATOR) - 1 - len(digest)
    export_part = export_part[:room].rstrip("_")
    return f"{group_part}{GROUP_SEPARATOR}{export_part}_{digest}"


def split_tool_name(name: str) -> tuple[str | None, str]:
    """``("group", "export")`` for a grouped name, ``(None, name)`` for a plain one; splits at the first
    ``__``."""
    group, sep, export = name.partition(GROUP_SEPARATOR)
    if not sep:
        return None, name
    return group, export
