"""Secrets never reach the model through a tool's output (``tools/redaction.py``): the server's own keys and
token by value, credentials written into URLs whoever's. All secrets here are fake; commands only print.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.tools.redaction import REDACTED, SecretRedactor, environment_secrets

FAKE_KEY = "sk-fake-key-for-redaction-0123456789"
FAKE_TOKEN = "ghp_FAKEtokenFAKEtokenFAKEtoken0123"


def test_known_values_and_url_credentials_are_replaced() -> None:
    redactor = SecretRedactor(lambda: [FAKE_KEY, "short", ""])
    text = (
        f"key={FAKE_KEY}\n"
        f"origin  https://user:{FAKE_TOKEN}@github.com/x/y.git (fetch)\n"
        f"mirror  https://{FAKE_TOKEN}@gitlab.example.com/x.git\n"
        "db = postgresql://analyst:hunter2hunter2@db.internal:5432/sales\n"
    )
    redacted = redactor.redact(text)
    assert FAKE_KEY not in redacted and FAKE_TOKEN not in redacted and "hunter2" not in redacted
    assert f"key={REDACTED}" in redacted
    assert f"https://user:{REDACTED}@github.com/x/y.git" in redacted
    assert f"https://{REDACTED}@gitlab.example.com" in redacted
    assert f"postgresql://analyst:{REDACTED}@db.internal:5432/sales" in redacted


def test_ordinary_text_and_urls_are_left_alone() -> None:
    redactor = SecretRedactor(lambda: [FAKE_KEY, "short"])
    text = (
        "see https://github.com/x/y and http://127.0.0.1:8888/lab?reset, "
        "git@github.com:x/y.git, ssh://git@github.com/x/y.git, a short word, user@example.com"
    )
    assert redactor.redact(text) == text


def test_an_unreadable_secret_source_does_not_fail_the_call() -> None:
    def broken() -> list[str]:
        raise OSError("key file gone")

    assert SecretRedactor(broken).redact("plain output") == "plain output"


def test_secret_named_environment_variables_are_secrets() -> None:
    environ = {"OPENAI_API_KEY": FAKE_KEY, "JUPYTERHUB_API_TOKEN": "hub-token-0123456789", "HOME": "/home/x"}
    found = environment_secrets(environ, ("OPENAI_API_KEY", "*_TOKEN"))
    assert sorted(found) == sorted([FAKE_KEY, "hub-token-0123456789"])


def _tools_call(root: Path, command: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hdsp_agent.cli",
            "tools",
            "call",
            "run_terminal_command",
            json.dumps({"command": command}),
            "--root",
            str(root),
            "--approve",
            "none",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return json.loads(done.stdout)


def test_a_token_in_a_git_remote_and_the_servers_key_never_reach_the_model(tmp_path: Path) -> None:
    """``git remote -v`` and ``cat`` run without asking (they only read); what they print is redacted."""
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "OPENAI_API_KEY": FAKE_KEY,
        "JUPYTER_CONFIG_DIR": str(home / "jupyter"),
    }
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    remote = f"https://analyst:{FAKE_TOKEN}@github.com/team/project.git"
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", remote], check=True, env=env)
    (root / "notes.txt").write_text(f"I pasted my key here once: {FAKE_KEY}\n")

    remotes = _tools_call(root, "git remote -v", env)
    assert remotes["status"] == "ok", remotes
    assert FAKE_TOKEN not in remotes["content"]
    assert f"https://analyst:{REDACTED}@github.com/team/project.git" in remotes["content"]

    notes = _tools_call(root, "cat notes.txt", env)
    assert notes["status"] == "ok", notes
    assert FAKE_KEY not in notes["content"] and REDACTED in notes["content"]


def test_the_server_knows_its_token_and_model_keys(jp_serverapp: Any, tmp_path: Path) -> None:
    app = jp_serverapp.web_app.settings["hdsp_agent"]
    key_file = tmp_path / "key"
    key_file.write_text("sk-from-a-key-file-0123456789\n")
    app.api_key_file = str(key_file)
    secrets = app.known_secrets()
    assert jp_serverapp.identity_provider.token in secrets
    assert "sk-from-a-key-file-0123456789" in secrets
    assert os.environ["OPENAI_API_KEY"] in secrets  # conftest's fake key
    redactor = app.runtime.executor_settings.redactor
    shown = redactor.redact(f"token={jp_serverapp.identity_provider.token}")
    assert jp_serverapp.identity_provider.token not in shown


@pytest.mark.parametrize("field", ["content", "error"])
async def test_the_executor_redacts_results_and_errors(field: str) -> None:
    from hdsp_agent.permissions.decision import ReadOnlyPolicy
    from hdsp_agent.tools.base import Tool, ToolArgs, ToolCall, ToolContext, ToolError
    from hdsp_agent.tools.executor import ExecutorSettings, ToolExecutor
    from hdsp_agent.tools.registry import ToolRegistry

    class Leaky(Tool[ToolArgs]):
        name = "leaky"
        description = "prints a secret"
        args_model = ToolArgs
        read_only = True

        async def run(self, args: ToolArgs, ctx: ToolContext) -> str:
            if field == "error":
                raise ToolError("E_LEAK", f"failed with {FAKE_KEY}")
            return f"value: {FAKE_KEY}"

    registry = ToolRegistry()
    registry.register(Leaky())
    settings = ExecutorSettings(redactor=SecretRedactor(lambda: [FAKE_KEY]))
    executor = ToolExecutor(registry, policy=ReadOnlyPolicy(), settings=settings)
    call = ToolCall(id="1", name="leaky", arguments="{}")
    result = await executor.execute(call, ToolContext(root_dir=Path.cwd()))
    assert result.status == ("ok" if field == "content" else "error"), result
    shown = result.content if field == "content" else result.error.message  # type: ignore[union-attr]
    assert FAKE_KEY not in shown and REDACTED in shown
