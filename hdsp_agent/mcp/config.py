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
    # The files inside the root its servers' commands run (pinned with the file when it is trusted), and
    # those that changed (or appeared or went) since it was trusted.
    pinned: tuple[str, ...] = ()
    changed_files: tuple[str, ...] = ()

    def public(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "status": self.status,
            "sha256": self.sha256,
            "pinned_files": list(self.pinned),
            "changed_files": list(self.changed_files),
        }


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


# -- the files a server's command runs -----------------------------------------------------------------------


def server_cwd(spec: McpServerSpec, root: Path) -> Path:
    """Where the server's command runs (as ``client.py`` starts it): its ``cwd``, relative to the root."""
    cwd = Path(spec.cwd).expanduser() if spec.cwd else root
    return cwd if cwd.is_absolute() else root / cwd


def command_files(spec: McpServerSpec, root: Path) -> list[Path]:
    """The existing files inside ``root`` that starting ``spec`` runs or reads as code: every word of its
    command and arguments (and ``--option=value`` values) that names a file there, relative to its working
    directory or the root (``python server.py``, ``node dist/index.js``, ``uv run x.py``, ``./run.sh``), and
    the module of ``python -m pkg.mod``. Resolved paths, in order, without duplicates."""
    if spec.transport != "stdio":
        return []
    root_resolved = root.resolve()
    bases = list(dict.fromkeys([server_cwd(spec, root), root]))
    words = [spec.command, *spec.args]
    candidates: list[str] = []
    for index, word in enumerate(words):
        if not word or word.startswith("-") and "=" not in word:
            continue
        value = word.split("=", 1)[1] if word.startswith("-") else word
        candidates.append(value)
        if index > 0 and words[index - 1] == "-m":  # python -m pkg.mod: pkg/mod.py or pkg/mod/__main__.py
            module = value.replace(".", "/")
            candidates += [f"{module}.py", f"{module}/__main__.py", f"{module}/__init__.py"]
    found: list[Path] = []
    for candidate in candidates:
        for base in bases:
            path = Path(candidate).expanduser()
            path = path if path.is_absolute() else base / path
            try:
                resolved = path.resolve()
                is_file = resolved.is_file()
            except (OSError, RuntimeError, ValueError):
                continue
            if is_file and root_resolved in resolved.parents and resolved not in found:
                found.append(resolved)
    return found


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def pinned_digests(specs: Iterable[McpServerSpec], root: Path) -> dict[str, str]:
    """Root-relative path → SHA-256 of each file the servers' commands run (``command_files``)."""
    root_resolved = root.resolve()
    pins: dict[str, str] = {}
    for spec in specs:
        for path in command_files(spec, root):
            pins[path.relative_to(root_resolved).as_posix()] = _file_digest(path)
    return pins


# -- project trust -------------------------------------------------------------------------------------------


class ProjectTrust:
    """The project files the user trusted, in the user config dir: per file, the SHA-256 of the content they
    saw and of every file inside the root its servers' commands run (``pinned_digests``), so a changed
    script (``python server.py``) is as untrusted as a changed config. An entry from before files were
    pinned (a bare digest) pins none: a config whose servers run files of the project asks again."""

    def __init__(self, store: Path) -> None:
        self.store = store

    def _trusted(self) -> dict[str, Any]:
        try:
            value = _read_json(self.store)
        except (OSError, ValueError):
            return {}
        return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}

    def _entry(self, project_file: Path) -> tuple[str, dict[str, str]] | None:
        known = self._trusted().get(str(project_file.resolve()))
        if isinstance(known, str):
            return known, {}
        if isinstance(known, dict) and isinstance(known.get("sha256"), str):
            files = known.get("files")
            pins = {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}
            return known["sha256"], pins
        return None

    def state(self, project_file: Path) -> ProjectFileState:
        try:
            content = project_file.read_bytes()
        except FileNotFoundError:
            return ProjectFileState(project_file, "absent")
        digest = hashlib.sha256(content).hexdigest()
        pins = self._pins(project_file, content)
        entry = self._entry(project_file)
        if entry is None:
            return ProjectFileState(project_file, "untrusted", digest, tuple(pins))
        if entry[0] != digest:
            return ProjectFileState(project_file, "changed", digest, tuple(pins))
        known_pins = entry[1]
        changed = tuple(
            sorted(name for name in {*pins, *known_pins} if pins.get(name) != known_pins.get(name))
        )
        status: ProjectStatus = "changed" if changed else "trusted"
        return ProjectFileState(project_file, status, digest, tuple(pins), changed)

    @staticmethod
    def _pins(project_file: Path, content: bytes) -> dict[str, str]:
        """The files the project file's servers run, relative to its project root (``<root>/.hdsp/..``)."""
        try:
            specs, _ = parse_servers(json.loads(content.decode("utf-8")), "project")
        except (ValueError, UnicodeDecodeError):
            return {}
        return pinned_digests(specs, project_file.resolve().parent.parent)

    def trust(self, project_file: Path, expected_sha256: str | None = None) -> ProjectFileState:
        """Trust the file as it is now; with ``expected_sha256``, only if it is still what the user saw."""
        state = self.state(project_file)
        if state.status == "absent" or state.sha256 is None:
            raise FileNotFoundError(f"{project_file} does not exist")
        if expected_sha256 is not None and expected_sha256 != state.sha256:
            raise ValueError(f"{project_file} changed since it was shown; review it again before trusting it")
        trusted = self._trusted()
        pins = self._pins(project_file, project_file.read_bytes())
        trusted[str(project_file.resolve())] = {"sha256": state.sha256, "files": pins}
        self.store.parent.mkdir(parents=True, exist_ok=True)
        self.store.write_text(json.dumps(trusted, indent=2, sort_keys=True), encoding="utf-8")
        return ProjectFileState(project_file, "trusted", state.sha256, tuple(pins))


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
        changed = result.project.changed_files
        why = (
            "is not trusted yet"
            if result.project.status == "untrusted"
            else f"changed since it was trusted (a file its servers run changed: {', '.join(changed)})"
            if changed
            else "changed since it was trusted"
        )
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
