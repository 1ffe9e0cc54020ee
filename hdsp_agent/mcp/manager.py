"""All configured MCP servers: their connections, their tools in our registry, and their status.

Nothing starts with Jupyter. A server connects when it is first needed, and its connection and tool list are
kept for later turns (listed again after ``tools/list_changed``, or after a crash):

Starting a stdio server runs a program outside the sandbox, so only the user starts one: listing tools is a
read, starting a process is not. A server is started by the model's turn only when it was started before in
this process (``started``) or the policy allows ``mcp_start_server(<server>)`` without asking (an
administrator's allow rule, or the user's "always" saved in their permissions file). Otherwise:

- ``refresh()`` connects every enabled server: the user asked (the sidebar's MCP view, ``hdsp-agent mcp``).
  Later calls only list again the servers whose tools changed or that crashed (restarted, at most every
  ``retry_seconds``).
- ``refresh_started()``: what the runtime awaits before a turn in the full profile (which sends every MCP
  tool's schema): the servers that may start without asking, nothing else.
- ``list_servers(names)``: the ``mcp_tools`` index (compact and standard profiles) lists the servers the model
  asks about that may start; the others are reported as not started, to start with ``mcp_start_server``
  (``start.py``), a call the policy decides and the user approves like any other.
- ``load(tool_names)``: the model called ``server__tool`` by name before its server was listed (or the
  conversation used it before a restart): a server that may start connects and lists; for one that may not,
  the name gets a stand-in (``start.py``) whose call is decided first (MCP tools ask) and starts the server
  only once approved.

None of them raises: a server that fails is reported in ``status()`` and its tools stay out of (or, after a
crash, stay in) the registry; a call to a crashed server's tool starts it again. While at least one server is
configured the registry also holds the ``mcp_tools`` index.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..tools.base import ToolError
from ..tools.naming import is_valid_name, sanitize_part, split_tool_name
from ..tools.profiles import TOOL_INDEX
from ..tools.registry import ToolRegistry
from .config import McpConfig, McpServerSpec, load_mcp_config, project_trust

# What ``list_servers`` reports for a server that needs the user's approval to start.
NOT_STARTED = "not started"

if TYPE_CHECKING:
    # The MCP SDK is imported when a server is configured, not when the extension loads.
    from .client import McpConnection


class McpManager:
    def __init__(
        self,
        registry: ToolRegistry,
        *,
        root_dir: Path,
        trait_servers: Mapping[str, Any] | None = None,
        denied: Iterable[str] = (),
        config_dir: Path | None = None,
        connect_timeout: float = 30.0,
        retry_seconds: float = 30.0,
        logger: logging.Logger | None = None,
    ) -> None:
        self.registry = registry
        self.root_dir = root_dir
        self.trait_servers = dict(trait_servers or {})
        self.denied = list(denied)
        self.config_dir = config_dir
        self.connect_timeout = connect_timeout
        self.retry_seconds = retry_seconds
        self.log = logger or logging.getLogger("hdsp_agent.mcp")
        self.config = McpConfig()
        self.connections: dict[str, McpConnection] = {}
        # Server name → registered tool names, to unregister what a server no longer offers.
        self._registered: dict[str, set[str]] = {}
        self._skipped: dict[str, list[str]] = {}
        self._failed_at: dict[str, float] = {}
        self._background: set[asyncio.Task[None]] = set()
        # Servers started in this process (by the user, an approved call or an allow rule), with the spec
        # they were started with: a changed entry (another command) must be allowed again.
        self.started: dict[str, McpServerSpec] = {}
        # Decides ``mcp_start_server(<server>)``; None: nothing starts without the user (see ``attach``).
        self.policy: Any = None
        # Server name → the stand-ins registered for its tools called by name before it started.
        self._stand_ins: dict[str, set[str]] = {}
        self.reload()

    # -- configuration ---------------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the configuration again (edited files, a newly trusted project); changed servers restart."""
        self.config = load_mcp_config(self.root_dir, self.trait_servers, self.denied, self.config_dir)
        for problem in self.config.problems:
            self.log.warning(
                "hdsp-agent: MCP config: %s%s",
                f"{problem.server}: " if problem.server else "",
                problem.message,
            )
        self._protect_command_files()
        wanted = {spec.name: spec for spec in self.config.servers if not spec.disabled}
        for name, connection in list(self.connections.items()):
            if wanted.get(name) != connection.spec:
                self._forget(name)
                self._spawn(connection.close())
        for name, spec in wanted.items():
            if name not in self.connections:
                from .client import McpConnection

                self.connections[name] = McpConnection(
                    spec,
                    root_dir=self.root_dir,
                    on_tools_changed=self._tools_changed,
                    connect_timeout=self.connect_timeout,
                    logger=self.log,
                )
        self._sync_index()

    def _protect_command_files(self) -> None:
        """The files inside the root the configured servers run: writes to them always ask, and sandboxed
        commands see them read-only (``permissions.protected.configure_run_later_files``)."""
        from ..permissions.protected import configure_run_later_files
        from .config import command_files

        files: dict[str, str] = {}
        for spec in [*self.config.servers, *self.config.denied]:
            for path in command_files(spec, self.root_dir):
                files.setdefault(str(path), spec.name)
        configure_run_later_files(files)

    def _sync_index(self) -> None:
        """The ``mcp_tools`` index and ``mcp_start_server`` in the registry while a server is configured,
        naming the servers."""
        from .index import McpToolIndex, tool_index
        from .start import START_TOOL, McpStartServer, start_tool

        for name, build, kind in (
            (TOOL_INDEX, tool_index, McpToolIndex),
            (START_TOOL, start_tool, McpStartServer),
        ):
            existing = self.registry.get(name)
            if existing is not None and not (isinstance(existing, kind) and existing.manager is self):
                self.log.warning("hdsp-agent: a tool named %s exists already; not replaced", name)
                continue
            if self.connections:
                self.registry.register(build(self), replace=True)
            elif existing is not None:
                self.registry.unregister(name)

    def attach(self, runtime: Any) -> None:
        """Wire into an ``AgentRuntime`` as the server and the CLI do: the full profile's turn start lists the
        servers that may start, tools called by name load on demand, starts are decided by its policy."""
        runtime.refresh_tools = self.refresh_started
        runtime.load_tools = self.load
        self.policy = runtime.policy

    # -- starting --------------------------------------------------------------------------------------------

    def needs_start(self, name: str) -> bool:
        """Whether connecting ``name`` would start a program that was not started (nor allowed) before."""
        connection = self.connections.get(name)
        if connection is None or connection.spec.transport != "stdio":
            return False  # an HTTP server is a URL to connect to, not a program we run
        return self.started.get(name) != connection.spec

    def may_start(self, name: str) -> bool:
        """Started before in this process, or allowed to start without asking by a rule."""
        if not self.needs_start(name):
            return True
        check = getattr(self.policy, "check", None)
        connection = self.connections.get(name)
        if check is None or connection is None:
            return False
        from .start import START_TOOL, start_action

        decision = check(START_TOOL, {"server": name}, start_action(connection.spec), self.root_dir)
        return bool(decision.decision == "allow")

    async def start(self, name: str) -> None:
        """Start (connect and list) ``name``: the caller has the user's approval or a rule's."""
        connection = self.connections.get(name)
        if connection is None:
            raise ToolError("E_TOOL_NOT_FOUND", f"no MCP server named {name!r}")
        self.started[name] = connection.spec
        self._failed_at.pop(name, None)
        await self._refresh(connection)

    def server_names(self) -> list[str]:
        """The enabled servers (the ones that may be connected), in configuration order."""
        return list(self.connections)

    def trust_project(self, expected_sha256: str | None = None) -> dict[str, Any]:
        """Trust the project's ``.hdsp/mcp.json`` as it is now, then start using its servers."""
        project = self.config.project
        path = project.path if project is not None else self.root_dir / ".hdsp" / "mcp.json"
        state = project_trust(self.config_dir).trust(path, expected_sha256)
        self.reload()
        return state.public()

    # -- refreshing ------------------------------------------------------------------------------------------

    async def refresh(self, *, retry_failed: bool = False) -> None:
        """Connect and list where needed, so the registry holds every available server's current tools.

        A server that failed is tried again only ``retry_seconds`` later (a turn must not wait on it each
        time), unless ``retry_failed``: the user asked to look again (the sidebar's refresh).
        """
        if retry_failed:
            self._failed_at.clear()
        for name, connection in self.connections.items():
            self.started[name] = connection.spec
        await asyncio.gather(*(self._refresh(connection) for connection in list(self.connections.values())))

    async def refresh_started(self) -> None:
        """Before a turn in the full profile: list again the servers that may start without asking (started
        before, or allowed by a rule); the others stay down until ``mcp_start_server`` is approved."""
        wanted = [connection for name, connection in self.connections.items() if self.may_start(name)]
        for connection in wanted:
            self.started.setdefault(connection.name, connection.spec)
        await asyncio.gather(*(self._refresh(connection) for connection in wanted))

    async def list_servers(self, names: Sequence[str]) -> dict[str, tuple[list[Any], str | None]]:
        """Connect and list the named servers that may start; per server, its tools in the registry (in the
        server's order) and, when it has none because it failed, why (first line of the failure), or
        ``NOT_STARTED`` for a server that needs the user's approval to start."""
        from .tools import McpTool

        connections = [self.connections[name] for name in names if name in self.connections]
        startable = [connection for connection in connections if self.may_start(connection.name)]
        for connection in startable:
            self.started.setdefault(connection.name, connection.spec)
        await asyncio.gather(*(self._refresh(connection) for connection in startable))
        listing: dict[str, tuple[list[Any], str | None]] = {}
        for connection in connections:
            if connection not in startable:
                listing[connection.name] = ([], NOT_STARTED)
                continue
            registered = self._registered.get(connection.name, set())
            tools = [
                tool
                for tool in self.registry
                if tool.name in registered and isinstance(tool, McpTool) and tool.connection is connection
            ]
            problem = None
            if not tools and connection.state == "error":
                problem = (connection.message or "failed").splitlines()[0]
            listing[connection.name] = (tools, problem)
        return listing

    async def load(self, tool_names: Sequence[str]) -> bool:
        """Connect and list the servers of tools called by name that are not in the registry yet; True if
        the registry changed. A name of no configured server (or a plain name) is left alone."""
        groups = {
            group
            for name in tool_names
            if name not in self.registry and (group := split_tool_name(name)[0]) is not None
        }
        wanted = [c for c in self.connections.values() if sanitize_part(c.name) in groups]
        if not wanted:
            return False
        before = set(self.registry.names())
        startable = [connection for connection in wanted if self.may_start(connection.name)]
        for connection in startable:
            self.started.setdefault(connection.name, connection.spec)
        await asyncio.gather(*(self._refresh(connection) for connection in startable))
        for connection in wanted:
            if connection not in startable:
                self._stand_in(connection, [n for n in tool_names if n not in self.registry])
        return set(self.registry.names()) != before

    def _stand_in(self, connection: McpConnection, names: Sequence[str]) -> None:
        """Register a stand-in for each name of ``connection``'s group: its call is decided first, and only
        once approved starts the server (``start.McpUnstartedTool``)."""
        from .start import unstarted_tool

        group = sanitize_part(connection.name)
        for name in names:
            # A name no tool could have (the model's typo) stays unknown: the executor says so.
            if is_valid_name(name) and split_tool_name(name)[0] == group:
                self.registry.register(unstarted_tool(self, connection.spec, name), replace=True)
                self._stand_ins.setdefault(connection.name, set()).add(name)

    async def _refresh(self, connection: McpConnection) -> None:
        if not connection.tools_stale and connection.tools is not None and connection.state == "connected":
            return
        failed_at = self._failed_at.get(connection.name)
        if failed_at is not None and time.monotonic() - failed_at < self.retry_seconds:
            return
        try:
            await connection.list_tools()
        except ToolError:
            self._failed_at[connection.name] = time.monotonic()
            return
        except Exception:  # a bug here must not break the turn that asked for the catalog
            self.log.exception("hdsp-agent: listing the tools of MCP server %s failed", connection.name)
            self._failed_at[connection.name] = time.monotonic()
            return
        self._failed_at.pop(connection.name, None)
        self._sync(connection)

    def _sync(self, connection: McpConnection) -> None:
        from .tools import McpTool, mcp_tool

        for name in self._stand_ins.pop(connection.name, set()):
            self.registry.unregister(name)
        tools: dict[str, McpTool] = {}
        skipped: list[str] = []
        for remote in connection.tools or []:
            tool = mcp_tool(connection, remote)
            existing = self.registry.get(tool.name)
            if tool.name in tools:
                skipped.append(
                    f"{remote.name!r} has the same name as another tool once sanitized ({tool.name})"
                )
                continue
            if existing is not None and not (
                isinstance(existing, McpTool) and existing.connection is connection
            ):
                # A server must not replace a tool declared by the administrator (or another server's).
                skipped.append(f"{remote.name!r}: a tool named {tool.name} already exists")
                continue
            tools[tool.name] = tool
        for name in self._registered.get(connection.name, set()) - set(tools):
            self.registry.unregister(name)
        for tool in tools.values():
            self.registry.register(tool, replace=True)
        self._registered[connection.name] = set(tools)
        self._skipped[connection.name] = skipped

    def _tools_changed(self, connection: McpConnection) -> None:
        # A notification arrives inside the SDK's receive loop: list again from a task of our own.
        self._spawn(self._refresh(connection))

    def _forget(self, name: str) -> None:
        for tool_name in self._registered.pop(name, set()):
            self.registry.unregister(tool_name)
        for stand_in in self._stand_ins.pop(name, set()):
            self.registry.unregister(stand_in)
        self.connections.pop(name, None)
        self._failed_at.pop(name, None)
        self.started.pop(name, None)

    def _spawn(self, work: Any) -> None:
        try:
            task = asyncio.get_running_loop().create_task(work)
        except RuntimeError:  # no loop yet (configuration read at startup): nothing is running to close
            work.close()
            return
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def settle(self) -> None:
        """Wait for background re-listings (tests, shutdown)."""
        while self._background:
            await asyncio.wait(set(self._background))

    async def close(self) -> None:
        await asyncio.gather(*(connection.close() for connection in self.connections.values()))
        await self.settle()

    # -- reporting -------------------------------------------------------------------------------------------

    def _tool_details(self, names: list[str]) -> list[dict[str, Any]]:
        """What the sidebar shows of each tool: its name for us and for the server, and whether it asks."""
        if not names:
            return []
        from .tools import McpTool

        details: list[dict[str, Any]] = []
        for name in names:
            tool = self.registry.get(name)
            if isinstance(tool, McpTool):
                details.append(
                    {
                        "name": name,
                        "remote_name": tool.remote_name,
                        "description": tool.remote_description,
                        "auto_approved": tool.auto_approved,
                    }
                )
        return details

    def status(self) -> dict[str, Any]:
        """Every configured server: connected / error (with why) / idle / disabled / denied / untrusted, and
        its tools (``tools``: our names; ``tool_details``: with the server's name and description of each)."""
        servers: list[dict[str, Any]] = []
        for spec in self.config.servers:
            connection = self.connections.get(spec.name)
            entry: dict[str, Any]
            if spec.disabled or connection is None:
                entry = {
                    "name": spec.name,
                    "source": spec.source,
                    "transport": spec.transport,
                    "state": "disabled",
                }
            else:
                entry = connection.status()
                entry["tools"] = sorted(self._registered.get(spec.name, set()))
                entry["tool_details"] = self._tool_details(entry["tools"])
                if self._skipped.get(spec.name):
                    entry["skipped_tools"] = self._skipped[spec.name]
            entry["auto_approve"] = sorted(spec.auto_approve)
            servers.append(entry)
        for spec in self.config.denied:
            servers.append(
                {
                    "name": spec.name,
                    "source": spec.source,
                    "transport": spec.transport,
                    "state": "denied",
                    "message": "denied by the administrator (mcp_denied_servers)",
                }
            )
        for spec in self.config.untrusted:
            servers.append(
                {
                    "name": spec.name,
                    "source": spec.source,
                    "transport": spec.transport,
                    "state": "untrusted",
                    "message": "in the project's .hdsp/mcp.json, not trusted yet (it can start programs)",
                    # What trusting the file would start, for the user to judge before they do.
                    "launch": spec.url or shlex.join([spec.command, *spec.args]),
                }
            )
        project = self.config.project
        return {
            "servers": servers,
            "project": project.public() if project is not None and project.status != "absent" else None,
            "problems": [problem.public() for problem in self.config.problems],
        }
