"""Building the long-lived objects once, one way: for the server (``app.py``), each CLI command, the tests.

What outlives a call (``ToolState``), the OS sandbox, the tool registry, the permission policy and the agent
runtime are made here and nowhere else. The sandbox is built once, from the settings, and the same object is
handed to the tools (which run commands in it) and its status to the policy (which decides run modes by it):
built twice, the two could disagree about what a command may do. The builders differ only in what they pass
in: the Jupyter managers behind ``context_factory``, who answers approvals, the audit log, the quotas.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .agent.conversations import ConversationManager
from .agent.models import ModelCatalog, catalog_from_config
from .agent.runtime import AgentRuntime, ContextFactory
from .agent.store import SessionStore
from .audit.log import AuditSink
from .config import HdspAgentConfig
from .mcp.manager import McpManager
from .permissions.approval import Approver
from .permissions.broker import ApprovalBroker
from .permissions.decision import SessionPolicy
from .permissions.policy import RulePolicy, build_policy
from .sandbox import Sandbox, sandbox_from_config
from .tools.base import Tool
from .tools.defaults import default_tools
from .tools.executor import ToolExecutor
from .tools.registry import ToolRegistry
from .tools.state import ToolState

BrokerFactory = Callable[[Callable[..., Any]], ApprovalBroker]


@dataclass
class Assembly:
    """The objects one server or one command run shares; every caller reads them from here."""

    root: Path
    state: ToolState
    sandbox: Sandbox
    registry: ToolRegistry
    policy: SessionPolicy
    runtime: AgentRuntime

    @property
    def rule_policy(self) -> RulePolicy:
        """The policy built from the settings (every builder but a test that brings its own)."""
        if not isinstance(self.policy, RulePolicy):
            raise TypeError("this assembly was given its own policy, not the configured rules")
        return self.policy

    def executor(self, approver: Approver | None) -> ToolExecutor:
        """The one call pipeline with a fixed approver (``hdsp-agent tools call``, ``hdsp-agent mcp``)."""
        return ToolExecutor(
            self.registry,
            policy=self.policy,
            approver=approver,
            settings=self.runtime.executor_settings,
            on_audit=self.runtime.audit,
        )

    def conversations(self, store: SessionStore) -> ConversationManager:
        return ConversationManager(store, self.runtime)

    async def aclose(self) -> None:
        """Stop waiting on notebook runs still going (before the kernels go away)."""
        await self.state.notebooks.aclose()


def assemble(
    config: HdspAgentConfig | None,
    root: Path,
    context_factory: ContextFactory,
    *,
    tools: Iterable[Tool[Any]] | None = None,
    state: ToolState | None = None,
    policy: SessionPolicy | None = None,
    models: ModelCatalog | None = None,
    broker_factory: BrokerFactory | None = None,
    audit: AuditSink | None = None,
    permissions_file: Path | None = None,
    **runtime_options: Any,
) -> Assembly:
    """Everything long-lived for ``root``, from ``config`` (the administrator's and user's settings).

    ``tools``/``state``/``policy``/``models``: a test's own instead of the configured ones (``config`` None:
    the traits' defaults). ``permissions_file``: the user's rules file instead of the configured one.
    ``runtime_options``: further ``AgentRuntime`` fields (readiness, quotas, ...); the
    ones the settings give (steps, limits, disabled tools, web tools) come from ``config`` unless given.
    """
    settings = config if config is not None else HdspAgentConfig()
    state = state if state is not None else ToolState()
    # Once, here: the tools run commands in this sandbox and the policy decides by its status.
    sandbox = sandbox_from_config(settings)
    if tools is None:
        registry = ToolRegistry(default_tools(settings, state, sandbox))
    else:
        registry = ToolRegistry(tools)
    if policy is None:
        rules = build_policy(settings, root, permissions_file, sandbox=sandbox.status)
        # The conversation's permission mode narrows the catalog (read-only offers only the read tools).
        runtime_options.setdefault("catalog_filter", rules.catalog_filter)
        policy = rules
    # Without settings (a test's own parts) the runtime keeps its defaults for what the settings would give.
    options = _runtime_settings(config) if config is not None else {}
    runtime = AgentRuntime(
        registry=registry,
        state=state,
        policy=policy,
        models=models if models is not None else catalog_from_config(settings),
        context_factory=context_factory,
        broker_factory=broker_factory,
        audit=audit,
        **{**options, **runtime_options},
    )
    return Assembly(root, state, sandbox, registry, policy, runtime)


def _runtime_settings(config: HdspAgentConfig) -> dict[str, Any]:
    return {
        "executor_settings": config.executor_settings(),
        "max_steps": config.max_steps,
        "tool_call_limits": dict(config.tool_call_limits),
        "disabled_tools": list(config.disabled_tools),
        "web_tools": config.web_tools,
        "context_warning_share": config.context_warning_share,
    }


def mcp_manager(
    registry: ToolRegistry, root: Path, config: HdspAgentConfig, logger: logging.Logger | None = None
) -> McpManager:
    """The MCP servers configured for ``root`` (none started yet), their tools going into ``registry``: the
    user's ``mcp.json``, the ``mcp_servers`` trait and the project's ``.hdsp/mcp.json`` once trusted."""
    return McpManager(
        registry,
        root_dir=root,
        trait_servers=dict(config.mcp_servers),
        denied=list(config.mcp_denied_servers),
        logger=logger or logging.getLogger("hdsp_agent.mcp"),
    )
