"""The tools hdsp-agent ships, assembled in one place for the server, the CLI and the README's reference."""

from __future__ import annotations

from typing import Any

from ..sandbox import Sandbox, sandbox_from_config
from .base import Tool
from .builtin import builtin_tools
from .declared import declared_tools
from .jupyter import notebook_tools
from .registry import ToolRegistry
from .state import ToolState


def default_tools(
    config: Any = None, state: ToolState | None = None, sandbox: Sandbox | None = None
) -> list[Tool[Any]]:
    """Every built-in tool; ``config`` (an ``HdspAgentConfig``) sets the ones that take settings and adds the
    tools it declares (custom Python tools, entry points, HTTP tools). ``state``: what the tools keep across
    calls, owned by the caller (the server or a CLI run), which also hands it to turn undo; a fresh one when
    not given. ``sandbox``: the OS sandbox shell commands run in (default: the one ``config`` describes; the
    server passes the one its policy knows)."""
    state = state if state is not None else ToolState()
    if config is None:
        builtins = builtin_tools(
            file_state=state.files,
            notebook_undo=state.notebooks.undo,
            process_tracker=state.processes,
            sandbox=sandbox,
        )
        return [*builtins, *notebook_tools(state.notebooks)]
    builtins = builtin_tools(
        sandbox=sandbox or sandbox_from_config(config),
        url_allowlist=list(config.url_allowlist),
        search_backend_url=config.search_backend_url or None,
        extra_secret_names=list(config.secret_env_names),
        file_state=state.files,
        notebook_undo=state.notebooks.undo,
        process_tracker=state.processes,
    )
    return [*builtins, *notebook_tools(state.notebooks), *declared_tools(config)]


def default_registry(
    config: Any = None, state: ToolState | None = None, sandbox: Sandbox | None = None
) -> ToolRegistry:
    return ToolRegistry(default_tools(config, state, sandbox))
