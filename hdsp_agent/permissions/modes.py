"""The permission modes a user switches between, and which tools each offers the model."""

from __future__ import annotations

from typing import Literal

from ..tools.registry import ToolFilter
from .defaults import is_read_tool

PermissionMode = Literal["default", "accept-edits", "read-only", "accept-edits-run", "plan"]
MODES: tuple[PermissionMode, ...] = ("default", "accept-edits", "read-only", "accept-edits-run", "plan")
# Accept edits, and run cells of the notebook in view without asking (``policy.RulePolicy``): never another
# notebook, a file or a shell command. Off unless the user picks it.
RUN_IN_VIEW_MODE: PermissionMode = "accept-edits-run"
# The tools that mode lets through for the notebook in view: running its cells, nothing else on the kernel.
RUN_IN_VIEW_TOOLS = frozenset({"run_cell"})
# Modes in which only read tools run: "plan" explores, writes its plan (the server saves it) and waits.
READ_ONLY_MODES: frozenset[str] = frozenset({"read-only", "plan"})


def accepts_edits(mode: str) -> bool:
    """Whether file and cell edits inside the root go through without asking in ``mode``."""
    return mode in ("accept-edits", RUN_IN_VIEW_MODE)


def mode_filter(mode: str) -> ToolFilter:
    """A catalog filter (``AgentRuntime.catalog_filter``) for ``mode``: read-only and plan offer only read
    tools."""
    if mode in READ_ONLY_MODES:
        return lambda tool: is_read_tool(tool.name, tool.read_only)
    return lambda tool: True
