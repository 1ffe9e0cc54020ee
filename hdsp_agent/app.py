"""The Jupyter server extension: builds the long-lived objects once and hands them to the routes."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_data_dir
from jupyter_server import JUPYTER_SERVER_EVENTS_URI
from jupyter_server.extension.application import ExtensionApp

from . import __version__
from .admin_config import apply_admin_settings, load_admin_settings
from .agent.inline_completion import InlineCompleter
from .agent.llm import ModelError
from .agent.model_setup import UserModelFile, inherited_key_warning
from .agent.models import catalog_from_config, probe_local_servers
from .agent.readiness import ReadinessStore
from .agent.store import SessionStore
from .agent.undo_records import UndoPersistence
from .assembly import assemble, mcp_manager
from .audit.log import AuditLog
from .config import HdspAgentConfig
from .documents.live import LiveNotebooks
from .events import CheckpointsPrunedEvent
from .mcp.services import McpServices
from .permissions.broker import ApprovalBroker
from .permissions.runs_later import shadowed_module_names
from .proxy.upstream import Upstream
from .tools.base import ToolContext
from .tools.jupyter import kernel_start
from .tools.profiles import resolve_profile
from .tools.registry import ToolCatalog
from .user_text import texts_for, user_text
from .web.bridge import build_bridge_handlers
from .web.commands import build_command_handlers
from .web.completion import build_completion_handlers
from .web.instructions import build_instructions_handlers
from .web.mcp import build_mcp_endpoint, build_mcp_handlers
from .web.mentions import build_mentions_handlers
from .web.model_setup import build_model_setup_handlers
from .web.openai_v1 import build_openai_handlers
from .web.routes import build_handlers

CONTENTS_EVENTS = JUPYTER_SERVER_EVENTS_URI + "/contents_service/v1"


class HdspAgentApp(HdspAgentConfig, ExtensionApp):
    """hdsp-agent inside jupyter-server. Configure it as ``c.HdspAgentApp.<trait>``."""

    name = "hdsp_agent"
    load_other_extensions = True

    def initialize_settings(self) -> None:
        # Before anything is built from the traits: the administrator's admin.json over the user's config.
        self.admin_problems = apply_admin_settings(self, load_admin_settings(), self.log)
        # The notebooks open in connected JupyterLab tabs (their sidebars' NotebookBridge).
        self.live_notebooks = LiveNotebooks()
        self._background: set[asyncio.Future[None]] = set()
        # A save (the user's, autosave's, the agent's) puts the journaled agent changes in the file.
        assert self.serverapp is not None and self.serverapp.event_logger is not None
        self.serverapp.event_logger.add_listener(schema_id=CONTENTS_EVENTS, listener=self._on_contents_event)
        # Kernels start without the notebook's folder on sys.path until the user's code runs: a module planted
        # there cannot stand in for the kernel's own start-up (tools/jupyter/kernel_start.py).
        kernel_start.install(self.serverapp.kernel_spec_manager)
        # The module names a planted file could stand in for (~0.2 s to list): now, not in the first decision.
        shadowed_module_names()
        # What outlives a tool call, the OS sandbox (one, for the policy and the tools), the registry, the
        # policy with its grants and the runtime: built once, the same way as the CLI's (assembly.py).
        self.user_models = UserModelFile()
        built = assemble(
            self,
            self.root_dir,
            self.tool_context,
            broker_factory=lambda emit: ApprovalBroker(on_reply=self.policy.grants.record),
            audit=self.audit_log_sink(),
            readiness=ReadinessStore(self.user_models.path.with_name("readiness.json")),
            quotas=self.open_quotas(),
        )
        self.assembly = built
        self.tool_state, self.os_sandbox, self.registry = built.state, built.sandbox, built.registry
        self.policy = built.rule_policy
        self.runtime = built.runtime
        self.upstream = Upstream(
            self.runtime.models,
            frozenset(self.v1_disabled_tools),
            pass_through_models=self.v1_pass_through_models,
        )
        # Inline completion: redacted like a tool's result; its model is read at each request (the setup
        # form may change it).
        self.inline_completer = InlineCompleter(
            self.runtime.models,
            secrets=self.known_secrets,
            completion_model=self.completion_model_name,
        )
        self.store = SessionStore(self.conversation_store_path(), self.log)
        self.sessions = built.conversations(self.store)
        manager = mcp_manager(self.registry, self.root_dir, self, self.log)
        self.mcp = McpServices.for_app(self, manager, build_mcp_endpoint)
        # Undo, redo, checkpoints and the journal of unsaved agent changes are kept in the same store: a
        # restart keeps them (loaded now, written through as they change), within ``undo_history_mb``.
        self.undo_records = UndoPersistence(
            self.store,
            limit_bytes=int(self.undo_history_mb * 1024 * 1024) if self.undo_history_mb > 0 else None,
            on_pruned=self._checkpoints_pruned,
        )
        self.undo_records.load(
            self.runtime.undo, self.live_notebooks.journal, self.live_notebooks.texts.texts, self.tool_context
        )
        self.mcp.manager.attach(self.runtime)
        # Closing a notebook ends the agent's work on it: a cell the agent started there is interrupted too.
        self.live_notebooks.close_listeners.append(
            lambda paths: self.tool_state.notebooks.executions.stop_runs_of(
                paths, "the user closed the notebook: the run was interrupted"
            )
        )
        self.settings.update({"hdsp_agent": self})
        self.log.info("hdsp-agent %s: %d tools registered", __version__, len(self.registry))
        status = self.os_sandbox.status
        self.log.info("hdsp-agent sandbox: %s (%s)", status.layer, status.reason)

    def initialize_handlers(self) -> None:
        self.handlers.extend(build_handlers())
        self.handlers.extend(build_openai_handlers())
        self.handlers.extend(build_mcp_handlers())
        self.handlers.extend(build_command_handlers())
        self.handlers.extend(build_bridge_handlers())
        self.handlers.extend(build_model_setup_handlers())
        self.handlers.extend(build_instructions_handlers())
        self.handlers.extend(build_mentions_handlers())
        self.handlers.extend(build_completion_handlers())

    def _checkpoints_pruned(self, session_id: str, turn_ids: list[str]) -> None:
        """Tell the conversation whose oldest checkpoints the bound on the undo history removed."""

        async def tell() -> None:
            try:
                conversation = await self.sessions.get(session_id)
            except KeyError:
                return  # deleted meanwhile
            conversation.emit(
                CheckpointsPrunedEvent(
                    turn_ids=turn_ids,
                    limit_mb=self.undo_history_mb,
                    message=user_text(
                        "Older checkpoints were removed to keep the undo history under %1 MB: those turns "
                        "can no longer be undone.",
                        f"{self.undo_history_mb:g}",
                    ),
                )
            )

        task = asyncio.ensure_future(tell())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _on_contents_event(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        action, path = data.get("action"), data.get("path")
        if not isinstance(path, str):
            return
        if action == "save":
            self.live_notebooks.saved(path)
        elif action == "rename" and isinstance(data.get("source_path"), str):
            self.live_notebooks.renamed(data["source_path"], path)

    def audit_log_sink(self) -> AuditLog | None:
        audit = self.open_audit_log()
        if audit is not None:
            self.audit = audit
        return audit

    def conversation_store_path(self) -> Path:
        if self.store_path:
            return Path(self.store_path).expanduser()
        return Path(jupyter_data_dir()) / "hdsp_agent" / "sessions.sqlite3"

    @property
    def root_dir(self) -> Path:
        assert self.serverapp is not None
        return Path(self.serverapp.root_dir).expanduser().resolve()

    def known_secrets(self) -> list[str]:
        """The configuration's and environment's secrets, the keys of the models in use now (the user's saved
        setup included) and the Jupyter server's token."""
        values = super().known_secrets()
        runtime = getattr(self, "runtime", None)
        if runtime is not None:
            for settings in [*runtime.models.models, runtime.models.endpoint]:
                if settings is not None:
                    with contextlib.suppress(ModelError):
                        values.append(settings.resolved_api_key())
        identity = getattr(self.serverapp, "identity_provider", None)
        values.append(str(getattr(identity, "token", "") or ""))
        return values

    def completion_model_name(self) -> str:
        """The model for inline completion: the user's choice in the setup form, else the configuration's
        ``completion_model``; empty: the chat model."""
        saved = self.user_models.load() if self.allow_user_models else None
        return (saved.completion_model if saved is not None else "") or self.completion_model

    def tool_context(self, **overrides: Any) -> ToolContext:
        assert self.serverapp is not None
        return ToolContext(
            root_dir=self.root_dir,
            kernel_manager=self.serverapp.kernel_manager,
            session_manager=self.serverapp.session_manager,
            contents_manager=self.serverapp.contents_manager,
            notebook_gateway=self.live_notebooks,
            text_editors=self.live_notebooks.texts,
            logger=self.log,
            **overrides,
        )

    def catalog(self) -> ToolCatalog:
        return self.registry.catalog(
            self.tool_context(), include=self.policy.catalog_filter, disabled=self.disabled_tools
        )

    async def models_overview(self) -> dict[str, Any]:
        models = self.runtime.models
        await models.discover()
        overview: dict[str, Any] = {
            "configured": models.configured,
            "models": [self._with_readiness(entry) for entry in models.public()],
            "setup": self.model_setup_state(),
        }
        if not models.configured:
            overview["setup_help"] = models.setup_message()
            overview["texts"] = texts_for(overview["setup_help"])
            overview["discovered"] = await probe_local_servers() if self.probe_local_models else []
        return overview

    def readiness_prompt_tokens(self, profile: str, tool_mode: str) -> int:
        """What a new conversation's requests start with under ``profile`` (for the readiness check)."""
        return self.runtime.prompt_tokens(self.tool_context(), resolve_profile(profile, 0), tool_mode)

    def model_setup_state(self) -> dict[str, Any]:
        """What the sidebar's model setup may show: whether the user may set a model, and what they saved."""
        saved = self.user_models.load() if self.allow_user_models else None
        state: dict[str, Any] = {
            "allowed": self.allow_user_models,
            "admin_contact": self.admin_contact,
            "saved": saved.public() if saved else None,
        }
        warning = self.inherited_key_warning()
        if warning:
            state["warning"] = warning
            state["texts"] = texts_for(warning)
        return state

    def inherited_key_warning(self) -> str | None:
        """Whether the server's environment holds a model key that kernels inherit (see ``model_setup``)."""
        keys: list[str] = []
        for settings in [*self.runtime.models.models, self.runtime.models.endpoint]:
            if settings is not None:
                with contextlib.suppress(ModelError):
                    keys.append(settings.resolved_api_key())
        return inherited_key_warning(os.environ, keys)

    def _with_readiness(self, entry: dict[str, Any]) -> dict[str, Any]:
        """A model as the picker lists it, with the verdicts of its latest readiness check (if any)."""
        store = self.runtime.readiness
        report = store.get(entry["base_url"], entry["model"]) if store is not None else None
        if report is None:
            return entry
        return {**entry, "readiness": report}

    def reload_models(self) -> None:
        """The user saved a model: every session and the /v1 endpoint use the new list from now on."""
        self.runtime.models.replace_with(catalog_from_config(self))

    async def stop_extension(self) -> None:
        self.log.info("hdsp-agent stopping")
        await self.sessions.shutdown()
        await self.mcp.close()
        # Notebook runs still going after their call answered: stop waiting before the kernels go away.
        await self.assembly.aclose()
        await self.inline_completer.aclose()
        # Agent changes to notebooks no tab holds any more are written to their files, not dropped.
        assert self.serverapp is not None
        await self.live_notebooks.aclose(self.serverapp.contents_manager)
        if self.runtime.audit is not None:
            self.audit.close()
