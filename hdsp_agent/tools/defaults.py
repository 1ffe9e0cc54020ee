"""The tools hdsp-agent ships, assembled in one place for the server, the CLI and the README's reference."""

from __future__ import annotations

from typing import Any

from ..sandbox import Sandbox, sandbox_from_config
from .base import Tool
from .builtin import builtin_tools
from .builtin.processes import ProcessTracker
from .declared import declared_tools
from .jupyter import notebook_tools
from .registry import ToolRegistry


def default_tools(config: Any = None, sandbox: Sandbox | None = None) -> list[Tool[Any]]:
    """Every built-in tool; ``config`` (an ``HdspAgentConfig``) sets the ones that take settings and adds the
    tools it declares (custom Python tools, entry points, HTTP tools). ``sandbox``: the OS sandbox shell
    commands run in (default: the one ``config`` describes; the server passes the one its policy knows)."""
    if config is None:
        return [*builtin_tools(sandbox=sandbox), *notebook_tools()]
    builtins = builtin_tools(
        sandbox=sandbox or sandbox_from_config(config),
        url_allowlist=list(config.url_allowlist),
        search_backend_url=config.search_backend_url or None,
        process_tracker=ProcessTracker(),
        extra_secret_names=list(config.secret_env_names),
    )
    return [*builtins, *notebook_tools(), *declared_tools(config)]


def default_registry(config: Any = None, sandbox: Sandbox | None = None) -> ToolRegistry:
    return ToolRegistry(default_tools(config, sandbox))
