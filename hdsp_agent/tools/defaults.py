"""The tools hdsp-agent ships, assembled in one place for the server, the CLI and the README's reference."""

from __future__ import annotations

from typing import Any

from .base import Tool
from .builtin import builtin_tools
from .registry import ToolRegistry


def default_tools(config: Any = None) -> list[Tool[Any]]:
    """Every built-in tool; ``config`` (an ``HdspAgentConfig``) sets the ones that take settings."""
    return [*builtin_tools()]


def default_registry(config: Any = None) -> ToolRegistry:
    return ToolRegistry(default_tools(config))
