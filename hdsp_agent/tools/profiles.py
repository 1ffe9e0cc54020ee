"""Which tools a step offers the model: a profile sized to its context window, narrowed by what is in play.

Every tool's schema is sent on every step, so a small local model (a 4k–16k window) cannot afford all of them.
A profile names the built-in tools offered; the context adds the notebook tools once a notebook is open or
named, and the web tools only when the administrator turned them on. A tool the profile leaves out stays
*callable by name* (results and error suggestions name them, e.g. "read on with read_file_range"); tools the
permission mode, availability or ``disabled_tools`` exclude are not callable at all.

MCP servers' tools are loaded on demand (``Tool.on_demand``): ``full`` sends every schema from the first step
(the servers connect when the turn starts); ``compact`` and ``standard`` send one small entry instead, the
``mcp_tools`` index, which connects a server when it is first needed and lists its tools in a line each, and
the model calls a tool by its name. A tool the conversation has used is offered from the next turn on (see
``tools_used``). Other tools that are not built in (declared tools, plugins; test tools) are offered in
``standard`` and ``full``; ``compact`` keeps the grouped ones (``server__tool``) callable by name only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, cast, get_args

from .base import Tool
from .facts import ProfileName
from .naming import GROUP_SEPARATOR

PROFILES: tuple[ProfileName, ...] = get_args(ProfileName)
AUTO = "auto"

# Windows up to these sizes (tokens) get the profile; larger ones get ``full``.
COMPACT_UP_TO = 16_384
STANDARD_UP_TO = 65_536

# The index of the MCP servers' tools (hdsp_agent/mcp/index.py): what compact and standard send instead of
# the servers' schemas. ``full`` sends the schemas themselves and keeps the index callable by name.
TOOL_INDEX = "mcp_tools"

# Which profiles offer a built-in tool is its own fact (``Tool.facts.profiles``): compact is one tool per
# need (editing by create_new_file and single_find_and_replace; notebooks by read, insert, edit and run),
# standard adds paging, finding, several edits in one call, review and the kernel tools, full offers all.


def profile_for_window(context_window: int) -> ProfileName:
    if context_window <= COMPACT_UP_TO:
        return "compact"
    if context_window <= STANDARD_UP_TO:
        return "standard"
    return "full"


def resolve_profile(setting: str | None, context_window: int) -> ProfileName:
    """The configured profile, or the one the window calls for when the setting is empty or ``auto``."""
    if setting and setting != AUTO:
        if setting not in PROFILES:
            raise ValueError(f"unknown tool profile {setting!r}: use auto, {', '.join(PROFILES)}")
        return cast(ProfileName, setting)
    return profile_for_window(context_window)


def offered_in(tool: Tool[Any], profile: ProfileName, *, notebook_in_play: bool, web_enabled: bool) -> bool:
    """Whether ``profile`` offers ``tool`` to the model (its schema is sent) in this context."""
    name = tool.name
    if tool.on_demand:
        return profile == "full"
    if name == TOOL_INDEX:
        return profile != "full"
    facts = tool.facts
    if facts is not None:
        if facts.needs == "notebook" and not notebook_in_play and profile != "full":
            return False
        if facts.needs == "web" and not web_enabled:
            return False
        return profile in facts.profiles
    # Not built in: an extension's grouped tool waits to be called by name in compact.
    return not (profile == "compact" and GROUP_SEPARATOR in name)


def notebook_in_play(client_context: dict[str, Any], messages: Iterable[dict[str, Any]]) -> bool:
    """A notebook is open (the active document) or named by the user or in a tool call of the conversation.

    Once true in a conversation it stays true (the messages only grow), so the tool list changes at most once.
    """
    document = client_context.get("active_document") or {}
    if str(document.get("path") or "").endswith(".ipynb"):
        return True
    for message in messages:
        role = message.get("role")
        if role == "user" and ".ipynb" in _text_of(message.get("content")):
            return True
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                if ".ipynb" in json.dumps(call.get("function", {}).get("arguments", "")):
                    return True
    return False


def tools_used(messages: Iterable[dict[str, Any]]) -> list[str]:
    """The tools the conversation has called, in the order of their first call.

    The order matters: tools used in a later turn are appended after those used before, so the bytes of
    the tool list the model saw up to then stay the same (servers with prefix caching keep reusing them).
    """
    used: dict[str, None] = {}
    for message in messages:
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                name = call.get("function", {}).get("name") if isinstance(call, dict) else None
                if isinstance(name, str) and name:
                    used.setdefault(name, None)
    return list(used)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""
