"""``hdsp-agent tools ...`` as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def hdsp_agent(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def test_tools_list_prints_openai_definitions() -> None:
    done = hdsp_agent("tools", "list", "--format", "openai")
    assert done.returncode == 0, done.stderr
    definitions = json.loads(done.stdout)
    names = [definition["function"]["name"] for definition in definitions]
    assert "ls" in names
    assert all(definition["type"] == "function" for definition in definitions)


@pytest.mark.parametrize("fmt", ["anthropic", "mcp"])
def test_tools_list_other_json_formats(fmt: str) -> None:
    done = hdsp_agent("tools", "list", "--format", fmt)
    assert done.returncode == 0, done.stderr
    assert any(definition["name"] == "ls" for definition in json.loads(done.stdout))


def test_tools_list_markdown_is_a_table() -> None:
    done = hdsp_agent("tools", "list", "--format", "markdown")
    assert done.returncode == 0
    assert done.stdout.startswith("| tool | read-only | parameters | description |")
    assert "| `ls` |" in done.stdout


def test_tools_call_ls_lists_the_root(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "data").mkdir()
    done = hdsp_agent("tools", "call", "ls", '{"dirPath": "."}', "--root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok"
    assert result["content"].splitlines() == ["data/", "notes.txt"]


def test_tools_call_with_truncated_json_is_a_structured_error_exit_1(tmp_path: Path) -> None:
    done = hdsp_agent("tools", "call", "ls", '{"dirPath": ', "--root", str(tmp_path))
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["status"] == "error"
    assert result["error"]["code"] == "E_TOOL_INVALID_ARGS"
    assert result["error"]["suggestion"]


def test_tools_call_unknown_tool_exit_1(tmp_path: Path) -> None:
    done = hdsp_agent("tools", "call", "no_such_tool", "{}", "--root", str(tmp_path))
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "E_TOOL_NOT_FOUND"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert hdsp_agent("tools", "call").returncode == 2
    assert hdsp_agent("tools", "list", "--format", "yaml").returncode == 2
    assert hdsp_agent("tools", "call", "ls", "{}", "--root", str(tmp_path / "missing")).returncode == 2


def test_approval_without_a_terminal_is_declined_and_approve_all_runs(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    declined = hdsp_agent("tools", "call", "ls", '{"dirPath": ".."}', "--root", str(root))
    assert declined.returncode == 1
    assert json.loads(declined.stdout)["status"] == "denied"
    approved = hdsp_agent("tools", "call", "ls", '{"dirPath": ".."}', "--root", str(root), "--approve", "all")
    assert approved.returncode == 0
    assert f"{root}/" in json.loads(approved.stdout)["content"].splitlines()


def test_cli_reads_the_same_config_as_the_server(tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "jupyter_server_config.json").write_text(
        json.dumps({"HdspAgentApp": {"disabled_tools": ["ls"]}})
    )
    env = {"JUPYTER_CONFIG_DIR": str(config_dir)}
    listed = hdsp_agent("tools", "list", env=env)
    assert "ls" not in [definition["function"]["name"] for definition in json.loads(listed.stdout)]
    called = hdsp_agent("tools", "call", "ls", "{}", "--root", str(tmp_path), env=env)
    assert json.loads(called.stdout)["error"]["code"] == "E_TOOL_NOT_IN_CATALOG"
