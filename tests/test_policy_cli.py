"""``hdsp-agent policy check|show`` as a user runs it: a real subprocess, a temp config dir.

The cases the issue names run as real subprocesses; the rest call the same ``main()`` in-process (starting the
CLI costs seconds of imports on a busy machine).

SAFETY: dangerous command strings reach the subprocess only as argv elements or stdin bytes built in Python;
no
shell is involved, and ``policy check`` only analyses them.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.cli import main


def hdsp_agent(
    *args: str, env: dict[str, str], stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", *args],
        capture_output=True,
        timeout=60,
        input=stdin if stdin is not None else b"",
        env={**os.environ, **env},
    )


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """(project root, environment with a private Jupyter config dir)."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("KEY=1")
    (root / "README.md").write_text("hi")
    config = tmp_path / "jupyter-config"
    config.mkdir()
    return root, {"JUPYTER_CONFIG_DIR": str(config)}


def check(root: Path, env: dict[str, str], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    done = hdsp_agent("policy", "check", tool, json.dumps(arguments), "--root", str(root), env=env)
    assert done.returncode == 0, done.stderr.decode()
    answer: dict[str, Any] = json.loads(done.stdout)
    assert set(answer) == {"decision", "level", "reasons", "rule", "run_mode", "sandbox"}
    return answer


def run_main(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    *args: str,
    stdin: str = "",
) -> tuple[int, str, str]:
    """The CLI's ``main`` in this process, with the test's config dir and stdin."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("tool", "arguments", "decision", "level"),
    [
        ("run_terminal_command", {"command": "ls -la"}, "allow", "allowedWithoutPermission"),
        ("run_terminal_command", {"command": "rm -rf ~"}, "deny", "disabled"),
        ("run_terminal_command", {"command": "pip install requests"}, "ask", "allowedWithPermission"),
        ("read_file", {"filepath": ".env"}, "ask", "allowedWithPermission"),
    ],
)
def test_policy_check_prints_the_decision(
    setup: tuple[Path, dict[str, str]], tool: str, arguments: dict[str, Any], decision: str, level: str
) -> None:
    root, env = setup
    answer = check(root, env, tool, arguments)
    assert (answer["decision"], answer["level"]) == (decision, level)
    assert answer["reasons"]


@pytest.mark.parametrize(
    ("tool", "arguments", "decision"),
    [
        ("read_file", {"filepath": "README.md"}, "allow"),
        ("create_new_file", {"filepath": "../x.py", "contents": ""}, "deny"),
        ("create_new_file", {"filepath": "src/x.py", "contents": ""}, "ask"),
        ("fetch_url_content", {"url": "http://127.0.0.1:8888/api"}, "deny"),
        ("run_cell", {"path": "analysis.ipynb", "cell_id": "a"}, "ask"),
        ("insert_cell", {"path": "analysis.ipynb", "source": "x"}, "ask"),
        ("weather__forecast", {"city": "Paris"}, "ask"),
        ("request_rule", {"name": "style"}, "deny"),
    ],
)
def test_policy_check_decides_registered_and_unregistered_tools(
    setup: tuple[Path, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tool: str,
    arguments: dict[str, Any],
    decision: str,
) -> None:
    root, env = setup
    code, out, err = run_main(
        monkeypatch, capsys, env, "policy", "check", tool, json.dumps(arguments), "--root", str(root)
    )
    assert code == 0, err
    assert json.loads(out)["decision"] == decision


def test_policy_check_explains_a_denied_command_part_by_part(
    setup: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, env = setup
    arguments = json.dumps({"command": "git status && rm -rf ~"})
    code, out, _ = run_main(
        monkeypatch, capsys, env, "policy", "check", "run_terminal_command", arguments, "--root", str(root)
    )
    answer = json.loads(out)
    assert code == 0 and answer["decision"] == "deny"
    assert answer["reasons"] == ["rm -rf ~: deletes the home directory recursively"]


def test_policy_check_reads_json_lines_from_stdin(setup: tuple[Path, dict[str, str]]) -> None:
    root, env = setup
    lines = [
        {"command": "ls -la"},
        {"command": "rm -rf /"},
        {"command": "npm install"},
        {"command": "cat .env"},
    ]
    stdin = "\n".join(json.dumps(line) for line in lines).encode() + b"\n\n"
    done = hdsp_agent("policy", "check", "run_terminal_command", "--root", str(root), env=env, stdin=stdin)
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [answer["decision"] for answer in answers] == ["allow", "deny", "ask", "ask"]


def test_invalid_json_is_a_usage_error(
    setup: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, env = setup
    done = hdsp_agent("policy", "check", "read_file", "{not json", "--root", str(root), env=env)
    assert done.returncode == 2
    assert b"not valid JSON" in done.stderr
    listed, _, _ = run_main(
        monkeypatch, capsys, env, "policy", "check", "read_file", "[1, 2]", "--root", str(root)
    )
    assert listed == 2
    stdin = json.dumps({"filepath": "README.md"}) + "\n{oops\n"
    code, out, _ = run_main(
        monkeypatch, capsys, env, "policy", "check", "read_file", "--root", str(root), stdin=stdin
    )
    assert code == 2
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["decision"] == "allow" and second["error"].startswith("line 2:")
    missing, _, _ = run_main(
        monkeypatch, capsys, env, "policy", "check", "ls", "{}", "--root", str(root / "missing")
    )
    assert missing == 2


def test_arguments_a_registered_tool_rejects_are_a_usage_error(
    setup: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, env = setup
    arguments = json.dumps({"dirPath": ".", "bogus": 1})
    code, _, err = run_main(monkeypatch, capsys, env, "policy", "check", "ls", arguments, "--root", str(root))
    assert code == 2
    assert "invalid arguments for ls" in err


def test_the_users_rules_file_and_admin_config_are_applied(
    setup: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, env = setup
    config_dir = Path(env["JUPYTER_CONFIG_DIR"])
    (config_dir / "hdsp_agent").mkdir()
    (config_dir / "hdsp_agent" / "permissions.json").write_text(
        json.dumps({"allow": ["run_terminal_command(npm test*)", "run_terminal_command(curl*)"]})
    )
    (config_dir / "jupyter_server_config.json").write_text(
        json.dumps({"HdspAgentApp": {"deny_rules": ["run_terminal_command(curl*)"]}})
    )
    stdin = (
        json.dumps({"command": "npm test"}) + "\n" + json.dumps({"command": "curl https://example.com"})
    ).encode()
    done = hdsp_agent("policy", "check", "run_terminal_command", "--root", str(root), env=env, stdin=stdin)
    allowed, floored = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert (allowed["decision"], allowed["rule"]) == ("allow", "run_terminal_command(npm test*)")
    assert (floored["decision"], floored["rule"]) == ("deny", "run_terminal_command(curl*)")
    code, out, err = run_main(monkeypatch, capsys, env, "policy", "show", "--root", str(root), "--json")
    assert code == 0, err
    report = json.loads(out)
    sources = {(row["rule"], row["source"].split(" ")[0]) for row in report["rules"]}
    assert ("run_terminal_command(curl*)", "admin") in sources
    assert ("run_terminal_command(npm test*)", "user") in sources
    assert "request_rule" in report["defaults"]["disabled"]
    _, text, _ = run_main(monkeypatch, capsys, env, "policy", "show", "--root", str(root))
    assert "Mode: default" in text and "run_terminal_command(npm test*)" in text and "[admin]" in text


def test_a_broken_admin_rule_is_a_usage_error(
    setup: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, env = setup
    (Path(env["JUPYTER_CONFIG_DIR"]) / "jupyter_server_config.json").write_text(
        json.dumps({"HdspAgentApp": {"deny_rules": ["run_terminal_command(curl*"]}})
    )
    code, _, err = run_main(monkeypatch, capsys, env, "policy", "check", "ls", "{}", "--root", str(root))
    assert code == 2 and "deny_rules" in err


def test_tools_call_goes_through_the_same_policy(setup: tuple[Path, dict[str, str]]) -> None:
    root, env = setup
    (root / "private").mkdir()
    config_dir = Path(env["JUPYTER_CONFIG_DIR"])
    (config_dir / "hdsp_agent").mkdir()
    (config_dir / "hdsp_agent" / "permissions.json").write_text(json.dumps({"deny": ["ls(private)"]}))
    denied = hdsp_agent(
        "tools",
        "call",
        "ls",
        json.dumps({"dirPath": "private"}),
        "--root",
        str(root),
        "--approve",
        "all",
        env=env,
    )
    result = json.loads(denied.stdout)
    assert denied.returncode == 1 and result["status"] == "denied"
    assert "denied by your rule ls(private)" in result["error"]["message"]
    listed = hdsp_agent("tools", "call", "ls", json.dumps({"dirPath": "src"}), "--root", str(root), env=env)
    assert listed.returncode == 0, listed.stdout.decode()


def test_check_can_try_a_mode_and_another_rules_file(
    setup: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, env = setup
    arguments = json.dumps({"filepath": "src/a.py", "contents": ""})
    base = ("policy", "check", "create_new_file", arguments, "--root", str(root))
    _, out, _ = run_main(monkeypatch, capsys, env, *base, "--mode", "accept-edits")
    assert json.loads(out)["decision"] == "allow"
    _, out, _ = run_main(monkeypatch, capsys, env, *base, "--mode", "read-only")
    assert json.loads(out)["decision"] == "deny"
    rules = root.parent / "team-rules.json"
    rules.write_text(json.dumps({"deny": ["create_new_file(src/**)"]}))
    _, out, _ = run_main(monkeypatch, capsys, env, *base, "--permissions-file", str(rules))
    assert json.loads(out) | {"reasons": [], "sandbox": None} == {
        "decision": "deny",
        "level": "disabled",
        "reasons": [],
        "rule": "create_new_file(src/**)",
        "run_mode": None,
        "sandbox": None,
    }
    assert not (Path(env["JUPYTER_CONFIG_DIR"]) / "hdsp_agent").exists(), "checking writes nothing"
