"""The Jupyter server extension: builds the long-lived objects once and hands them to the routes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_data_dir
from jupyter_server.extension.application import ExtensionApp

from . import __version__
from .agent.conversations import ConversationManager
from .agent.models import SETUP_HELP, catalog_from_config, probe_local_servers
from .agent.runtime import AgentRuntime
from .agent.store import SessionStore
from .config import HdspAgentConfig
from .mcp.services import McpServices
from .permissions.broker import ApprovalBroker
from .permissions.policy import build_policy
from .proxy.upstream import Upstream
from .tools.base import ToolContext
from .tools.defaults import default_registry
from .tools.jupyter.live import LiveNotebooks
from .tools.registry import ToolCatalog
from .tools.state import ToolState
from .web.bridge import build_bridge_handlers
from .web.mcp import build_mcp_endpoint, build_mcp_handlers
from .web.openai_v1 import build_openai_handlers
from .web.routes import build_handlers


class HdspAgentApp(HdspAgentConfig, ExtensionApp):
    """hdsp-agent inside jupyter-server. Configure it as ``c.HdspAgentApp.<trait>``."""

    name = "hdsp_agent"
    load_other_extensions = True

    def initialize_settings(self) -> None:
        # The notebooks open in connected JupyterLab tabs (their sidebars' NotebookBridge).
        self.live_notebooks = LiveNotebooks()
        # What outlives a tool call (file reads and undo, notebook stamps and runs, background processes) and
        # the grants (inside the policy): built here, once, and passed to whatever keeps or reads them.
        self.tool_state = ToolState()
        self.registry = default_registry(self, self.tool_state)
        self.policy = build_policy(self, self.root_dir)
        self.runtime = AgentRuntime(
            registry=self.registry,
            state=self.tool_state,
            policy=self.policy,
            catalog_filter=self.policy.catalog_filter,
            broker_factory=lambda emit: ApprovalBroker(on_reply=self.policy.grants.record),
            models=catalog_from_config(self),
            context_factory=self.tool_context,
            executor_settings=self.executor_settings(),
            max_steps=self.max_steps,
            tool_call_limits=dict(self.tool_call_limits),
            disabled_tools=list(self.disabled_tools),
        )
        self.upstream = Upstream(self.runtime.models, frozenset(self.v1_disabled_tools))
        self.store = SessionStore(self.conversation_store_path(), self.log)
        self.sessions = ConversationManager(self.store, self.runtime)
        self.mcp = McpServices.for_app(self, build_mcp_endpoint)
        self.runtime.refresh_tools = self.mcp.manager.refresh
        self.settings.update({"hdsp_agent": self})
        self.log.info("hdsp-agent %s: %d tools registered", __version__, len(self.registry))

    def initialize_handlers(self) -> None:
        self.handlers.extend(build_handlers())
        self.handlers.extend(build_openai_handlers())
        self.handlers.extend(build_mcp_handlers())
        self.handlers.extend(build_bridge_handlers())

    def conversation_store_path(self) -> Path:
        if self.store_path:
            return Path(self.store_path).expanduser()
        return Path(jupyter_data_dir()) / "hdsp_agent" / "sessions.sqlite3"

    @property
    def root_dir(self) -> Path:
        assert self.serverapp is not None
        return Path(self.serverapp.root_dir).expanduser().resolve()

    def tool_context(self, **overrides: Any) -> ToolContext:
        assert self.serverapp is not None
        return ToolContext(
            root_dir=self.root_dir,
            kernel_manager=self.serverapp.kernel_manager,
            session_manager=self.serverapp.session_manager,
            contents_manager=self.serverapp.contents_manager,
            notebook_gateway=self.live_notebooks,
            logger=self.log,
            **overrides,
        )

    def catalog(self) -> ToolCatalog:
        return self.registry.catalog(
            self.tool_context(), include=self.policy.catalog_filter, disabled=self.disabled_tools
        )

    async def models_overview(self) -> dict[str, Any]:
        models = self.runtime.models
        overview: dict[str, Any] = {"configured": models.configured, "models": models.public()}
        if not models.configured:
            overview["setup_help"] = SETUP_HELP
            overview["discovered"] = await probe_local_servers() if self.probe_local_models else []
        return overview

    async def stop_extension(self) -> None:
        self.log.info("hdsp-agent stopping")
        await self.sessions.shutdown()
        await self.mcp.close()
        # Notebook runs still going after their call answered: stop waiting before the kernels go away.
        await self.tool_state.notebooks.aclose()
