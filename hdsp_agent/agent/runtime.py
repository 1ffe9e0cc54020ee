"""What every session shares: registry, policy, models, settings, tool state; how to build a turn's parts.

The server and the headless CLI each build one ``AgentRuntime``; sessions ask it for a model client, an
executor wired to their approval broker, a tool context and the step's catalog.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

from ..audit.log import AuditSink
from ..permissions.approval import Approver
from ..permissions.broker import ApprovalBroker
from ..permissions.decision import SessionPolicy
from ..permissions.policy import mode_filter
from ..tools.base import ToolContext
from ..tools.definitions import to_openai
from ..tools.executor import ExecutorSettings, ToolExecutor
from ..tools.profiles import ProfileName, notebook_in_play, offered_in, resolve_profile
from ..tools.registry import ToolCatalog, ToolFilter, ToolRegistry
from ..tools.state import ConversationState, ToolState
from .context_budget import prefix_tokens
from .context_window import detect_context_window
from .llm import DEFAULT_CONTEXT_WINDOW, ModelClient, ModelSettings
from .loop import LoopSettings
from .models import ModelCatalog
from .prompts import (
    RulesProvider,
    SkillsProvider,
    build_system_prompt,
    project_rules,
    project_skills,
    rules_section,
)
from .quotas import Quotas, UsageMeter
from .readiness import ReadinessStore
from .text_tools import with_tool_descriptions
from .tool_support import server_tool_support
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
    # Offer the web tools (the administrator turned them on); off, they stay callable by name.
    web_tools: bool = False
    # Warn when the system prompt and tool schemas take more than this share of the context window.
    context_warning_share: float = 0.5
    rules_provider: RulesProvider | None = project_rules
    # The skills' names and descriptions for the system prompt (bodies come by ``use_skill``); None: none.
    skills_provider: SkillsProvider | None = project_skills
    # Narrows the catalog (e.g. the read-only mode); None offers every available tool.
    catalog_filter: ToolFilter | None = None
    # Brings every tool from outside up to date (MCP servers: connect, re-list after list_changed). Awaited
    # at the start of a turn only in the full profile, which sends every MCP tool's schema.
    refresh_tools: Callable[[], Awaitable[None]] | None = None
    # Makes the named tools from outside callable if they can be (connects and lists the MCP servers they
    # belong to, when not listed yet); True when the registry changed. Used for tools loaded on demand.
    load_tools: Callable[[Sequence[str]], Awaitable[bool]] | None = None
    # Builds approval brokers; sessions keep one each so grants "for this session" stay in that session.
    broker_factory: Callable[[Callable[[BaseModel], Any]], ApprovalBroker] | None = None
    # The server's audit log (every tool call and model call) and the user's quotas; None: neither.
    audit: AuditSink | None = None
    quotas: Quotas = field(default_factory=Quotas)
    # What the tools keep across calls: the same object the registry's tools were built with
    # (``default_registry(config, state)``), so turn undo and "forget this conversation" see their histories.
    state: ToolState = field(default_factory=ToolState)
    # The readiness checks run from the setup form; their verdict on tool calls decides the "auto" mode.
    readiness: ReadinessStore | None = None

    def model_settings(self, name: str | None) -> ModelSettings:
        return self.models.get(name)

    # One client per model for the server's life: its HTTP connections are reused from turn to turn.
    _clients: dict[int, ModelClient] = field(default_factory=dict, init=False, repr=False)
    _undo: TurnUndo | None = field(default=None, init=False, repr=False)
    # For asking servers their context window: one client for the server's life (a new one per conversation
    # would load the CA bundle each time, on the way to the chat's first token).
    _probe_client: httpx.AsyncClient | None = field(default=None, init=False, repr=False)
    # Models whose tool-call mode was resolved (resolve_tool_mode).
    _tool_modes: set[int] = field(default_factory=set, init=False, repr=False)

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
        if self._probe_client is not None:
            await self._probe_client.aclose()
            self._probe_client = None

    async def context_window(self, settings: ModelSettings) -> int:
        """The configured window, else the one the server reports, else the default. Conversations ask once
        (the server may load another model, or the same one with another window, between conversations)."""
        if settings.context_window > 0:
            return settings.context_window
        if self._probe_client is None:
            self._probe_client = httpx.AsyncClient(trust_env=True)
        return await detect_context_window(settings, client=self._probe_client) or DEFAULT_CONTEXT_WINDOW

    async def resolve_tool_mode(self, settings: ModelSettings) -> str:
        """Native or text tool calls for this model, decided once per model (a client that later meets a
        refusal of ``tools`` switches itself to text). The configured mode wins; for "auto": the latest
        readiness check, else what the server says about the model (tool_support.py), else native."""
        client = self.model_client(settings)
        if id(settings) in self._tool_modes:
            return client.tool_mode
        self._tool_modes.add(id(settings))
        if settings.tool_calls in ("native", "text"):
            client.tool_mode = settings.tool_calls
            return client.tool_mode
        report = self.readiness.get(settings.resolved_base_url(), settings.model) if self.readiness else None
        if report and report.get("tool_mode") in ("native", "text"):
            client.tool_mode = str(report["tool_mode"])
            return client.tool_mode
        if self._probe_client is None:
            self._probe_client = httpx.AsyncClient(trust_env=True)
        if await server_tool_support(settings, self._probe_client) is False:
            client.tool_mode = "text"
        return client.tool_mode

    def loop_settings(self, settings: ModelSettings, context_window: int | None = None) -> LoopSettings:
        return LoopSettings(
            max_steps=self.max_steps,
            tool_call_limits=dict(self.tool_call_limits),
            context_window=context_window or settings.context_window or DEFAULT_CONTEXT_WINDOW,
            vision=settings.vision,
            context_warning_share=self.context_warning_share,
        )

    def executor(self, approver: Approver) -> ToolExecutor:
        return ToolExecutor(
            self.registry,
            policy=self.policy,
            approver=approver,
            settings=self.executor_settings,
            on_audit=self.audit,
        )

    def usage_meter(self, settings: ModelSettings, session_id: str) -> UsageMeter:
        return UsageMeter(self.quotas, settings.label, session_id, self.audit)

    def new_broker(self, emit: Callable[[BaseModel], Any]) -> ApprovalBroker:
        if self.broker_factory is not None:
            return self.broker_factory(emit)
        return ApprovalBroker()

    def tool_context(self, **overrides: Any) -> ToolContext:
        return self.context_factory(**overrides)

    def catalog(
        self,
        ctx: ToolContext,
        profile: ProfileName | None = None,
        messages: list[dict[str, Any]] | None = None,
        in_use: Sequence[str] = (),
    ) -> ToolCatalog:
        """The tools callable in this step. With a ``profile``, only those it offers in this context have
        their schemas sent; the others stay callable by name. ``in_use``: tools the conversation used before
        this turn (``tools_used``); those loaded on demand are offered too, after the others, in that order.
        """
        include = self.catalog_filter
        mode = self.policy.mode_for(ctx.session_id) if ctx.session_id else None
        # Plan mode offers only the read tools, but the others stay callable by name: a call to one reaches
        # the policy, whose refusal tells the model why (plan mode), not just "not available".
        offer = mode_filter("plan") if mode == "plan" else (lambda _tool: True)
        if mode is not None and mode != "plan":  # read-only offers, and lets the model call, only reads
            include = mode_filter(mode)
        allowed = self.registry.catalog(ctx, include=include, disabled=self.disabled_tools)
        if profile is None:
            return allowed.narrowed(offer) if mode == "plan" else allowed
        notebook = notebook_in_play(ctx.client_context, messages or [])
        narrowed = allowed.narrowed(
            lambda tool: (
                offer(tool)
                and offered_in(tool, profile, notebook_in_play=notebook, web_enabled=self.web_tools)
            )
        )
        on_demand = [
            name for name in in_use if (tool := self.registry.get(name)) and tool.on_demand and offer(tool)
        ]
        return narrowed.offering(on_demand)

    def profile(self, settings: ModelSettings, context_window: int) -> ProfileName:
        return resolve_profile(settings.profile, context_window)

    def set_mode(self, session_id: str, mode: str) -> None:
        """The user switched the permission mode (default, accept-edits, read-only) for one conversation."""
        self.policy.set_mode(mode, session_id=session_id)

    def per_conversation(self) -> list[ConversationState]:
        """Every store that keeps something per conversation (``ConversationState``)."""
        return [*self.state.per_conversation(), self.undo, self.policy]

    async def forget_session(self, session_id: str) -> None:
        """A conversation was deleted: every store forgets it (grants, undo and checkpoints, files read,
        notebooks seen, kernel snapshots) and its background processes are stopped."""
        for store in self.per_conversation():
            await store.forget_session(session_id)

    async def prepare_catalog(
        self,
        ctx: ToolContext,
        profile: ProfileName | None = None,
        messages: list[dict[str, Any]] | None = None,
        in_use: Sequence[str] = (),
    ) -> ToolCatalog:
        """The catalog after tools from outside (MCP servers) are ready; never raises for them.

        Eager in the full profile (and without one): every server connects and lists its tools, whose
        schemas are all sent. Lazy in compact and standard: only the servers of tools the conversation has
        used are connected (after a restart, to have their schemas again); a turn that needs no MCP tool
        starts no server. The others connect when the model asks ``mcp_tools`` or calls one of their tools.
        """
        if profile in (None, "full"):
            if self.refresh_tools is not None:
                await self.refresh_tools()
        elif in_use and self.load_tools is not None:
            missing = [name for name in in_use if name not in self.registry]
            if missing:
                await self.load_tools(missing)
        return self.catalog(ctx, profile, messages, in_use)

    def prompt_tokens(self, ctx: ToolContext, profile: ProfileName, tool_mode: str) -> int:
        """Tokens of what every request of a new conversation starts with under ``profile``: the system
        prompt and the tools (as schemas, or described in the system prompt in text mode)."""
        tools = [to_openai(tool) for tool in self.catalog(ctx, profile)]
        system_prompt = self.system_prompt(ctx, profile)
        if tool_mode == "text":
            described = with_tool_descriptions([{"role": "system", "content": system_prompt}], tools)
            return prefix_tokens(str(described[0]["content"]), [])
        return prefix_tokens(system_prompt, tools)

    def rules_text(self, ctx: ToolContext) -> str:
        """The project rules part of ``system_prompt`` (redacted the same way), for ``/context``."""
        section = rules_section(Path(ctx.root_dir), ctx.client_context, self.rules_provider)
        return self.executor_settings.redactor.redact(section) if section else ""

    def system_prompt(self, ctx: ToolContext, profile: ProfileName) -> str:
        """The system prompt, through the same redaction as tool results: instruction and rule files, and the
        cells and mentions the sidebar sends, can hold a secret as well as any file a tool reads. The skills
        are named only where ``profile`` offers ``use_skill`` (not in compact: a small window has no room
        for a skill's instructions, and the names alone cost it a few percent; nor where the administrator
        disabled it)."""
        skills = self.skills_provider if "use_skill" in self.catalog(ctx, profile).names() else None
        prompt = build_system_prompt(Path(ctx.root_dir), ctx.client_context, self.rules_provider, skills)
        return self.executor_settings.redactor.redact(prompt)
