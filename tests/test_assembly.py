"""One assembly (``hdsp_agent/assembly.py``) for the server, the CLI and the tests: the same settings give the
same sandbox, built once and shared by the policy (run modes) and the tools (running commands in it); nothing
else builds the long-lived objects. A real Jupyter server (pytest-jupyter) for the server's side.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config

from hdsp_agent import assembly
from hdsp_agent.assembly import Assembly, assemble
from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.tools.base import ToolContext
from hdsp_agent.tools.builtin.terminal import RunTerminalCommandTool

PACKAGE = Path(__file__).resolve().parent.parent / "hdsp_agent"
SANDBOX_TRAITS = {
    "sandbox_network_allowlist": ["pypi.org"],
    "sandbox_max_processes": 77,
    "sandbox_read_only_paths": ["/srv/shared"],
}


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"hdsp_agent": True}},
        "HdspAgentApp": {**SANDBOX_TRAITS, "permissions_file": str(tmp_path / "permissions.json")},
    }


def terminal_sandbox(built: Assembly) -> Any:
    tool = built.registry.get("run_terminal_command")
    assert isinstance(tool, RunTerminalCommandTool)
    return tool.sandbox


def test_the_server_and_the_cli_choose_the_same_sandbox_for_the_same_settings(
    jp_serverapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = jp_serverapp.web_app.settings["hdsp_agent"]
    server: Assembly = app.assembly
    built: list[Any] = []
    real = assembly.sandbox_from_config

    def counted(config: object) -> Any:
        built.append(real(config))
        return built[-1]

    monkeypatch.setattr(assembly, "sandbox_from_config", counted)
    config = HdspAgentConfig(
        config=Config({"HdspAgentConfig": {**SANDBOX_TRAITS, "permissions_file": str(tmp_path / "p.json")}})
    )
    root = tmp_path / "project"
    root.mkdir()
    cli = assemble(config, root, lambda **overrides: ToolContext(root_dir=root, **overrides))

    assert len(built) == 1  # built once per assembly
    assert cli.sandbox.settings == server.sandbox.settings
    assert cli.sandbox.settings.limits.max_processes == 77
    assert cli.sandbox.settings.network_allowlist == ("pypi.org",)
    assert cli.sandbox.status == server.sandbox.status
    for each in (server, cli):
        # One object: the tools run commands in the sandbox whose status the policy decides by.
        assert terminal_sandbox(each) is each.sandbox
        assert each.rule_policy.sandbox is each.sandbox.status
        assert each.runtime.state is each.state and each.runtime.registry is each.registry
    assert app.os_sandbox is server.sandbox and app.policy is server.policy and app.runtime is server.runtime


# Only the assembly builds these; everything else asks it (a second builder is how two sandboxes happen).
BUILT_ONLY_BY_THE_ASSEMBLY = {
    "sandbox_from_config",
    "build_policy",
    "AgentRuntime",
    "ToolState",
    "McpManager",
}
# Where each is defined, or builds a default when called without one (the registry for listing definitions).
ALLOWED = {
    "assembly.py",
    "sandbox/runner.py",
    "permissions/policy.py",
    "tools/defaults.py",
    "agent/runtime.py",
    "tools/state.py",
}


def test_nothing_but_the_assembly_builds_the_long_lived_objects() -> None:
    offenders: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        if "labextension" in path.parts or where in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in BUILT_ONLY_BY_THE_ASSEMBLY:
                    offenders.append(f"{where}:{node.lineno} {name}")
    assert offenders == []
