"""The tools hdsp-agent ships, assembled in one place for the server, the CLI and the README's reference."""

from __future__ import annotations

from typing import Any

from .base import Tool
from .builtin import builtin_tools
from .declared import declared_tools
from .jupyter import notebook_tools
from .registry import ToolRegistry


def default_tools(config: Any = None) -> list[Tool[Any]]:
    """Every built-in tool; ``config`` (an ``HdspAgentConfig``) sets the ones that take settings and adds the
    tools it declares (custom Python tools, entry points, HTTP tools)."""
    tools = [*builtin_tools(), *notebook_tools()]
    if config is not None:
        tools.extend(declared_tools(config))
    return tools


def default_registry(config: Any = None) -> ToolRegistry:
    return ToolRegistry(default_tools(config))
