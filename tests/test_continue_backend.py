"""hdsp-agent as the model backend for Continue: /hdsp-agent/v1 on a real Jupyter server, then the real
``cn``.

Runs on pytest-jupyter's loop (no asyncio mark); the ``cn`` subprocess is awaited with asyncio so the server
keeps serving while it runs.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
import tornado.httpclient
from scripted_model import ScriptedModel, error, text, tool_calls

CN = Path(__file__).parent / "continue_cli" / "node_modules" / ".bin" / "cn"


@pytest.fixture
def jp_base_url() -> str:
    return "/"  # Continue's apiBase is a plain URL; keep it free of the default fixture's escaped characters


@pytest.fixture
def jp_server_config(
    jp_server_config: dict[str, Any], scripted_model: ScriptedModel, tmp_path: Path
) -> dict[str, Any]:
    return {
        **jp_server_config,
        "HdspAgentApp": {
            "model": "backend-model",
            "base_url": scripted_model.base_url,
            "api_key": "sk-upstream-secret",
            "max_retries": 0,
            "store_path": str(tmp_path / "store.sqlite3"),
            "audit_log_path": str(tmp_path / "audit.jsonl"),
            "v1_disabled_tools": ["Bash"],
        },
    }


def bearer(jp_serverapp: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {jp_serverapp.identity_provider.token}"}


TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("Read", "Bash")
]


async def post_completion(jp_fetch: Any, jp_serverapp: Any, body: dict[str, Any]) -> Any:
    return await jp_fetch(
        "hdsp-agent",
        "v1",
        "chat",
        "completions",
        method="POST",
        body=json.dumps(body),
        headers=bearer(jp_serverapp),
    )


async def test_streaming_tool_call_is_well_formed(
    jp_fetch: Any, jp_serverapp: Any, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    scripted_model.add(
        tool_calls(("read", "{'filepath': 'notes.txt'}"), repeat_name=True, finish_reason="stop")
    )
    body = {
        "model": "anything",
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": TOOLS,
    }
    response = await post_completion(jp_fetch, jp_serverapp, body)
    lines = [line[6:] for line in response.body.decode().splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(line) for line in lines[:-1]]
    calls = [c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls") or []]
    assert [(c["index"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        (0, "Read", {"filepath": "notes.txt"})
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    upstream_request = scripted_model.requests[0]
    assert upstream_request["model"] == "backend-model"
    assert [t["function"]["name"] for t in upstream_request["tools"]] == ["Read"], "the admin disabled Bash"
    assert scripted_model.request_headers[0]["authorization"] == "Bearer sk-upstream-secret"
    # Counted in the day's tokens (estimated: the stream reported no usage) and audited as a /v1 call.
    [record] = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert (record["event"], record["door"], record["model"], record["estimated"]) == (
        "model_call",
        "v1",
        "backend-model",
        True,
    )
    quotas = jp_serverapp.web_app.settings["hdsp_agent"].runtime.quotas
    assert quotas.tokens_today == record["prompt_tokens"] + record["completion_tokens"] > 0


async def test_non_streaming_and_models_list(
    jp_fetch: Any, jp_serverapp: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(text("plain answer"))
    response = await post_completion(
        jp_fetch, jp_serverapp, {"model": "x", "messages": [{"role": "user", "content": "hi"}]}
    )
    completion = json.loads(response.body)
    assert completion["choices"][0]["message"]["content"] == "plain answer"
    assert "tools" not in scripted_model.requests[0] and "tool_choice" not in scripted_model.requests[0]
    models = json.loads((await jp_fetch("hdsp-agent", "v1", "models", headers=bearer(jp_serverapp))).body)
    assert [m["id"] for m in models["data"]] == ["backend-model"]
    assert "sk-upstream-secret" not in response.body.decode() + json.dumps(models)


async def test_upstream_errors_are_forwarded(
    jp_fetch: Any, jp_serverapp: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(error(500, "model crashed"))
    with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
        await post_completion(
            jp_fetch, jp_serverapp, {"stream": True, "messages": [{"role": "user", "content": "hi"}]}
        )
    assert caught.value.code == 500
    assert "model crashed" in caught.value.response.body.decode()


async def test_wrong_token_is_refused(jp_fetch: Any) -> None:
    with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
        await jp_fetch("hdsp-agent", "v1", "models", headers={"Authorization": "Bearer not-the-token"})
    assert caught.value.code in (401, 403)


async def test_continue_cli_runs_a_tool_call_through_hdsp_agent(
    jp_serverapp: Any,
    http_server_client: Any,
    jp_http_port: int,
    scripted_model: ScriptedModel,
    tmp_path: Path,
) -> None:
    # http_server_client: requesting it is what makes pytest-jupyter listen on jp_http_port.
    assert CN.exists(), "the Continue CLI is installed by `make test` (npm ci in tests/continue_cli)"
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("The secret word is pineapple.\n")
    scripted_model.add(
        tool_calls(("Read", '{"filepath": "notes.txt"}'), repeat_name=True),
        text("notes.txt says: The secret word is pineapple."),
    )
    config = tmp_path / "config.yaml"
    config.write_text(
        "name: hdsp\nversion: 0.0.1\nschema: v1\nmodels:\n"
        "  - name: hdsp-agent\n    provider: openai\n    model: backend-model\n"
        f"    apiBase: http://127.0.0.1:{jp_http_port}/hdsp-agent/v1\n"
        f"    apiKey: {jp_serverapp.identity_provider.token}\n"
        "    roles: [chat, edit, apply]\n    capabilities: [tool_use]\n"
    )
    home = tmp_path / "cn_home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "CONTINUE_CLI_ENABLE_TELEMETRY": "0",
        "CONTINUE_METRICS_ENABLED": "0",
    }
    process = await asyncio.create_subprocess_exec(
        str(CN),
        "-p",
        "what does notes.txt say?",
        "--config",
        str(config),
        "--auto",
        cwd=project,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), 90)
    except asyncio.TimeoutError:
        process.kill()
        stdout, stderr = await process.communicate()
        raise AssertionError(
            f"cn did not finish; requests={len(scripted_model.requests)} "
            f"stdout={stdout.decode()[-1500:]!r} stderr={stderr.decode()[-1500:]!r}"
        ) from None
    assert process.returncode == 0, stderr.decode()[-2000:]
    assert "pineapple" in stdout.decode()
    # cn executed the call itself and sent the file's content back as a tool result
    tool_results = [m for m in scripted_model.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_results and "pineapple" in json.dumps(tool_results)
