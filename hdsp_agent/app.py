"""The Jupyter server extension: builds the long-lived objects once and hands them to the routes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp

from . import __version__
from .config import HdspAgentConfig
from .routes import build_handlers
from .tools.base import ToolContext
from .tools.builtin import builtin_tools
from .tools.executor import ToolExecutor
from .tools.registry import ToolCatalog, ToolRegistry


class HdspAgentApp(HdspAgentConfig, ExtensionApp):
    """hdsp-agent inside jupyter-server. Configure it as ``c.HdspAgentApp.<trait>``."""

    name = "hdsp_agent"
    # Never opened on its own: hdsp-agent lives inside JupyterLab.
    load_other_extensions = True

    def initialize_settings(self) -> None:
        self.registry = ToolRegistry(builtin_tools())
        self.executor = ToolExecutor(self.registry, settings=self.executor_settings())
        self.settings.update({"hdsp_agent": self})
        self.log.info("hdsp-agent %s: %d tools registered", __version__, len(self.registry))

    def initialize_handlers(self) -> None:
        self.handlers.extend(build_handlers())

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
            logger=self.log,
            **overrides,
        )

    def catalog(self) -> ToolCatalog:
        return self.registry.catalog(self.tool_context(), disabled=self.disabled_tools)

    async def stop_extension(self) -> None:
        self.log.info("hdsp-agent stopping")
