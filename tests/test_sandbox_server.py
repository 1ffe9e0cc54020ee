"""The server and the CLI agree on the sandbox: ``GET /hdsp-agent/info``, ``hdsp-agent policy show`` and
``hdsp-agent tools call run_terminal_command … --approve none`` name the same layer, and the CLI runs an
allowed command in it. A real Jupyter server (pytest-jupyter) and the real CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.events import ApprovalRequestEvent
from hdsp_agent.permissions.approval import ApprovalRequest
from hdsp_agent.web.routes import NAMESPACE


def cli(*args: str, config_dir: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "JUPYTER_CONFIG_DIR": str(config_dir)},
    )
    assert done.returncode in (0, 1), done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


async def test_info_cli_and_tools_call_name_the_same_sandbox(jp_fetch: Any, tmp_path: Path) -> None:
    info = json.loads((await jp_fetch(NAMESPACE, "info")).body)
    sandbox = info["sandbox"]
    assert set(sandbox) == {"layer", "active", "reason", "required", "texts"}
    assert sandbox["active"] == (sandbox["layer"] != "none") and sandbox["reason"]
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    config_dir = tmp_path / "cli-config"
    config_dir.mkdir()
    shown = cli("policy", "show", "--json", "--root", str(root), config_dir=config_dir)
    assert shown["sandbox"] == sandbox
    result = cli(
        "tools",
        "call",
        "run_terminal_command",
        json.dumps({"command": "cat notes.txt"}),
        "--root",
        str(root),
        "--approve",
        "none",
        config_dir=config_dir,
    )
    assert result["status"] == "ok", result
    assert "hello" in result["content"]
    expected_mode = "sandboxed" if sandbox["active"] else "unsandboxed"
    assert result["details"]["run_mode"] == expected_mode
    assert result["details"]["sandbox"] == sandbox["layer"]


def test_the_approval_event_carries_the_run_mode() -> None:
    request = ApprovalRequest(
        call_id="c1", tool="run_terminal_command", arguments={"command": "curl x"}, run_mode="network"
    )
    wire = json.loads(ApprovalRequestEvent(request=request).model_dump_json())
    assert wire["request"]["run_mode"] == "network"
    other = ApprovalRequest(call_id="c2", tool="create_new_file", arguments={})
    assert json.loads(ApprovalRequestEvent(request=other).model_dump_json())["request"]["run_mode"] is None


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
