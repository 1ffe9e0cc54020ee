"""Administrator configuration, read from Jupyter's config files by the server and the CLI alike.

Set as ``c.HdspAgentApp.<trait>`` in ``jupyter_server_config.py`` (or ``.json``). The values are for the
administrator; per-user UI preferences live in ``schema/plugin.json``, and secrets never leave the server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode
from traitlets.config import Config, Configurable

from .tools.executor import ExecutorSettings
from .tools.output import OutputBudget

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
    models = List(
        Dict(),
        default_value=[],
        config=True,
        help="More models the user can pick from: [{'name', 'model', 'base_url'?, 'api_key'?, "
        "'context_window'?, 'vision'?, 'extra_headers'?}]. The first is the default when 'model' is empty.",
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
        32_768, config=True, help="The model's context size in tokens; old tool outputs are elided to fit."
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

    def executor_settings(self) -> ExecutorSettings:
        return ExecutorSettings(
            default_timeout=self.tool_timeout,
            error_message_limit=self.error_message_limit,
            output_budget=OutputBudget(max_chars=self.output_budget_chars),
        )


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
    return HdspAgentConfig(config=section)
