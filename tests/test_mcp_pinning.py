"""A trusted project MCP config pins the files its servers run (issue 24, class 5).

The project's ``.hdsp/mcp.json`` starts ``python srv.py``; ``srv.py`` lives in the project, where a command
that ran without asking could rewrite it. Trusting the config pins ``srv.py`` too: a changed script makes the
project untrusted again (naming the file), writes to it always ask, and sandboxed commands see it read-only.
Real files, a real MCP server (our demo server, copied into the project) and real bubblewrap.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.mcp.config import load_mcp_config, project_trust
from hdsp_agent.mcp.manager import McpManager
from hdsp_agent.permissions.policy import build_policy
from hdsp_agent.permissions.protected import configure_run_later_files
from hdsp_agent.sandbox import Sandbox, SandboxSettings
from hdsp_agent.tools.base import PermissionAction, PermissionKind
from hdsp_agent.tools.registry import ToolRegistry

DEMO = Path(__file__).parent / "mcp_servers" / "demo_server.py"


@pytest.fixture(autouse=True)
def _no_files_left_installed() -> Iterator[None]:
    yield
    configure_run_later_files({})  # process-wide: the next test starts without this one's files


def make_project(root: Path, marker: Path) -> Path:
    """A project whose trusted ``.hdsp/mcp.json`` runs ``python srv.py`` (the demo server)."""
    (root / ".hdsp").mkdir(parents=True)
    shutil.copy(DEMO, root / "srv.py")
    entry = {"command": sys.executable, "args": ["srv.py"], "env": {"DEMO_PID_FILE": str(marker)}}
    path = root / ".hdsp" / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"proj": entry}}))
    return path


def test_trusting_pins_the_script_and_a_changed_script_is_untrusted_again(tmp_path: Path) -> None:
    root, config_dir = tmp_path / "project", tmp_path / "config"
    project_file = make_project(root, tmp_path / "marker")
    trust = project_trust(config_dir)
    state = trust.trust(project_file)
    assert state.pinned == ("srv.py",)
    assert [spec.name for spec in load_mcp_config(root, config_dir=config_dir).servers] == ["proj"]
    # A sandboxed command (or anything else) rewrites the script; the config itself is unchanged.
    (root / "srv.py").write_text("print('payload')\n")
    state = trust.state(project_file)
    assert state.status == "changed" and state.changed_files == ("srv.py",)
    config = load_mcp_config(root, config_dir=config_dir)
    assert config.servers == [] and [spec.name for spec in config.untrusted] == ["proj"]
    assert any("srv.py" in problem.message for problem in config.problems), "says which file changed"
    # Trusting again (the user looked) pins the new content.
    assert trust.trust(project_file).status == "trusted"


def test_a_trust_from_before_pinning_asks_again_when_the_config_runs_project_files(tmp_path: Path) -> None:
    root, config_dir = tmp_path / "project", tmp_path / "config"
    project_file = make_project(root, tmp_path / "marker")
    digest = project_trust(config_dir).state(project_file).sha256
    config_dir.mkdir()
    (config_dir / "trusted_projects.json").write_text(json.dumps({str(project_file.resolve()): digest}))
    state = project_trust(config_dir).state(project_file)
    assert state.status == "changed" and state.changed_files == ("srv.py",)


@pytest.mark.asyncio
async def test_after_the_script_changes_the_server_does_not_start(tmp_path: Path) -> None:
    root, config_dir, marker = tmp_path / "project", tmp_path / "config", tmp_path / "marker"
    project_file = make_project(root, marker)
    project_trust(config_dir).trust(project_file)
    (root / "srv.py").write_text(
        f"open({str(tmp_path / 'payload-ran')!r}, 'w').write('x')\n" + DEMO.read_text()
    )
    manager = McpManager(ToolRegistry(), root_dir=root, config_dir=config_dir)
    try:
        await manager.refresh()  # even the user's "connect every server" leaves it down
        assert await manager.load(["proj__echo"]) is False
        states = {server["name"]: server["state"] for server in manager.status()["servers"]}
    finally:
        await manager.close()
    assert states == {"proj": "untrusted"}
    assert not marker.exists() and not (tmp_path / "payload-ran").exists()


def test_writes_to_the_script_always_ask(tmp_path: Path) -> None:
    """Edit tools (even in accept-edits mode, even with an allow rule) and shell redirects ask."""
    root, config_dir = tmp_path / "project", tmp_path / "config"
    project_trust(config_dir).trust(make_project(root, tmp_path / "marker"))
    McpManager(ToolRegistry(), root_dir=root, config_dir=config_dir)  # reads the config: installs srv.py
    config = HdspAgentConfig(allow_rules=["write_file"], permission_mode="accept-edits")
    policy = build_policy(config, root, permissions_file=tmp_path / "permissions.json")
    write = PermissionAction(PermissionKind.FILE_WRITE, "srv.py", "")
    decision = policy.check("write_file", {"filepath": "srv.py"}, write, root)
    assert decision.decision == "ask" and "MCP server 'proj'" in " ".join(decision.reasons)
    for command in ("echo x >> srv.py", "cp other.py srv.py", "sed -i s/a/b/ srv.py"):
        shell = PermissionAction(PermissionKind.EXECUTE, command)
        assert policy.check("run_terminal_command", {"command": command}, shell, root).decision == "ask"
    other = PermissionAction(PermissionKind.FILE_WRITE, "other.py", "")
    assert policy.check("write_file", {"filepath": "other.py"}, other, root).decision == "allow"


@pytest.mark.parametrize("layer", ["bubblewrap", "landlock"])
def test_a_sandboxed_command_cannot_rewrite_the_script(tmp_path: Path, layer: str) -> None:
    root, config_dir = tmp_path / "project", tmp_path / "config"
    project_trust(config_dir).trust(make_project(root, tmp_path / "marker"))
    (root / "other.py").write_text("")
    McpManager(ToolRegistry(), root_dir=root, config_dir=config_dir)
    before = (root / "srv.py").read_bytes()
    sandbox = Sandbox(SandboxSettings(layer=layer))  # type: ignore[arg-type]
    if sandbox.status.layer != layer:
        pytest.skip(f"SANDBOX LAYER {layer.upper()} NOT AVAILABLE HERE: {sandbox.status.reason}")
    command = "echo 'print(1)' >> srv.py; echo append=$?; rm -f srv.py; echo rm=$?; echo x > other.py"
    prepared = sandbox.prepare(command, root, root, "sandboxed", os.environ)
    try:
        done = subprocess.run(
            prepared.argv, env=prepared.env, cwd=prepared.cwd, capture_output=True, text=True, timeout=60
        )
    finally:
        prepared.cleanup()
    assert "append=0" not in done.stdout and "rm=0" not in done.stdout, (done.stdout, done.stderr)
    assert (root / "srv.py").read_bytes() == before
    assert (root / "other.py").read_text() == "x\n", "the rest of the project stays writable"
