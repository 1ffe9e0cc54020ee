"""The permission modes a user switches between, and which tools each offers the model."""

from __future__ import annotations

from typing import Literal

from ..tools.registry import ToolFilter
from .defaults import is_read_tool

PermissionMode = Literal["default", "accept-edits", "read-only", "plan"]
MODES: tuple[PermissionMode, ...] = ("default", "accept-edits", "read-only", "plan")
# Modes in which only read tools run: "plan" explores, writes its plan (the server saves it) and waits.
READ_ONLY_MODES: frozenset[str] = frozenset({"read-only", "plan"})


def mode_filter(mode: str) -> ToolFilter:
    """A catalog filter (``AgentRuntime.catalog_filter``) for ``mode``: read-only and plan offer only read
    tools."""
    if mode in READ_ONLY_MODES:
        return lambda tool: is_read_tool(tool.name, tool.read_only)
    return lambda tool: True
