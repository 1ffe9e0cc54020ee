"""Administrator configuration, read from Jupyter's config files by the server and the CLI alike.

Set as ``c.HdspAgentApp.<trait>`` in ``jupyter_server_config.py`` (or ``.json``). The values are for the
administrator; per-user UI preferences live in ``schema/plugin.json``, and secrets never leave the server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traitlets import Float, Int, List, Unicode
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
