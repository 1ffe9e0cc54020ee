"""Which MCP servers to start: the common ``mcpServers`` JSON format, read from three places.

1. the user's file, ``jupyter_config_dir()/hdsp_agent/mcp.json``;
2. the administrator's trait ``c.HdspAgentApp.mcp_servers`` (same format; wins over the user's file per name);
3. the project's ``.hdsp/mcp.json`` under the root — only once the user has trusted it, because a server entry
   starts a program. Trust is stored with a hash of the file's content, so a changed file must be trusted
   again.

A server's entry is ``{"command", "args", "env", "cwd"}`` (stdio) or ``{"url", "headers"}`` (Streamable HTTP),
plus ``"disabled"``, ``"autoApprove": [tool, ...]`` and ``"timeout"`` (seconds per call, default 60). Problems
(bad JSON, an entry with neither command nor url, an untrusted project file) are reported, never raised.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jupyter_core.paths import jupyter_config_dir

DEFAULT_CALL_TIMEOUT = 60.0
PROJECT_FILE = Path(".hdsp") / "mcp.json"
Source = Literal["user", "config", "project"]
ProjectStatus = Literal["absent", "trusted", "untrusted", "changed", "invalid"]


@dataclass(frozen=True)
class McpServerSpec:
    """One configured server, transport-agnostic; ``url`` set means Streamable HTTP, else stdio."""

    name: str
    source: Source
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    auto_approve: frozenset[str] = frozenset()
    timeout: float = DEFAULT_CALL_TIMEOUT

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url else "stdio"


@dataclass(frozen=True)
class ConfigProblem:
    """Something configured that could not be used, for the status report and the log."""

    source: str
    message: str
    server: str | None = None

    def public(self) -> dict[str, Any]:
        return {"source": self.source, "server": self.server, "message": self.message}


@dataclass
class ProjectFileState:
    path: Path
    status: ProjectStatus
    sha256: str | None = None

    def public(self) -> dict[str, Any]:
        return {"path": str(self.path), "status": self.status, "sha256": self.sha256}


@dataclass
class McpConfig:
    servers: list[McpServerSpec] = field(default_factory=list)
    # Configured, but the administrator's ``mcp_denied_servers`` forbids them: reported, never started.
    denied: list[McpServerSpec] = field(default_factory=list)
    # In a project file the user has not trusted (or that changed since): listed, never started.
    untrusted: list[McpServerSpec] = field(default_factory=list)
    problems: list[ConfigProblem] = field(default_factory=list)
    project: ProjectFileState | None = None


def user_config_dir() -> Path:
    return Path(jupyter_config_dir()) / "hdsp_agent"


def parse_servers(document: Any, source: Source) -> tuple[list[McpServerSpec], list[ConfigProblem]]:
    """Specs from ``{"mcpServers": {...}}`` (a bare ``{name: entry}`` mapping is accepted too)."""
    if not isinstance(document, Mapping):
        return [], [ConfigProblem(source, "expected a JSON object with an 'mcpServers' object")]
    entries = document.get("mcpServers", document)
    if not isinstance(entries, Mapping):
        return [], [ConfigProblem(source, "'mcpServers' must be an object of name → server")]
    specs: list[McpServerSpec] = []
    problems: list[ConfigProblem] = []
    for name, entry in entries.items():
        try:
            specs.append(_spec(str(name), entry, source))
        except ValueError as error:
            problems.append(ConfigProblem(source, str(error), str(name)))
    return specs, problems


def _spec(name: str, entry: Any, source: Source) -> McpServerSpec:
    if not isinstance(entry, Mapping):
        raise ValueError("a server entry must be an object")
    if "__" in name or not name.strip():
        raise ValueError("a server name must be non-empty and must not contain '__'")
    command, url = entry.get("command"), entry.get("url")
    if bool(command) == bool(url):
        raise ValueError("give either 'command' (stdio) or 'url' (Streamable HTTP)")
    if url and not str(url).startswith(("http://", "https://")):
        raise ValueError(f"'url' must be http(s), got {url!r}")
    timeout = entry.get("timeout", DEFAULT_CALL_TIMEOUT)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError("'timeout' must be a positive number of seconds")
    return McpServerSpec(
        name=name,
        source=source,
        command=str(command or ""),
        args=tuple(str(arg) for arg in _list(entry, "args")),
        env={str(k): str(v) for k, v in _mapping(entry, "env").items()},
        cwd=str(entry["cwd"]) if entry.get("cwd") else None,
        url=str(url or ""),
        headers={str(k): str(v) for k, v in _mapping(entry, "headers").items()},
        disabled=bool(entry.get("disabled", False)),
        auto_approve=frozenset(str(tool) for tool in _list(entry, "autoApprove")),
        timeout=float(timeout),
    )


def _list(entry: Mapping[str, Any], key: str) -> list[Any]:
    value = entry.get(key) or []
    if not isinstance(value, list):
        raise ValueError(f"'{key}' must be a list")
    return value


def _mapping(entry: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = entry.get(key) or {}
    if not isinstance(value, Mapping):
        raise ValueError(f"'{key}' must be an object")
    return value


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# -- project trust -------------------------------------------------------------------------------------------


class ProjectTrust:
    """The project files the user trusted (path → sha256 of the content they saw) in the user config dir."""

    def __init__(self, store: Path) -> None:
        self.store = store

    def _trusted(self) -> dict[str, str]:
        try:
            value = _read_json(self.store)
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def state(self, project_file: Path) -> ProjectFileState:
        try:
            content = project_file.read_bytes()
        except FileNotFoundError:
            return ProjectFileState(project_file, "absent")
        digest = hashlib.sha256(content).hexdigest()
        known = self._trusted().get(str(project_file.resolve()))
        status: ProjectStatus = "trusted" if known == digest else ("changed" if known else "untrusted")
        return ProjectFileState(project_file, status, digest)

    def trust(self, project_file: Path, expected_sha256: str | None = None) -> ProjectFileState:
        """Trust the file as it is now; with ``expected_sha256``, only if it is still what the user saw."""
        state = self.state(project_file)
        if state.status == "absent" or state.sha256 is None:
            raise FileNotFoundError(f"{project_file} does not exist")
        if expected_sha256 is not None and expected_sha256 != state.sha256:
            raise ValueError(f"{project_file} changed since it was shown; review it again before trusting it")
        trusted = self._trusted()
        trusted[str(project_file.resolve())] = state.sha256
        self.store.parent.mkdir(parents=True, exist_ok=True)
        self.store.write_text(json.dumps(trusted, indent=2, sort_keys=True), encoding="utf-8")
        return ProjectFileState(project_file, "trusted", state.sha256)


def project_trust(config_dir: Path | None = None) -> ProjectTrust:
    return ProjectTrust((config_dir or user_config_dir()) / "trusted_projects.json")


# -- everything together -------------------------------------------------------------------------------------


def load_mcp_config(
    root: Path,
    trait_servers: Mapping[str, Any] | None = None,
    denied: Iterable[str] = (),
    config_dir: Path | None = None,
) -> McpConfig:
    """The servers to offer, from the user file, the trait and the trusted project file, in that order.

    A later source only adds names no earlier source used, except the trait: the administrator may override.
    """
    config_dir = config_dir or user_config_dir()
    result = McpConfig()
    by_name: dict[str, McpServerSpec] = {}

    def add(specs: list[McpServerSpec], problems: list[ConfigProblem], *, override: bool) -> None:
        result.problems.extend(problems)
        for spec in specs:
            if override or spec.name not in by_name:
                by_name[spec.name] = spec
            else:
                result.problems.append(
                    ConfigProblem(
                        spec.source, "ignored: a server of this name is already configured", spec.name
                    )
                )

    user_file = config_dir / "mcp.json"
    if user_file.is_file():
        add(*_parse_file(user_file, "user"), override=False)
    if trait_servers:
        add(*parse_servers(dict(trait_servers), "config"), override=True)
    result.project = project_trust(config_dir).state(root / PROJECT_FILE)
    if result.project.status == "trusted":
        specs, problems = _parse_file(result.project.path, "project")
        if problems and not specs:
            result.project.status = "invalid"
        add(specs, problems, override=False)
    elif result.project.status in ("untrusted", "changed"):
        why = "is not trusted yet" if result.project.status == "untrusted" else "changed since it was trusted"
        result.problems.append(
            ConfigProblem(
                "project", f"{result.project.path} {why}; its servers are not started until you trust it"
            )
        )
        # Read only to show the user what trusting it would start.
        specs, _ = _parse_file(result.project.path, "project")
        result.untrusted = [spec for spec in specs if spec.name not in by_name]
    denied_names = set(denied)
    for spec in by_name.values():
        is_denied = spec.name in denied_names or "*" in denied_names
        (result.denied if is_denied else result.servers).append(spec)
    return result


def _parse_file(path: Path, source: Source) -> tuple[list[McpServerSpec], list[ConfigProblem]]:
    try:
        document = _read_json(path)
    except (OSError, ValueError) as error:
        return [], [ConfigProblem(source, f"{path}: {error}")]
    specs, problems = parse_servers(document, source)
    return specs, [ConfigProblem(p.source, f"{path}: {p.message}", p.server) for p in problems]
