"""Protected paths (DESIGN.md §4, layer 3): files no tool writes without the user's word, whatever the mode
or the rules say. The one owner of "which paths are protected"; the policy (every tool's write or delete)
and the shell analyser (redirects, ``cp``/``mv``/``tee`` targets, deletions) both ask it.

Two levels:

- **never** (deny): hdsp-agent's own permission, trust and MCP files, its conversation store, configured key
  files, and Jupyter's config, data and runtime directories (``jupyter_core.paths``), plus Jupyter server
  configuration files (``jupyter_server_config.py`` …) wherever they are — ``jupyter lab`` loads the one in
  its working directory too. Writing any of them would let the agent grant itself the shell, start a
  program at the next launch, or run code in the server.
- **always ask**: files that change what runs later or what the agent is told — rules loaded into every
  future system prompt or followed on demand (``.hdsp/``, ``.agents/`` skills, ``.continue/``), git's
  ``config``, ``hooks`` and the ``.git`` pointer file, shell start-up files, ``~/.ssh``, editor tasks
  (``.vscode/``, ``.devcontainer/``), IPython and Jupyter configuration (``.ipython/``, ``.jupyter/`` at any
  depth), Python's ``sitecustomize``/``*.pth`` hooks (``.pth`` anywhere in the project), the instruction
  files at the root (``AGENTS.md``, ``CLAUDE.md``, ``.cursorrules``: ``instruction_places.py``), and every
  file that may hold secrets — and, by what lies around a project path (``runs_later.py``), modules that
  stand in for what Python imports next to a notebook or at the root, anything in a virtualenv or conda env,
  what an instruction file links to. Only the user's
  approval of that very call lets it through: not accept-edits mode, not an allow rule, not a grant for the
  session.

Names are compared case-insensitively with trailing spaces and dots ignored (``sensitive.normalize_name``);
paths arrive resolved (symlinks and ``..``), and the name as given is checked too. A protected directory
that contains the project root is not protected as a whole (the project would be read-only); the named
files inside it still are.

The administrator extends both lists (``protected_paths_extra``: always ask, ``denied_paths_extra``:
never) with gitignore-style patterns or absolute paths; ``configure`` installs them, from ``build_policy``,
for the server and the CLI alike.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pathspec

from ..instruction_places import INSTRUCTION_FILES
from ..user_text import user_text
from . import runs_later, sensitive
from .findings import Finding, deny, protect
from .sensitive import normalized_parts

Level = Literal["deny", "ask"]

# fmt: off
# Jupyter configuration files: loaded (and, for .py, executed) by the next Jupyter server from its config
# path or its working directory.
JUPYTER_CONFIG_NAMES = frozenset(
    f"{stem}.{suffix}"
    for stem in ("jupyter_server_config", "jupyter_notebook_config", "jupyter_lab_config", "jupyter_config")
    for suffix in ("py", "json")
)
# Directories whose contents change what runs or what the agent is told, at any depth.
ASK_DIRS = frozenset({
    ".hdsp", ".agents", ".continue", ".ssh", ".vscode", ".devcontainer", ".ipython", ".jupyter",
})
# Files run by shells, git, Python, editors or direnv on their own.
ASK_NAMES = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".inputrc",
    ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".login",
    ".logout", ".envrc", ".gitconfig", ".pythonrc", ".pythonrc.py", "sitecustomize.py", "usercustomize.py",
    "ipython_config.py", "ipython_kernel_config.py", "pip.conf", "pip.ini", ".curlrc", ".wgetrc", ".vimrc",
    ".exrc",
})
# Runs of components (a directory or a file) with the same effect.
ASK_SEQUENCES: tuple[tuple[str, ...], ...] = (
    (".config", "fish"), (".config", "git"), (".config", "pip"), (".config", "autostart"),
    (".config", "systemd"), (".config", "direnv"), (".local", "bin"),
)
# fmt: on
_SITE_DIRS = frozenset({"site-packages", "dist-packages"})
# The instruction files the rules loader reads at the project root (nowhere else), compared as names are.
_INSTRUCTION_NAMES = frozenset(sensitive.normalize_name(name) for name in INSTRUCTION_FILES)


@dataclass(frozen=True)
class Protection:
    level: Level
    reason: str

    def finding(self, verb: str, shown: str) -> Finding:
        """The policy's finding for ``verb`` (``writes``, ``deletes``) on ``shown`` (the path as given)."""
        text = user_text("%1 %2: %3", verb, shown, self.reason)
        return deny(text) if self.level == "deny" else protect(text)


# -- where things are --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdminPaths:
    """What the configuration adds: files the agent itself relies on, and the administrator's patterns."""

    own_files: tuple[str, ...] = ()  # e.g. a permissions_file or api_key_file outside the default places
    secret_files: tuple[str, ...] = ()  # key files: also secrets to read
    ask_patterns: tuple[str, ...] = ()
    deny_patterns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Locations:
    """Absolute, resolved places (strings: compared by prefix, on every path of every call)."""

    never_dirs: tuple[tuple[str, str], ...]  # (directory, why)
    never_files: tuple[tuple[str, str], ...]  # (file, why)
    secret_dirs: tuple[str, ...]  # reading anything inside is reading a secret
    secret_files: tuple[str, ...]
    ask_spec: pathspec.GitIgnoreSpec | None
    ask_absolute: tuple[str, ...]
    deny_spec: pathspec.GitIgnoreSpec | None
    deny_absolute: tuple[str, ...]


_admin = AdminPaths()
# Environment variables jupyter_core, the home directory and IPython read: the locations follow them (tests
# and JupyterHub set them per user), so they key the cache.
_ENV_KEYS = (
    "HOME", "JUPYTER_CONFIG_DIR", "JUPYTER_CONFIG_PATH", "JUPYTER_DATA_DIR", "JUPYTER_PATH",
    "JUPYTER_RUNTIME_DIR", "JUPYTER_PREFER_ENV_PATH", "JUPYTER_NO_CONFIG", "JUPYTER_PLATFORM_DIRS",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "IPYTHONDIR",
)  # fmt: skip


def configure(admin: AdminPaths, sensitive_patterns: Iterable[str] = ()) -> None:
    """Install the configured additions (``build_policy`` does, from the traits); replaces earlier ones."""
    global _admin
    _admin = admin
    sensitive.configure_extra(sensitive_patterns)


def admin_paths_from_config(config: object) -> tuple[AdminPaths, list[str]]:
    """The additions an ``HdspAgentConfig`` asks for, and its ``sensitive_patterns_extra``."""

    def listed(trait: str) -> tuple[str, ...]:
        return tuple(str(value) for value in (getattr(config, trait, None) or ()) if str(value).strip())

    def one(trait: str) -> tuple[str, ...]:
        value = str(getattr(config, trait, "") or "").strip()
        return (value,) if value else ()

    key_files = one("api_key_file") + tuple(
        str(entry["api_key_file"])
        for entry in (getattr(config, "models", None) or ())
        if isinstance(entry, dict) and entry.get("api_key_file")
    )
    admin = AdminPaths(
        own_files=one("permissions_file") + one("store_path") + key_files,
        secret_files=key_files,
        ask_patterns=listed("protected_paths_extra"),
        deny_patterns=listed("denied_paths_extra"),
    )
    return admin, list(listed("sensitive_patterns_extra"))


def locations() -> Locations:
    """The protected places for the current environment and configuration (cached per both)."""
    return _locations_for(tuple(os.environ.get(key) for key in _ENV_KEYS), _admin)


@functools.lru_cache(maxsize=8)
def _locations_for(environment: tuple[str | None, ...], admin: AdminPaths) -> Locations:
    from jupyter_core import paths as jupyter

    def real(path: str | os.PathLike[str]) -> str:
        return os.path.realpath(os.path.expanduser(str(path)))

    config_dirs = [real(jupyter.jupyter_config_dir()), *(real(p) for p in jupyter.jupyter_config_path())]
    data_dirs = [real(jupyter.jupyter_data_dir()), *(real(p) for p in jupyter.jupyter_path())]
    runtime_dir = real(jupyter.jupyter_runtime_dir())
    agent_dir = os.path.join(real(jupyter.jupyter_config_dir()), "hdsp_agent")
    # Most specific first: the runtime directory usually lies inside the data directory.
    never_dirs = (
        [(runtime_dir, "Jupyter's runtime directory (server and kernel connection files)")]
        + [(d, "Jupyter's configuration directory (the next server reads it)") for d in config_dirs]
        + [(d, "a Jupyter data directory (extensions, kernels, the notebook secret)") for d in data_dirs]
    )  # fmt: skip
    # Configured files first, so the specific reasons below win for the default places.
    own = {
        **{real(path): "a file hdsp-agent's configuration relies on" for path in admin.own_files},
        os.path.join(agent_dir, "permissions.json"): "hdsp-agent's own permission rules",
        os.path.join(agent_dir, "mcp.json"): "hdsp-agent's MCP servers (programs started at the next launch)",
        os.path.join(agent_dir, "trusted_projects.json"): "hdsp-agent's trust decisions",
    }
    secret_dirs = (*dict.fromkeys(config_dirs), real(jupyter.jupyter_data_dir()), runtime_dir)

    def split(patterns: tuple[str, ...]) -> tuple[pathspec.GitIgnoreSpec | None, tuple[str, ...]]:
        relative = [p.lower() for p in patterns if not p.startswith(("/", "~"))]
        absolute = tuple(real(p) for p in patterns if p.startswith(("/", "~")))
        return (pathspec.GitIgnoreSpec.from_lines(relative) if relative else None), absolute

    ask_spec, ask_absolute = split(admin.ask_patterns)
    deny_spec, deny_absolute = split(admin.deny_patterns)
    return Locations(
        never_dirs=tuple(dict.fromkeys(never_dirs)),
        never_files=tuple(own.items()),
        secret_dirs=secret_dirs,
        secret_files=(*(real(path) for path in admin.secret_files), os.path.join(agent_dir, "mcp.json")),
        ask_spec=ask_spec,
        ask_absolute=ask_absolute,
        deny_spec=deny_spec,
        deny_absolute=deny_absolute,
    )


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


# -- the questions ------------------------------------------------------------------------------------------


def secret_locations() -> tuple[str, ...]:
    """The absolute places whose contents are secrets (directories and files), resolved."""
    places = locations()
    return (*places.secret_dirs, *places.secret_files)


def is_secret_location(path: Path | str) -> bool:
    """Whether an absolute, resolved ``path`` is a secret by where it is: Jupyter's config, data and runtime
    directories (the API key, the server token, kernel keys), hdsp-agent's MCP file, configured key files."""
    text = str(path)
    if not os.path.isabs(text):
        return False
    places = locations()
    return text in places.secret_files or any(_inside(text, d) for d in places.secret_dirs)


def write_protection(
    path: Path, root: Path, given: str | None = None, *, delete: bool = False
) -> Protection | None:
    """How ``path`` (absolute, resolved) is protected against writes and deletes, or None.

    ``root`` is the resolved project root; ``given`` the path as the model wrote it (its names count too: a
    link called ``.bashrc`` is treated like the file it pretends to be). With ``delete``, a directory that
    holds a never-written place is protected like that place (``rm -rf .local`` when the root is ``$HOME``).
    """
    text = str(path)
    root_text = str(root)
    places = locations()
    for file, why in places.never_files:
        if text == file:
            return Protection("deny", f"{why}; the agent never writes it")
        if delete and _inside(file, text):
            return Protection("deny", f"it holds {why}, which the agent never removes")
    if delete:
        for directory, why in places.never_dirs:
            if directory != text and _inside(directory, text) and not _inside(root_text, directory):
                return Protection("deny", f"it holds {why}, which the agent never removes")
    parts = _parts_for(text, root_text)
    given_parts = normalized_parts(given) if given else []
    if parts and parts[-1] in JUPYTER_CONFIG_NAMES or given_parts and given_parts[-1] in JUPYTER_CONFIG_NAMES:
        return Protection("deny", "a Jupyter server configuration file (its code runs at the next start)")
    for directory, why in places.never_dirs:
        if _inside(text, directory) and not _inside(root_text, directory):
            return Protection("deny", f"inside {why}; the agent never writes there")
    if _matches(places.deny_spec, places.deny_absolute, parts, text):
        return Protection("deny", "protected by the administrator; the agent never writes it")
    if (run_later := _run_later_protection(text)) is not None:
        return run_later
    inside = text != root_text and _inside(text, root_text)
    for candidate in (parts, given_parts):
        reason = _ask_reason(candidate, inside)
        if reason is not None:
            return Protection("ask", reason)
    if inside and not delete and "__pycache__" in parts[:-1]:
        # Python loads a cached module instead of compiling its source when the header's size and time match
        # the source: a planted one runs on the user's next ``import utils``. (Sandboxed commands write none:
        # their environment has PYTHONDONTWRITEBYTECODE.) Deleting one is harmless.
        return Protection("ask", "compiled Python that runs in place of its source")
    if inside:
        reason = _runs_later_reason(text, root_text, given)
        if reason is not None:
            return Protection("ask", reason)
    if _matches(places.ask_spec, places.ask_absolute, parts, text):
        return Protection("ask", "protected by the administrator")
    if sensitive.matches_secret_patterns(text) or (given and sensitive.matches_secret_patterns(given)):
        return Protection("ask", "it may hold secrets")
    if is_secret_location(text):
        return Protection("ask", "it may hold secrets")
    return None


def _parts_for(text: str, root_text: str) -> list[str]:
    """The normalized components that decide by name: below the root for a path inside it (the root's own
    ancestors are the user's choice, not the agent's), else all of them."""
    if _inside(text, root_text):
        return normalized_parts(text[len(root_text) :])
    return normalized_parts(text)


def _ask_reason(parts: list[str], inside_root: bool) -> str | None:
    if not parts:
        return None
    name = parts[-1]
    if inside_root and len(parts) == 1 and name in _INSTRUCTION_NAMES:
        return "an instruction file the agent reads into every future conversation"
    for index, part in enumerate(parts):
        if part == ".git":
            below = parts[index + 1 :]
            if not below:
                return "git's pointer to the repository (a .git file redirects every git command)"
            if "hooks" in below or below[-1] == "config":
                return "git configuration or hooks (they run commands on the next git call)"
        if part in ASK_DIRS:
            return _DIR_REASONS.get(part, "a directory whose files run or instruct the agent later")
    if name in ASK_NAMES:
        return "a start-up or configuration file that runs commands later"
    if name.endswith(".pth") and (inside_root or len(parts) > 1 and parts[-2] in _SITE_DIRS):
        # Inside the project anywhere: a ``.pth`` in a venv's site-packages (found or not) or one moved there
        # later runs at every start of that interpreter.
        return "a Python path hook (it runs at every interpreter start)"
    for run in ASK_SEQUENCES:
        for index, part in enumerate(parts):
            if part == run[0] and tuple(parts[index : index + len(run)]) == run:
                return "a start-up or configuration location that runs commands later"
    return None


def _runs_later_reason(text: str, root_text: str, given: str | None) -> str | None:
    """The questions about what lies around a project path (``runs_later.py``), for the resolved path and for
    the path as given (a link named ``json.py`` next to a notebook is imported, wherever it points)."""
    places = [text]
    # Only when the names differ (a link): ``given`` may be relative to a ``cd`` of the command, not the root.
    if given and os.path.basename(given.rstrip("/")) != os.path.basename(text):
        lexical = os.path.normpath(os.path.join(root_text, os.path.expanduser(given)))
        if lexical != root_text and _inside(lexical, root_text):
            places.append(lexical)
    for place in places:
        reason = (
            runs_later.environment_reason(place, root_text)
            or runs_later.shadowing_reason(place, root_text)
            or runs_later.instruction_link_reason(place, root_text)
        )
        if reason is not None:
            return reason
    return None


_DIR_REASONS = {
    ".hdsp": "hdsp-agent's rules, skills and MCP servers (loaded into every future conversation)",
    ".agents": "the project's agent skills (their names go into every future conversation, their "
    "instructions and scripts are followed when used)",
    ".continue": "Continue's project rules (loaded into every future conversation)",
    ".ssh": "SSH keys and configuration",
    ".vscode": "editor tasks and settings (they can run commands when the folder opens)",
    ".devcontainer": "dev container configuration (it runs commands when the container is built)",
    ".ipython": "IPython's configuration and start-up scripts (they run in every kernel)",
    ".jupyter": "Jupyter's configuration (a server or kernel started with it there loads it)",
}


def _matches(
    spec: pathspec.GitIgnoreSpec | None, absolute: tuple[str, ...], parts: list[str], text: str
) -> bool:
    if spec is not None and parts and spec.match_file("/".join(parts)):
        return True
    return any(_inside(text, base) for base in absolute)


def protected_write_finding(
    path: Path | None, root: Path, given: str, verb: str = user_text("writes"), *, delete: bool = False
) -> Finding | None:
    """The shell analyser's hook: the finding for a command that writes (or deletes) ``path``, or None."""
    if path is None:
        return None
    protection = write_protection(path, root.resolve(), given, delete=delete)
    return protection.finding(verb, given) if protection is not None else None


def _secret_places_inside(root: Path) -> list[tuple[str, bool]]:
    """(path relative to ``root``, is a directory) for each secret location inside ``root``."""
    root_text = str(root)
    places = locations()
    found: list[tuple[str, bool]] = []
    for place, is_dir in [(d, True) for d in places.secret_dirs] + [(f, False) for f in places.secret_files]:
        if place != root_text and _inside(place, root_text):
            found.append((place[len(root_text) :].lstrip("/"), is_dir))
    return found


def ripgrep_location_excludes(root: Path) -> list[str]:
    """Anchored rg globs for the secret locations inside ``root`` (when the root is ``$HOME``, say)."""
    return [f"!/{relative}" for relative, _ in _secret_places_inside(root)]


def ripgrep_location_includes(root: Path) -> list[str]:
    """The same places as an rg allow-list (to count what a search skipped)."""
    places = _secret_places_inside(root)
    return [f"/{relative}/**" if is_dir else f"/{relative}" for relative, is_dir in places]


def protected_paths_under(root: Path) -> list[tuple[Path, Level]]:
    """The protected places an OS sandbox should keep read-only for a command that runs in ``root``
    (resolved): Jupyter's and hdsp-agent's places inside it, and the protected names at its top level and in
    its ``.git`` — whether they exist yet or not (a sandbox must not let a command create ``.bashrc`` either).
    Deeper copies of protected names are the policy's to catch (a sandbox cannot bind every possible path).
    """
    root_text = str(root)
    places = locations()
    found: dict[str, Level] = {}
    for place, _ in (*places.never_dirs, *places.never_files):
        if place != root_text and _inside(place, root_text):
            found[place] = "deny"
    for name in sorted(JUPYTER_CONFIG_NAMES):
        found.setdefault(os.path.join(root_text, name), "deny")
    for name in sorted(ASK_DIRS | ASK_NAMES):
        found.setdefault(os.path.join(root_text, name), "ask")
    for run in ASK_SEQUENCES:
        found.setdefault(os.path.join(root_text, *run), "ask")
    for inside_git in ("config", "hooks"):
        found.setdefault(os.path.join(root_text, ".git", inside_git), "ask")
    return [(Path(path), level) for path, level in found.items()]


# -- files configured MCP servers run ------------------------------------------------------------------------
# A configured (or trusted project) MCP server's command names files inside the project (``python
# server.py``): they run later, outside the sandbox, with the user's rights. The MCP manager installs them
# (``configure_run_later_files``) whenever it reads its configuration; writes to them always ask, and the
# OS sandbox keeps them read-only (``sandbox/protect.py``).

_run_later: dict[str, str] = {}


def configure_run_later_files(files: dict[str, str]) -> None:
    """Install the files MCP servers run: resolved absolute path → the server that runs it."""
    _run_later.clear()
    _run_later.update({str(Path(path)): server for path, server in files.items()})


def run_later_files() -> dict[str, str]:
    """The installed files (resolved path → server name), for the sandbox's read-only mounts."""
    return dict(_run_later)


def _run_later_protection(text: str) -> Protection | None:
    server = _run_later.get(text)
    if server is None:
        return None
    return Protection(
        "ask",
        user_text("the MCP server %1 runs it (outside the sandbox) when it starts", repr(server)),
    )
