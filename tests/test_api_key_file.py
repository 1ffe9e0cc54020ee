"""``api_key_file`` (top level and per model): the key is read from a file at each request, so it need not sit
in the server's environment; the file is a protected and secret path for every tool. The scripted model
checks the Authorization header the client and the server's OpenAI-compatible endpoint send."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_model import ScriptedModel, text
from traitlets.config import Config

from hdsp_agent.agent.llm import E_API_KEY_FILE, ModelClient, ModelError
from hdsp_agent.agent.models import catalog_from_config
from hdsp_agent.cli.policy_command import decide
from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.permissions import protected
from hdsp_agent.permissions.policy import build_policy
from hdsp_agent.tools.defaults import default_registry

USER = [{"role": "user", "content": "hi"}]


def config(**traits: Any) -> HdspAgentConfig:
    return HdspAgentConfig(config=Config({"HdspAgentConfig": traits}))


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "keys" / "model.key"
    path.parent.mkdir()
    path.write_text("sk-from-file-1\n")
    return path


@pytest.mark.asyncio
async def test_the_key_file_is_read_at_each_request(key_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-must-not-be-used")
    with ScriptedModel([text("a"), text("b")]) as model:
        settings = catalog_from_config(
            config(model="m", base_url=model.base_url, api_key_file=str(key_file), max_retries=0)
        ).get(None)
        client = ModelClient(settings)
        await client.stream(USER, [], lambda delta: None)
        key_file.write_text("sk-from-file-2")  # rotated: no restart needed
        await client.stream(USER, [], lambda delta: None)
        await client.close()
    assert [h["authorization"] for h in model.request_headers] == [
        "Bearer sk-from-file-1",
        "Bearer sk-from-file-2",
    ]


@pytest.mark.asyncio
async def test_a_model_entry_has_its_own_key_file(key_file: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.key"
    other.write_text("sk-other")
    with ScriptedModel([text("a"), text("b")]) as model:
        catalog = catalog_from_config(
            config(
                api_key_file=str(other),
                max_retries=0,
                models=[
                    {"name": "own", "model": "m1", "base_url": model.base_url, "api_key_file": str(key_file)},
                    {"name": "inherits", "model": "m2", "base_url": model.base_url},
                ],
            )
        )
        for name in ("own", "inherits"):
            client = ModelClient(catalog.get(name))
            await client.stream(USER, [], lambda delta: None)
            await client.close()
    assert [h["authorization"] for h in model.request_headers] == ["Bearer sk-from-file-1", "Bearer sk-other"]


@pytest.mark.asyncio
async def test_an_unreadable_key_file_is_a_clear_error_that_shows_no_key(tmp_path: Path) -> None:
    missing = tmp_path / "absent.key"
    settings = catalog_from_config(
        config(model="m", base_url="http://127.0.0.1:9/v1", api_key_file=str(missing))
    )
    client = ModelClient(settings.get(None))
    with pytest.raises(ModelError) as raised:
        await client.stream(USER, [], lambda delta: None)
    await client.close()
    assert raised.value.code == E_API_KEY_FILE and str(missing) in raised.value.message
    (tmp_path / "empty.key").write_text("  \n")
    settings = catalog_from_config(config(model="m", api_key_file=str(tmp_path / "empty.key")))
    with pytest.raises(ModelError, match="is empty"):
        settings.get(None).resolved_api_key()


def test_the_key_file_is_never_written_and_reading_it_asks(key_file: Path, tmp_path: Path) -> None:
    root = tmp_path
    policy = build_policy(config(api_key_file=str(key_file)), root, tmp_path / "permissions.json")
    registry = default_registry(HdspAgentConfig())
    try:
        write = {"filepath": "keys/model.key", "contents": "x"}
        assert decide(policy, registry, "create_new_file", write, root)["decision"] == "deny"
        shell = {"command": "echo sk-evil > keys/model.key"}
        assert decide(policy, registry, "run_terminal_command", shell, root)["decision"] == "deny"
        read = {"filepath": "keys/model.key"}
        assert decide(policy, registry, "read_file", read, root)["decision"] == "ask"
    finally:
        protected.configure(protected.AdminPaths())


# -- through the server's OpenAI-compatible endpoint --------------------------------------------------------


@pytest.fixture
def jp_base_url() -> str:
    return "/"  # as test_continue_backend.py: a plain base URL for the OpenAI-compatible endpoint


@pytest.fixture
def jp_server_config(
    jp_server_config: dict[str, Any], scripted_model: ScriptedModel, tmp_path: Path
) -> dict[str, Any]:
    key = tmp_path / "server.key"
    key.write_text("sk-server-file\n")
    return {
        **jp_server_config,
        "HdspAgentApp": {
            "model": "backend-model",
            "base_url": scripted_model.base_url,
            "api_key_file": str(key),
            "max_retries": 0,
            "store_path": str(tmp_path / "store.sqlite3"),
        },
    }


async def test_the_server_sends_the_key_from_the_file(  # on pytest-jupyter's loop: no asyncio mark
    jp_fetch: Any, jp_serverapp: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(text("plain answer"))
    response = await jp_fetch(
        "hdsp-agent", "v1", "chat", "completions",
        method="POST",
        body=json.dumps({"model": "x", "messages": USER}),
        headers={"Authorization": f"Bearer {jp_serverapp.identity_provider.token}"},
    )  # fmt: skip
    assert json.loads(response.body)["choices"][0]["message"]["content"] == "plain answer"
    assert scripted_model.request_headers[0]["authorization"] == "Bearer sk-server-file"
