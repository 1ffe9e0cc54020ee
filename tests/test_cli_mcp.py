"""``hdsp-agent tools call`` and ``hdsp-agent run`` with the user's MCP servers: real subprocesses, the demo
MCP server (tests/mcp_servers/demo_server.py) over stdio, configured the ways a user configures it.

Each test has its own Jupyter config dir (``JUPYTER_CONFIG_DIR``), so the user's own configuration is never
read, and the demo server writes its pid to a file so the test can check that no server outlives the command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from scripted_model import ScriptedModel, text, tool_calls

DEMO_SERVER = Path(__file__).parent / "mcp_servers" / "demo_server.py"


def hdsp_agent(*args: str, config_dir: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "JUPYTER_CONFIG_DIR": str(config_dir)},
    )


def tools_call(
    name: str, arguments: str, root: Path, config_dir: Path, *options: str
) -> subprocess.CompletedProcess[str]:
    return hdsp_agent("tools", "call", name, arguments, "--root", str(root), *options, config_dir=config_dir)


def demo_entry(pid_file: Path, **entry: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [str(DEMO_SERVER)],
        "env": {"DEMO_PID_FILE": str(pid_file)},
        **entry,
    }


def write_user_servers(config_dir: Path, servers: dict[str, Any]) -> None:
    (config_dir / "hdsp_agent").mkdir(parents=True, exist_ok=True)
    (config_dir / "hdsp_agent" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def assert_all_exited(pid_file: Path) -> None:
    """Every demo server the command started has exited (and was reaped) when the command returns."""
    pids = [int(line) for line in pid_file.read_text().split()]
    assert pids, "the server was started"
    deadline = time.monotonic() + 5
    for pid in pids:
        while _alive(pid):
            assert time.monotonic() < deadline, f"MCP server {pid} outlived the command"
            time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_tools_call_runs_a_tool_of_a_server_from_the_user_file(tmp_path: Path) -> None:
    config_dir, pid_file = tmp_path / "config", tmp_path / "pids"
    write_user_servers(config_dir, {"demo": demo_entry(pid_file)})

    done = tools_call("demo__echo", '{"text": "hi", "times": 2}', tmp_path, config_dir, "--approve", "all")

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok" and result["content"] == "hi hi"
    assert "Traceback" not in done.stderr and "never awaited" not in done.stderr
    assert_all_exited(pid_file)


def test_tools_call_of_a_server_tool_asks_like_the_sidebar(tmp_path: Path) -> None:
    """A server's tool needs approval: declined without a terminal, run with --approve all."""
    config_dir, pid_file = tmp_path / "config", tmp_path / "pids"
    write_user_servers(config_dir, {"demo": demo_entry(pid_file)})
    arguments = '{"text": "x"}'

    declined = tools_call("demo__echo", arguments, tmp_path, config_dir)
    approved = tools_call("demo__echo", arguments, tmp_path, config_dir, "--approve", "all")

    assert declined.returncode == 1 and json.loads(declined.stdout)["status"] == "denied"
    assert approved.returncode == 0 and json.loads(approved.stdout)["content"] == "x"
    assert_all_exited(pid_file)


def test_builtin_tools_start_no_server_and_a_broken_server_is_reported(tmp_path: Path) -> None:
    config_dir, pid_file = tmp_path / "config", tmp_path / "pids"
    says_why_and_exits = "import sys; sys.stderr.write('no licence key\\n'); sys.exit(4)"
    broken = {"command": sys.executable, "args": ["-c", says_why_and_exits]}
    write_user_servers(config_dir, {"demo": demo_entry(pid_file), "broken": broken})

    builtin = tools_call("ls", "{}", tmp_path, config_dir)
    assert builtin.returncode == 0, builtin.stderr
    assert not pid_file.exists(), "calling a built-in tool starts no MCP server"

    missing = tools_call("broken__anything", "{}", tmp_path, config_dir)
    assert json.loads(missing.stdout)["error"]["code"] == "E_TOOL_NOT_FOUND"
    assert "MCP server broken could not start" in missing.stderr
    assert "no licence key" in missing.stderr, "the server's own stderr says why"
    assert_all_exited(pid_file)


def test_project_servers_are_used_only_once_trusted(tmp_path: Path) -> None:
    config_dir, pid_file, root = tmp_path / "config", tmp_path / "pids", tmp_path / "project"
    (root / ".hdsp").mkdir(parents=True)
    (root / ".hdsp" / "mcp.json").write_text(json.dumps({"mcpServers": {"proj": demo_entry(pid_file)}}))
    call = ("proj__echo", '{"text": "from the project"}', root, config_dir, "--approve", "all")

    untrusted = tools_call(*call)
    assert json.loads(untrusted.stdout)["error"]["code"] == "E_TOOL_NOT_FOUND"
    assert "is not trusted yet" in untrusted.stderr
    assert not pid_file.exists(), "an untrusted project file starts nothing"

    trusted = hdsp_agent("mcp", "--trust-project", "--root", str(root), config_dir=config_dir)
    assert trusted.returncode == 0, trusted.stderr
    called = tools_call(*call)
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["content"] == "from the project"
    assert_all_exited(pid_file)


def test_run_offers_and_calls_servers_from_the_jupyter_config(tmp_path: Path) -> None:
    """Servers in the ``mcp_servers`` trait (jupyter_server_config.json) reach a headless turn."""
    config_dir, pid_file = tmp_path / "config", tmp_path / "pids"
    config_dir.mkdir()
    servers = {"mcpServers": {"demo": demo_entry(pid_file)}}
    jupyter_config = {"HdspAgentApp": {"mcp_servers": servers}}
    (config_dir / "jupyter_server_config.json").write_text(json.dumps(jupyter_config))
    script = [tool_calls(("demo__echo", '{"text": "ping"}')), text("The server said ping.")]

    with ScriptedModel(script) as model:
        done = hdsp_agent(
            "run", "-p", "echo ping", "--root", str(tmp_path), "--model", "m", "--base-url", model.base_url,
            "--approve", "all", config_dir=config_dir,
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The server said ping."
    assert "[demo__echo done]" in done.stderr
    # The default window gives the standard profile: the index is offered, not the server's schemas; the
    # model's call by name connected the server.
    offered = [tool["function"]["name"] for tool in model.requests[0]["tools"]]
    assert "mcp_tools" in offered and not any(name.startswith("demo__") for name in offered)
    tool_message = model.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "\nping\n" in tool_message["content"]
    assert_all_exited(pid_file)
