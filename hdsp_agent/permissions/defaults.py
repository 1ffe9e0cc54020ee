"""Each tool's default level, and what a call is about when only its name and arguments are known.

The levels are the built-in tools' own (``Tool.facts``, tools/facts.py: allow, ask with its reason, or deny),
so ``hdsp-agent policy check`` decides for every built-in tool by name. Tools without facts: MCP tools
(``server__tool``) ask, registered tools that declare themselves read-only are allowed, anything else asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..tools.base import PermissionAction, PermissionKind
from ..tools.facts import ToolFacts, known_facts
from ..tools.naming import GROUP_SEPARATOR
from ..tools.profiles import TOOL_INDEX
from ..user_text import UserText, user_text
from .paths import display_path, inspect_path, read_action, write_action
from .rules import Subject, SubjectKind

if TYPE_CHECKING:  # decision.py builds its default policy on this module
    from .decision import DecisionKind


def _facts() -> Mapping[str, ToolFacts]:
    # Read on the first decision, not at import: the tool modules import this package's helpers.
    return known_facts()


def _named(wanted: Any) -> frozenset[str]:
    return frozenset(name for name, facts in _facts().items() if wanted(facts))


def read_tools() -> frozenset[str]:
    """The built-in tools allowed without asking: they only read."""
    return _named(lambda facts: facts.level == "allow")


def edit_tools() -> frozenset[str]:
    """The edits accept-edits mode lets through (inside the root, away from .git and secrets)."""
    return _named(lambda facts: facts.changes in ("file_edit", "cell_edit"))


def table_tools() -> frozenset[str]:
    """Every tool that declares its level."""
    return frozenset(_facts())


# Where a call's rule subject is found in its arguments when the tool reported no action (DESIGN.md §4).
SUBJECT_FIELDS = ("filepath", "dirPath", "path", "command", "url", "query", "directory_path")
_READ_PATH_FIELDS = ("filepath", "dirPath", "path", "directory_path")
_PATH_FIELDS = frozenset(_READ_PATH_FIELDS)


def is_group_tool(tool_name: str) -> bool:
    """Tools from outside (MCP servers, plugins) are named ``group__export``."""
    return GROUP_SEPARATOR in tool_name.strip("_")


def default_level(tool_name: str, read_only: bool | None) -> tuple[DecisionKind, str]:
    """The level a tool has when no rule speaks about it, and why (``read_only``: None when unregistered)."""
    facts = _facts().get(tool_name)
    if facts is not None and facts.level == "deny":
        return "deny", user_text("%1 is disabled by default (enable it with an allow or ask rule)", tool_name)
    if facts is not None and facts.level == "allow":
        return "allow", user_text("%1 only reads", tool_name)
    if facts is not None and facts.ask_reason:
        return "ask", UserText(facts.ask_reason)
    if is_group_tool(tool_name):
        # An MCP tool is read_only only when the user's own server entry lists it in autoApprove, a declared
        # tool when its declaration says readOnly: the user's word, not the server's.
        if read_only:
            return "allow", user_text("%1 is auto-approved in its server's configuration", tool_name)
        return "ask", user_text("%1 comes from an external server (MCP); its tools ask by default", tool_name)
    if read_only:
        return "allow", user_text("%1 declares that it only reads", tool_name)
    return "ask", user_text("%1 is not a known tool; unknown tools ask", tool_name)


def is_read_tool(tool_name: str, read_only: bool | None) -> bool:
    """Whether read-only mode keeps this tool: the table's read tools, or registered tools that say they only
    read (never a tool from an outside server on its own say-so)."""
    facts = _facts().get(tool_name)
    if (facts is not None and facts.level == "deny") or tool_name == TOOL_INDEX:
        return False  # the MCP index lists tools this mode does not offer: it would only start servers
    if facts is not None and facts.level == "allow":
        return True
    return bool(read_only) and not is_group_tool(tool_name)


def derive_action(tool_name: str, arguments: dict[str, Any], root: Path) -> PermissionAction | None:
    """The action a tool would report, for tools that are not registered here (``policy check`` only)."""
    if tool_name == "run_terminal_command":
        return PermissionAction(PermissionKind.EXECUTE, str(arguments.get("command", "")))
    if tool_name == "fetch_url_content":
        return PermissionAction(PermissionKind.NETWORK, str(arguments.get("url", "")))
    if tool_name == "search_web":
        return PermissionAction(PermissionKind.NETWORK, str(arguments.get("query", "")))
    path = _first(arguments, _READ_PATH_FIELDS)
    facts = _facts().get(tool_name)
    changes = facts.changes if facts is not None else None
    if changes in ("file_edit", "cell_edit"):
        return write_action(root, path or "")
    if changes == "kernel":
        return PermissionAction(PermissionKind.KERNEL, path or "", str(arguments.get("code", "")))
    reads = facts is not None and facts.level == "allow"
    if path is not None and (reads or not is_group_tool(tool_name)):
        return read_action(root, path)
    return None


def subject_text(action: PermissionAction | None, arguments: dict[str, Any]) -> tuple[str | None, str | None]:
    """(the rule subject, the argument it came from): ``action.target`` when there is an action, else the
    first of ``SUBJECT_FIELDS`` present in the arguments."""
    if action is not None and action.target:
        return action.target, None
    for name in SUBJECT_FIELDS:
        value = arguments.get(name)
        if isinstance(value, str) and value:
            return value, name
    return None, None


def subject_kind(
    action: PermissionAction | None, field_name: str | None, tool_name: str
) -> SubjectKind | None:
    """How a rule pattern matches the subject: as a shell command, a path, a URL or plain text."""
    if action is not None and action.target:
        if action.kind == PermissionKind.EXECUTE:
            return "command"
        if action.kind == PermissionKind.NETWORK:
            # A network action's target is a URL, except for searches, which report their query.
            looks_like_url = "://" in action.target and not any(c.isspace() for c in action.target.strip())
            return (
                "url"
                if tool_name == "fetch_url_content" or (looks_like_url and tool_name != "search_web")
                else "text"
            )
        if action.kind == PermissionKind.CUSTOM:
            return "text"
        return "path"
    if field_name is None:
        return None
    if field_name in _PATH_FIELDS:
        return "path"
    kinds: dict[str, SubjectKind] = {"command": "command", "url": "url"}
    return kinds.get(field_name, "text")


def make_subject(kind: SubjectKind | None, text: str | None, root: Path) -> Subject | None:
    if kind is None or text is None:
        return None
    if kind != "path":
        return Subject(kind, text)
    facts = inspect_path(root, text)
    if facts.resolved is None:
        return Subject("path", text)
    relative = display_path(facts.resolved, root) if facts.inside else None
    return Subject("path", text, relative=relative, absolute=facts.resolved.as_posix())


def _first(arguments: dict[str, Any], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str):
            return value
    return None
