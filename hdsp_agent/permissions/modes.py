"""The permission modes a user switches between, and which tools each offers the model."""

from __future__ import annotations

from typing import Literal

from ..tools.registry import ToolFilter
from .defaults import is_read_tool

PermissionMode = Literal["default", "accept-edits", "read-only"]
MODES: tuple[PermissionMode, ...] = ("default", "accept-edits", "read-only")


def mode_filter(mode: str) -> ToolFilter:
    """A catalog filter (``AgentRuntime.catalog_filter``) for ``mode``: read-only offers only read tools."""
    if mode == "read-only":
        return lambda tool: is_read_tool(tool.name, tool.read_only)
    return lambda tool: True
