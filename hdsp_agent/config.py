"""Administrator configuration, read from Jupyter's config files by the server and the CLI alike.

Set as ``c.HdspAgentApp.<trait>`` in ``jupyter_server_config.py`` (or ``.json``). The values are for the
administrator; per-user UI preferences live in ``schema/plugin.json``, and secrets never leave the server.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode
from traitlets.config import Config, Configurable

from .admin_config import apply_admin_settings, load_admin_settings
from .agent.quotas import Quotas
from .audit.log import AuditLog
from .tools.executor import ExecutorSettings
from .tools.output import OutputBudget
from .tools.redaction import SecretRedactor, environment_secrets

# The section name administrators write; the server app's own class name.
CONFIG_SECTION = "HdspAgentApp"


class HdspAgentConfig(Configurable):
    """Traits shared by the server extension and the ``hdsp-agent`` CLI."""

    tool_timeout = Float(
        120.0, config=True, help="Default seconds a tool call may run before it is stopped (E_TOOL_TIMEOUT)."
    )
    error_message_limit = Int(
        1000, config=True, help="Error messages sent to the model are cut to this many characters."
    )
    output_budget_chars = Int(
        30_000,
        config=True,
        help="At most this many characters of one tool result reach the model (head and tail are kept).",
    )
    disabled_tools = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Tools never offered to the model nor callable, whatever the user's settings.",
    )

    # -- permissions: the administrator's floor (docs/permissions.md) ----------------------------------------
    deny_rules = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Rules no one can loosen, e.g. ['run_terminal_command(curl*)', 'read_file(**/*.pem)', "
        "'myserver__*']: matching calls are denied whatever the user's rules or approvals say.",
    )
    ask_rules = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Rules that always ask the user, e.g. ['run_terminal_command(git push*)']; neither the user's "
        "allow rules nor 'allow for this session' lift them.",
    )
    allow_rules = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Rules allowed without asking unless the user's own deny or ask rules say otherwise, e.g. "
        "['run_terminal_command(pytest*)'].",
    )
    url_allowlist = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Hosts, '*.domain' suffixes, IPs or CIDRs the agent may fetch without asking, including "
        "internal ones the SSRF guard refuses otherwise (a cloud metadata address only when named exactly).",
    )
    permission_mode = Enum(
        ["default", "accept-edits", "read-only"],
        default_value="default",
        config=True,
        help="The mode until the user picks one: 'default' (edits ask), 'accept-edits' (file edits inside "
        "the root run without asking), 'read-only' (only reading tools are offered).",
    )
    protected_paths_extra = List(
        Unicode(),
        default_value=[],
        config=True,
        help="More paths no tool writes or deletes without the user's approval of that very call (no rule or "
        "mode lifts it): gitignore-style patterns matched below the project root at any depth (e.g. "
        "['deploy/', '*.service']) or absolute paths ('/srv/shared', '~/bin').",
    )
    denied_paths_extra = List(
        Unicode(),
        default_value=[],
        config=True,
        help="More paths the agent never writes or deletes (same forms as protected_paths_extra).",
    )
    sensitive_patterns_extra = List(
        Unicode(),
        default_value=[],
        config=True,
        help="More files that hold secrets: reading one asks, and search, glob, map and index tools skip "
        "them. Gitignore-style patterns (e.g. ['*.secret', 'config/prod/']) or absolute paths.",
    )
    # -- the OS sandbox (docs/permissions.md, "Sandbox") -----------------------------------------------------
    sandbox = Enum(
        ["auto", "bubblewrap", "landlock", "none"],
        default_value="auto",
        config=True,
        help="The OS sandbox for shell commands: 'auto' (bubblewrap, else Landlock, else none), one layer, "
        "or 'none'. Without a sandbox only inert commands run without asking.",
    )
    sandbox_required = Bool(
        False,
        config=True,
        help="True: a shell command never runs outside the sandbox (no 'unsandboxed' approvals); with no "
        "sandbox available, run_terminal_command is refused with the reason.",
    )
    sandbox_read_only_paths = List(
        Unicode(),
        default_value=[],
        config=True,
        help="More paths a sandboxed command may read but never write or create (relative to the project "
        "root, or absolute), besides .hdsp, .continue, .vscode, .jupyter, .ipython, AGENTS.md, CLAUDE.md, "
        ".cursorrules, .git/config, .git/hooks and the project's virtualenvs.",
    )
    sandbox_masked_paths = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Existing paths a sandboxed command cannot see (an empty directory or file stands in), besides "
        "Jupyter's config, data and runtime directories.",
    )
    sandbox_home_paths = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Paths of the real home shown read-only in a sandboxed command's scratch home (e.g. "
        "'~/.gitconfig'); nothing else of the home is visible.",
    )
    sandbox_network_allowlist = List(
        Unicode(),
        default_value=None,
        allow_none=True,
        config=True,
        help="Hosts a shell command approved to run with network may reach ('pypi.org', "
        "'*.pythonhosted.org'): the command keeps its own empty network and goes through a filtering "
        "proxy on a Unix socket (HTTP_PROXY/HTTPS_PROXY). None: the host's whole network. Needs the "
        "bubblewrap layer.",
    )
    sandbox_max_processes = Int(
        256, config=True, help="A sandboxed command with more processes than this at once is stopped."
    )
    sandbox_max_file_bytes = Int(
        1024**3, config=True, help="Largest file a sandboxed command may write (RLIMIT_FSIZE), in bytes."
    )
    sandbox_cpu_seconds = Int(
        3600, config=True, help="CPU seconds each process of a sandboxed command may use (RLIMIT_CPU)."
    )
    permissions_file = Unicode(
        "",
        config=True,
        help="The user's rules file. Empty: <jupyter config dir>/hdsp_agent/permissions.json.",
    )

    # -- the model -------------------------------------------------------------------------------------------
    model = Unicode(
        "",
        config=True,
        help="Model name sent to the endpoint (e.g. 'gpt-4o-mini', 'llama3.1'). Empty: no model configured "
        "yet.",
    )
    base_url = Unicode(
        "",
        config=True,
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1. Empty: $OPENAI_BASE_URL, else "
        "OpenAI.",
    )
    api_key = Unicode(
        "",
        config=True,
        help="API key for the endpoint (kept on the server). Empty: $OPENAI_API_KEY; local servers need "
        "none.",
    )
    api_key_file = Unicode(
        "",
        config=True,
        help="A file holding the API key, read at each request (a rotated key needs no restart). Prefer it "
        "to api_key or $OPENAI_API_KEY: a key in the server's environment or command line can be read by "
        "every process the server starts (/proc/<pid>/environ). The agent never reads or writes this file.",
    )
    models = List(
        Dict(),
        default_value=[],
        config=True,
        help="More models the user can pick from: [{'name', 'model', 'base_url'?, 'api_key'?, "
        "'api_key_file'?, 'context_window'?, 'vision'?, 'profile'?, 'tool_calls'?, 'price_per_mtok_in'?, "
        "'price_per_mtok_out'?, 'extra_headers'?}]. The first is the "
        "default when 'model' is empty.",
    )
    extra_headers = Dict(
        per_key_traits=None,
        default_value={},
        config=True,
        help="Extra HTTP headers sent to the model endpoint.",
    )
    request_timeout = Float(120.0, config=True, help="Seconds to wait for the model before giving up.")
    max_retries = Int(
        3, config=True, help="Retries (with backoff, honouring Retry-After) on 429/5xx/connection errors."
    )
    context_window = Int(
        0,
        config=True,
        help="The model's context size in tokens. 0: ask the server (Ollama, vLLM, llama.cpp, LM Studio), "
        "else 32,768. Requests are compacted to fit it.",
    )
    completion_model = Unicode(
        "",
        config=True,
        help="The model for inline completion in cells and editors: a name from 'models', or a model on the "
        "same endpoint as the chat model (a small local one is the usual choice). Empty: the chat model. The "
        "user's choice in the sidebar's model setup comes first.",
    )
    profile = Unicode(
        "auto",
        config=True,
        help="Tools offered to the model: 'compact' (4k-16k windows), 'standard' (to 64k), 'full'; 'auto' "
        "chooses by the context window. Per model: 'profile' in a models entry.",
    )
    tool_calls = Unicode(
        "auto",
        config=True,
        help="How the model calls tools: 'native' (OpenAI tool calls), 'text' (tools described in the system "
        "prompt, calls read from the answer: for models that cannot call tools natively), 'auto' (native "
        "unless the readiness check, the server's metadata or a refusal of tools says otherwise). Per model: "
        "'tool_calls' in a models entry.",
    )
    web_tools = Bool(
        False,
        config=True,
        help="Offer the web tools (fetch_url_content; search_web when search_backend_url is set) to the "
        "model.",
    )
    context_warning_share = Float(
        0.5,
        config=True,
        help="Warn in the sidebar when the system prompt and tool schemas take more than this share of the "
        "model's context window.",
    )
    vision = Bool(
        False, config=True, help="Whether the model accepts images (cell outputs are then sent as images)."
    )
    max_steps = Int(
        25, config=True, help="Model calls per turn before the agent stops and asks the user to continue."
    )
    tool_call_limits = Dict(
        default_value={},
        config=True,
        help="Per-tool caps on calls per turn, e.g. {'run_terminal_command': 10}.",
    )
    probe_local_models = Bool(
        True,
        config=True,
        help="When no model is configured, look for Ollama, LM Studio, llama.cpp and vLLM on 127.0.0.1.",
    )
    v1_disabled_tools = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Tools removed from requests to the OpenAI-compatible endpoint /hdsp-agent/v1 (e.g. "
        "['run_terminal_command']), so the model behind it is never offered them.",
    )
    v1_enabled = Bool(
        True,
        config=True,
        help="Serve the OpenAI-compatible endpoint /hdsp-agent/v1 (its calls count against "
        "daily_token_limit and are audited). False: it answers 403 saying the administrator turned it off.",
    )
    v1_pass_through_models = Bool(
        False,
        config=True,
        help="Let clients of /hdsp-agent/v1 name a model hdsp-agent does not list: the request goes to the "
        "default model's endpoint with that name (off: the default model answers instead).",
    )
    allow_user_models = Bool(
        True,
        config=True,
        help="Let users choose the model endpoint, model and key in the sidebar (saved in their Jupyter "
        "config dir, mode 0600). False: only the administrator's models, and the setup screen says who to "
        "ask. An admin.json that fixes model, base_url or models sets it False unless it sets it itself.",
    )
    admin_contact = Unicode(
        "",
        config=True,
        help="Who users should ask about models when allow_user_models is False (a name, an address, a URL).",
    )
    search_backend_url = Unicode(
        "",
        config=True,
        help="A SearXNG-compatible JSON search endpoint (GET ?q=...&format=json). Empty: no search_web tool.",
    )
    secret_env_names = List(
        Unicode(),
        default_value=[],
        config=True,
        help="More environment variables removed from run_terminal_command's environment (model keys, "
        "*_TOKEN, *_SECRET and *_API_KEY are always removed).",
    )
    store_path = Unicode(
        "",
        config=True,
        help="SQLite file for conversations. Empty: hdsp_agent/sessions.sqlite3 in the Jupyter data dir.",
    )
    undo_history_mb = Float(
        256.0,
        config=True,
        help="Undo history (checkpoints, redo, the prior content of changed files and notebooks) kept in the "
        "conversation store, over all conversations, in MB. Past it the oldest checkpoints are removed first "
        "(the conversation says so). 0: no limit.",
    )

    # -- MCP and declared tools ------------------------------------------------------------------------------
    mcp_servers = Dict(
        default_value={},
        config=True,
        help="MCP servers in the common format: {'mcpServers': {name: {'command', 'args', 'env', 'cwd'} | "
        "{'url', 'headers'}, plus 'disabled', 'autoApprove': [tool, ...], 'timeout': seconds}}. Added to the "
        "user's <jupyter config dir>/hdsp_agent/mcp.json; a project's .hdsp/mcp.json is used once the user "
        "trusts it.",
    )
    mcp_denied_servers = List(
        Unicode(),
        default_value=[],
        config=True,
        help="MCP server names never started, from whichever file configures them ('*' denies every server).",
    )
    mcp_endpoint_enabled = Bool(
        True,
        config=True,
        help="Serve hdsp-agent's tools over MCP (Streamable HTTP) at /hdsp-agent/mcp, behind Jupyter "
        "authentication.",
    )
    custom_tools = List(
        Dict(),
        default_value=[],
        config=True,
        help="Python tools: [{'name', 'entry': 'python.module', 'exports': [{'name', 'description', "
        "'parameters', 'handler'?, 'readOnly'?}]}], offered as name__export; a handler is 'async def "
        "handler(ctx, input)'.",
    )
    http_tools = List(
        Dict(),
        default_value=[],
        config=True,
        help="HTTP tools (Continue's URI tools): [{'name', 'description', 'parameters', 'url', 'headers'?}]; "
        "a call POSTs {'arguments': ...} to the URL and returns the answer's 'output'.",
    )

    # -- audit and quotas (docs/deploy.md) ------------------------------------------------------------------
    audit_enabled = Bool(
        True, config=True, help="Write the audit log: every tool call with its decision and every model call."
    )
    audit_log_path = Unicode(
        "",
        config=True,
        help="The audit log (JSON lines). Empty: hdsp_agent/audit.jsonl in the Jupyter data dir.",
    )
    audit_log_max_bytes = Int(
        5 * 1024 * 1024, config=True, help="The audit log rotates when it would pass this size."
    )
    audit_log_backups = Int(5, config=True, help="Rotated audit files kept (audit.jsonl.1 .. .N).")
    max_concurrent_turns = Int(
        0,
        config=True,
        help="Turns that may run at once on this server, over all conversations (0: no limit).",
    )
    daily_token_limit = Int(
        0,
        config=True,
        help="Model tokens (prompt + completion) this server may use per day, local time (0: no limit). "
        "Counted from the model's reported usage, else estimated at 4 characters a token.",
    )

    # The settings admin.json fixed (``admin_config.apply_admin_settings``); none until it ran.
    admin_fixed: frozenset[str] = frozenset()

    def open_audit_log(self) -> AuditLog | None:
        """The audit log as configured; None when ``audit_enabled`` is off."""
        if not self.audit_enabled:
            return None
        return AuditLog(self.audit_log(), max_bytes=self.audit_log_max_bytes, backups=self.audit_log_backups)

    def open_quotas(self) -> Quotas:
        """The user's quotas, with the day's token count shared by every door (sidebar, ``/v1``, CLI)."""
        return Quotas(
            max_turns=self.max_concurrent_turns,
            daily_tokens=self.daily_token_limit,
            usage_path=self.data_file("", "usage.json"),
        )

    def data_file(self, configured: str, name: str) -> Path:
        from jupyter_core.paths import jupyter_data_dir

        return Path(configured).expanduser() if configured else Path(jupyter_data_dir()) / "hdsp_agent" / name

    def audit_log(self) -> Path:
        return self.data_file(self.audit_log_path, "audit.jsonl")

    def executor_settings(self) -> ExecutorSettings:
        return ExecutorSettings(
            default_timeout=self.tool_timeout,
            error_message_limit=self.error_message_limit,
            output_budget=OutputBudget(max_chars=self.output_budget_chars),
            redactor=SecretRedactor(self.known_secrets),
        )

    def known_secrets(self) -> list[str]:
        """Values no tool result may carry to the model (``tools/redaction.py``): the configured model keys
        (key files read now) and the values of this process's secret-named environment variables."""
        from .agent.llm import ModelError, read_api_key_file
        from .tools.builtin.terminal import SECRET_NAME_PATTERNS

        values = [self.api_key, *(str(entry.get("api_key") or "") for entry in self.models)]
        for path in (self.api_key_file, *(str(entry.get("api_key_file") or "") for entry in self.models)):
            if path:
                try:
                    values.append(read_api_key_file(path))
                except ModelError:
                    pass
        values += environment_secrets(os.environ, (*SECRET_NAME_PATTERNS, *self.secret_env_names))
        return values


def load_cli_config(extra_paths: list[Path] | None = None) -> HdspAgentConfig:
    """The same ``HdspAgentApp`` settings the server would read, for commands run outside the server."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader

    merged = Config()
    search = [str(path) for path in (extra_paths or [])] + list(reversed(jupyter_config_path()))
    for directory in search:
        for loader_class, filename in (
            (JSONFileConfigLoader, "jupyter_server_config.json"),
            (PyFileConfigLoader, "jupyter_server_config.py"),
        ):
            if not (Path(directory) / filename).is_file():
                continue
            loaded: Any = loader_class(filename, path=directory).load_config()
            merged.merge(loaded)
    section = Config({"HdspAgentConfig": merged.get(CONFIG_SECTION, Config())})
    config = HdspAgentConfig(config=section)
    apply_admin_settings(config, load_admin_settings())  # the server does the same (app.py)
    return config
