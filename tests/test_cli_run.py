"""``hdsp-agent run`` as a user runs it: a real subprocess against the scripted model over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from scripted_model import ScriptedModel, text, tool_calls


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # A run writes the user's audit log and day's token count, like the server: not in this machine's home.
    data_dir = {"JUPYTER_DATA_DIR": str(Path(args[args.index("--root") + 1]) / ".jupyter-data")}
    return subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", "run", *args],
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **data_dir, **(env or {})},
    )


def test_run_is_audited_and_bound_by_the_days_token_limit(tmp_path: Path) -> None:
    """The CLI in a user's terminal is one more door to the model: same audit log, same day's tokens."""
    config, data = tmp_path / "config", tmp_path / ".jupyter-data" / "hdsp_agent"
    config.mkdir()
    limit = {"HdspAgentApp": {"daily_token_limit": 100_000}}
    (config / "jupyter_server_config.json").write_text(json.dumps(limit))
    with ScriptedModel([text("hello")]) as model:
        env = {"JUPYTER_CONFIG_DIR": str(config), "OPENAI_BASE_URL": model.base_url}
        first = run_cli("-p", "hi", "--root", str(tmp_path), "--model", "m", env=env)
        assert first.returncode == 0, first.stderr
        [call] = [json.loads(line) for line in (data / "audit.jsonl").read_text().splitlines()]
        assert (call["event"], call["model"]) == ("model_call", "m")
        usage = json.loads((data / "usage.json").read_text())
        assert usage["tokens"] == call["prompt_tokens"] + call["completion_tokens"]
        (data / "usage.json").write_text(json.dumps({**usage, "tokens": 100_001}))
        refused = run_cli("-p", "hi again", "--root", str(tmp_path), "--model", "m", env=env)
    assert refused.returncode == 1 and "E_QUOTA_TOKENS" in refused.stderr, refused.stderr
    assert len(model.requests) == 1
    last = json.loads((data / "audit.jsonl").read_text().splitlines()[-1])
    assert (last["event"], last["code"]) == ("quota", "E_QUOTA_TOKENS")


def test_run_prints_the_reply(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n")
    with ScriptedModel([tool_calls(("ls", '{"dirPath": "."}')), text("You have data.csv.")]) as model:
        done = run_cli(
            "-p", "what is here?", "--root", str(tmp_path), "--model", "m", "--base-url", model.base_url
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "You have data.csv."
    assert "[ls done]" in done.stderr
    assert "data.csv" in model.requests[1]["messages"][-1]["content"]


def test_run_json_prints_the_sidebar_events(tmp_path: Path) -> None:
    with ScriptedModel([tool_calls(("ls", '{"recursive": true}')), text("ok")]) as model:
        done = run_cli(
            "-p", "list", "--root", str(tmp_path), "--json", "--model", "m", "--base-url", model.base_url
        )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    tool_events = [e for e in events if e["type"] == "tool.status"]
    assert all(e["name"] == "ls" for e in tool_events)
    final = tool_events[-1]
    assert final["status"] == "done" and json.loads(final["raw_arguments"]) == {"recursive": True}
    assert events[-2]["type"] == "turn.end" and events[-2]["reason"] == "completed"


def test_run_reads_endpoint_from_the_environment_and_reports_errors(tmp_path: Path) -> None:
    with ScriptedModel() as model:  # no reply scripted: the server answers 500
        done = run_cli(
            "-p", "hi", "--root", str(tmp_path), "--model", "m", env={"OPENAI_BASE_URL": model.base_url}
        )
    assert done.returncode == 1
    assert "E_MODEL_HTTP" in done.stderr
    assert len(model.requests) >= 1


def test_run_without_a_model_explains_setup(tmp_path: Path) -> None:
    done = run_cli("-p", "hi", "--root", str(tmp_path), env={"JUPYTER_CONFIG_DIR": str(tmp_path)})
    assert done.returncode == 1
    assert "E_MODEL_NOT_CONFIGURED" in done.stderr and "c.HdspAgentApp.model" in done.stderr
