"""What every session shares: registry, policy, models, settings, tool state; how to build a turn's parts.

The server and the headless CLI each build one ``AgentRuntime``; sessions ask it for a model client, an
executor wired to their approval broker, a tool context and the step's catalog.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..permissions.broker import ApprovalBroker
from ..permissions.decision import SessionPolicy
from ..permissions.policy import mode_filter
from ..tools.base import ToolContext
from ..tools.executor import ExecutorSettings, ToolExecutor
from ..tools.registry import ToolCatalog, ToolFilter, ToolRegistry
from ..tools.state import ToolState
from .llm import ModelClient, ModelSettings
from .loop import LoopSettings
from .models import ModelCatalog
from .prompts import RulesProvider, build_system_prompt, project_rules
from .undo import TurnUndo

ContextFactory = Callable[..., ToolContext]


@dataclass
class AgentRuntime:
    registry: ToolRegistry
    policy: SessionPolicy
    models: ModelCatalog
    context_factory: ContextFactory
    executor_settings: ExecutorSettings = field(default_factory=ExecutorSettings)
    max_steps: int = 25
    tool_call_limits: dict[str, int] = field(default_factory=dict)
    disabled_tools: list[str] = field(default_factory=list)
    rules_provider: RulesProvider | None = project_rules
    # Narrows the catalog (e.g. the read-only mode); None offers every available tool.
    catalog_filter: ToolFilter | None = None
    # Brings tools from outside up to date (MCP servers: connect lazily, re-list after list_changed).
    refresh_tools: Callable[[], Awaitable[None]] | None = None
    # Builds approval brokers; sessions keep one each so grants "for this session" stay in that session.
    broker_factory: Callable[[Callable[[BaseModel], Any]], ApprovalBroker] | None = None
    # What the tools keep across calls: the same object the registry's tools were built with
    # (``default_registry(config, state)``), so turn undo and "forget this conversation" see their histories.
    state: ToolState = field(default_factory=ToolState)

    def model_settings(self, name: str | None) -> ModelSettings:
        return self.models.get(name)

    # One client per model for the server's life: its HTTP connections are reused from turn to turn.
    _clients: dict[int, ModelClient] = field(default_factory=dict, init=False, repr=False)
    _undo: TurnUndo | None = field(default=None, init=False, repr=False)

    @property
    def undo(self) -> TurnUndo:
        """Turn-level undo over the file and notebook tools' histories."""
        if self._undo is None:
            self._undo = TurnUndo(self.state)
        return self._undo

    def model_client(self, settings: ModelSettings) -> ModelClient:
        client = self._clients.get(id(settings))
        if client is None:
            client = self._clients[id(settings)] = ModelClient(settings)
        return client

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()

    def loop_settings(self, settings: ModelSettings) -> LoopSettings:
        return LoopSettings(
            max_steps=self.max_steps,
            tool_call_limits=dict(self.tool_call_limits),
            context_window=settings.context_window,
            vision=settings.vision,
        )

    def executor(self, approver: ApprovalBroker) -> ToolExecutor:
        return ToolExecutor(
            self.registry, policy=self.policy, approver=approver, settings=self.executor_settings
        )

    def new_broker(self, emit: Callable[[BaseModel], Any]) -> ApprovalBroker:
        if self.broker_factory is not None:
            return self.broker_factory(emit)
        return ApprovalBroker()

    def tool_context(self, **overrides: Any) -> ToolContext:
        return self.context_factory(**overrides)

    def catalog(self, ctx: ToolContext) -> ToolCatalog:
        include = self.catalog_filter
        if ctx.session_id:  # the conversation's permission mode (read-only offers only the read tools)
            include = mode_filter(self.policy.mode_for(ctx.session_id))
        return self.registry.catalog(ctx, include=include, disabled=self.disabled_tools)

    def set_mode(self, session_id: str, mode: str) -> None:
        """The user switched the permission mode (default, accept-edits, read-only) for one conversation."""
        self.policy.set_mode(mode, session_id=session_id)

    async def forget_session(self, session_id: str) -> None:
        """A conversation was deleted: drop its grants and undo history, stop its background processes."""
        self.undo.forget(session_id)
        self.policy.forget_session(session_id)
        await self.state.processes.kill_session(session_id)

    async def prepare_catalog(self, ctx: ToolContext) -> ToolCatalog:
        """The catalog after tools from outside (MCP servers) are brought up to date; never raises for
        them."""
        if self.refresh_tools is not None:
            await self.refresh_tools()
        return self.catalog(ctx)

    def system_prompt(self, ctx: ToolContext) -> str:
        return build_system_prompt(Path(ctx.root_dir), ctx.client_context, self.rules_provider)
