"""Model setup from the sidebar: saved on the server (0600, key never returned), effective at once, lockable.

A real Jupyter server with hdsp-agent, and scripted OpenAI-compatible servers on 127.0.0.1 as the endpoints.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from scripted_model import ScriptedModel, error, text

from hdsp_agent.agent.model_setup import UserModelFile, default_setup_path
from hdsp_agent.agent.models import catalog_from_config
from hdsp_agent.config import HdspAgentConfig

KEY = "sk-user-key-not-real-123"


async def call(jp_fetch: Any, path: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    kwargs: dict[str, Any] = {"method": method, "raise_error": False}
    if body is not None:
        kwargs["body"] = json.dumps(body)
    response = await jp_fetch("hdsp-agent", *path.split("/"), **kwargs)
    return response.code, json.loads(response.body or b"null")


async def chat(jp_fetch: Any, model: str | None = None) -> tuple[int, Any]:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": "hello"}]}
    if model:
        body["model"] = model
    return await call(jp_fetch, "v1/chat/completions", "POST", body)


async def test_endpoint_alone_is_enough_models_come_from_it(
    jp_fetch: Any, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only OPENAI_BASE_URL: no model name anywhere in the configuration.
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_model.base_url)
    scripted_model.add(text("hi there"))
    code, overview = await call(jp_fetch, "models")
    assert code == 200 and overview["configured"] is True
    assert [model["model"] for model in overview["models"]] == ["scripted"]
    code, listed = await call(jp_fetch, "v1/models")
    assert [entry["id"] for entry in listed["data"]] == ["scripted"]
    code, completion = await chat(jp_fetch)
    assert code == 200 and completion["choices"][0]["message"]["content"] == "hi there"
    assert scripted_model.requests[-1]["model"] == "scripted"


async def test_unreachable_endpoint_says_why_instead_of_no_model(jp_fetch: Any) -> None:
    # conftest points OPENAI_BASE_URL at a closed port.
    code, overview = await call(jp_fetch, "models")
    assert overview["configured"] is False
    assert "Could not connect to http://127.0.0.1:9/v1" in overview["setup_help"]
    setup = {name: overview["setup"][name] for name in ("allowed", "admin_contact", "saved")}
    assert setup == {"allowed": True, "admin_contact": "", "saved": None}


async def test_saved_model_works_at_once_key_stays_on_the_server(
    jp_fetch: Any, scripted_model: ScriptedModel
) -> None:
    code, listed = await call(
        jp_fetch, "model-setup/models", "POST", {"base_url": scripted_model.base_url + "/", "api_key": KEY}
    )
    assert code == 200 and listed["models"] == ["scripted"]
    code, overview = await call(
        jp_fetch,
        "model-setup",
        "PUT",
        {"base_url": scripted_model.base_url, "model": "scripted", "api_key": KEY},
    )
    assert code == 200 and overview["configured"] is True
    assert overview["setup"]["saved"] == {
        "base_url": scripted_model.base_url,
        "model": "scripted",
        "key_set": True,
        "tool_calls": "auto",
    }
    assert KEY not in json.dumps(overview)

    saved = default_setup_path()
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text())["api_key"] == KEY

    # No restart: the next request goes to the saved endpoint with the saved key.
    scripted_model.add(text("from the saved model"))
    code, completion = await chat(jp_fetch)
    assert code == 200 and completion["choices"][0]["message"]["content"] == "from the saved model"
    assert scripted_model.request_headers[-1]["authorization"] == f"Bearer {KEY}"

    code, state = await call(jp_fetch, "model-setup")
    assert state["saved"]["key_set"] is True and KEY not in json.dumps(state)

    # Saving again without a key keeps it; clear_key removes it.
    await call(jp_fetch, "model-setup", "PUT", {"base_url": scripted_model.base_url, "model": "scripted"})
    assert json.loads(saved.read_text())["api_key"] == KEY
    await call(
        jp_fetch,
        "model-setup",
        "PUT",
        {"base_url": scripted_model.base_url, "model": "scripted", "clear_key": True},
    )
    assert json.loads(saved.read_text())["api_key"] == ""


async def test_saved_key_is_never_sent_to_another_endpoint(
    jp_fetch: Any, scripted_model: ScriptedModel
) -> None:
    await call(
        jp_fetch,
        "model-setup",
        "PUT",
        {"base_url": scripted_model.base_url, "model": "scripted", "api_key": KEY},
    )
    with ScriptedModel([text("OK"), text("OK")]) as other:
        seen: list[str] = []
        code, reply = await call(
            jp_fetch, "model-setup/test", "POST", {"base_url": other.base_url, "model": "x"}
        )
        seen = [headers.get("authorization", "") for headers in other.request_headers]
    assert code == 200 and reply["ok"] is True
    assert all(KEY not in header for header in seen)
    assert all("test-key-not-real" not in header for header in seen), "the server's env key stays home too"


async def test_test_button_reports_the_endpoints_exact_error(
    jp_fetch: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(error(401, "Incorrect API key provided: sk-wr***"))
    code, reply = await call(
        jp_fetch, "model-setup/test", "POST", {"base_url": scripted_model.base_url, "model": "scripted"}
    )
    assert code == 200 and reply["ok"] is False
    assert "HTTP 401" in reply["error"] and "Incorrect API key provided" in reply["error"]

    scripted_model.add(text("1 2 3 4 5", pieces=5, delay=0.02), text("I cannot call tools."))
    code, reply = await call(
        jp_fetch, "model-setup/test", "POST", {"base_url": scripted_model.base_url, "model": "scripted"}
    )
    assert reply["ok"] is True
    readiness = reply["readiness"]
    assert [line["check"] for line in readiness["lines"]] == ["streaming", "tools", "window", "prompt"]
    assert (readiness["streaming"], readiness["tools"], readiness["tool_mode"]) == (
        "streamed",
        "none",
        "text",
    )
    assert all(line["text"] in reply["texts"] for line in readiness["lines"]), "each line is translatable"
    # Kept with the model: the picker shows it once the model is saved.
    await call(jp_fetch, "model-setup", "PUT", {"base_url": scripted_model.base_url, "model": "scripted"})
    code, overview = await call(jp_fetch, "models")
    assert overview["models"][0]["readiness"]["tool_mode"] == "text"
    code, cost = await call(jp_fetch, "model-setup/test")
    assert cost == {"max_tokens": 300, "requests": 2}


async def test_the_saved_tool_call_mode_is_the_models(jp_fetch: Any, scripted_model: ScriptedModel) -> None:
    body = {"base_url": scripted_model.base_url, "model": "scripted", "tool_calls": "text"}
    code, overview = await call(jp_fetch, "model-setup", "PUT", body)
    assert code == 200 and overview["models"][0]["tool_calls"] == "text"
    code, _ = await call(jp_fetch, "model-setup", "PUT", {**body, "tool_calls": "sometimes"})
    assert code == 400


async def test_bad_endpoint_urls_get_clear_errors(jp_fetch: Any) -> None:
    code, reply = await call(jp_fetch, "model-setup/models", "POST", {"base_url": "ftp://example"})
    assert code == 400 and "not an http(s) URL" in reply["message"]
    code, reply = await call(jp_fetch, "model-setup/models", "POST", {"base_url": "http://127.0.0.1:9/v1"})
    assert code == 200 and reply["models"] == [] and "Could not connect" in reply["error"]
    code, reply = await call(jp_fetch, "model-setup", "PUT", {"base_url": "http://127.0.0.1:9/v1"})
    assert code == 400 and "model" in reply["message"]
    assert not default_setup_path().exists(), "nothing is saved from a refused request"


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], request: pytest.FixtureRequest) -> dict[str, Any]:
    extra = getattr(request, "param", None) or {}
    return {**jp_server_config, "HdspAgentApp": extra}


@pytest.mark.parametrize(
    "jp_server_config", [{"allow_user_models": False, "admin_contact": "ml-platform@corp"}], indirect=True
)
async def test_locked_models_refuse_every_write_and_name_who_to_ask(
    jp_fetch: Any, scripted_model: ScriptedModel
) -> None:
    code, state = await call(jp_fetch, "model-setup")
    shown = {name: state[name] for name in ("allowed", "admin_contact", "saved")}
    assert shown == {"allowed": False, "admin_contact": "ml-platform@corp", "saved": None}
    for path, method in (
        ("model-setup", "PUT"),
        ("model-setup/models", "POST"),
        ("model-setup/test", "POST"),
    ):
        code, reply = await call(
            jp_fetch, path, method, {"base_url": scripted_model.base_url, "model": "scripted"}
        )
        assert code == 403 and "ml-platform@corp" in reply["message"]
    assert not default_setup_path().exists()


@pytest.mark.parametrize("allowed", [True, False])
def test_a_saved_model_counts_only_while_users_may_choose(
    allowed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lock must hold even when a user file exists (saved before the lock, or written by hand).
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    UserModelFile().save("http://127.0.0.1:1234/v1", "mine", "sk-mine")
    catalog = catalog_from_config(HdspAgentConfig(model="admins", allow_user_models=allowed))
    names = [settings.model for settings in catalog.models]
    assert names == (["mine", "admins"] if allowed else ["admins"])


@pytest.mark.parametrize(
    "jp_server_config", [{"v1_pass_through_models": True, "model": "scripted"}], indirect=True
)
async def test_v1_passes_unknown_model_names_through_when_allowed(
    jp_fetch: Any, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_model.base_url)
    scripted_model.add(text("a"), text("b"))
    await chat(jp_fetch, "qwen2.5-coder:7b")
    await chat(jp_fetch, "scripted")
    assert [request["model"] for request in scripted_model.requests] == ["qwen2.5-coder:7b", "scripted"]


@pytest.mark.parametrize("jp_server_config", [{"model": "scripted"}], indirect=True)
async def test_v1_answers_unknown_names_with_the_default_model_by_default(
    jp_fetch: Any, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_model.base_url)
    scripted_model.add(text("a"))
    await chat(jp_fetch, "qwen2.5-coder:7b")
    assert scripted_model.requests[-1]["model"] == "scripted"


async def test_a_model_saved_without_a_key_is_called_with_no_key_never_the_servers(
    jp_fetch: Any, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README: "a key is only ever sent to the endpoint it was saved with". The server's $OPENAI_API_KEY
    (conftest's fake) and the administrator's headers stay home when the user names a URL in the sidebar."""
    server_key = "sk-test-FAKEserverenvkey-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", server_key)
    code, _ = await call(
        jp_fetch, "model-setup", "PUT", {"base_url": scripted_model.base_url, "model": "scripted"}
    )
    assert code == 200
    scripted_model.add(text("answered"))
    code, completion = await chat(jp_fetch)
    assert code == 200 and completion["choices"][0]["message"]["content"] == "answered"
    sent = scripted_model.request_headers[-1].get("authorization", "")
    assert server_key not in sent and "test-key-not-real" not in sent


def test_a_saved_model_does_not_carry_the_administrators_headers() -> None:
    config = HdspAgentConfig(extra_headers={"Authorization": "Bearer sk-test-FAKEgatewaytoken"})
    from hdsp_agent.agent.model_setup import SavedModel

    catalog = catalog_from_config(config, SavedModel("http://127.0.0.1:1/v1", "m"))
    saved = catalog.models[0]
    assert saved.extra_headers == {} and saved.resolved_api_key() == "no-key"


async def test_the_setup_check_warns_when_the_servers_environment_holds_the_key(
    jp_fetch: Any, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kernels inherit the server's environment as Jupyter starts them: the check says so and points to
    api_key_file. Without a key in the environment it says nothing."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-FAKEserverenvkey-0123456789")
    scripted_model.add(text("OK"), text("OK"))
    code, reply = await call(
        jp_fetch, "model-setup/test", "POST", {"base_url": scripted_model.base_url, "model": "scripted"}
    )
    assert code == 200 and reply["ok"] is True
    assert "api_key_file" in reply["warning"] and "$OPENAI_API_KEY" in reply["warning"]
    assert "sk-test-FAKE" not in json.dumps(reply)
    assert reply["texts"][reply["warning"]]["params"] == ["$OPENAI_API_KEY"]
    _, state = await call(jp_fetch, "model-setup")
    assert "api_key_file" in state["warning"]

    monkeypatch.delenv("OPENAI_API_KEY")
    scripted_model.add(text("OK"), text("OK"))
    _, reply = await call(
        jp_fetch, "model-setup/test", "POST", {"base_url": scripted_model.base_url, "model": "scripted"}
    )
    assert reply["ok"] is True and "warning" not in reply


async def test_a_key_saved_in_the_sidebar_reaches_no_kernel(
    jp_fetch: Any, jp_serverapp: Any, scripted_model: ScriptedModel
) -> None:
    """The saved key is read from its file when a request is made; it never enters os.environ, so a kernel
    the server starts (with the server's environment) has no such value."""
    saved_key = "sk-test-FAKEsavedinsidebar-0123456789"
    await call(
        jp_fetch,
        "model-setup",
        "PUT",
        {"base_url": scripted_model.base_url, "model": "scripted", "api_key": saved_key},
    )
    scripted_model.add(text("hi"))
    await chat(jp_fetch)  # the key is used once
    assert saved_key not in os.environ.values()
    manager = jp_serverapp.kernel_manager
    kernel_id = await manager.start_kernel()
    try:
        pid = manager.get_kernel(kernel_id).provisioner.process.pid
        environ = Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "replace")
    finally:
        await manager.shutdown_kernel(kernel_id, now=True)
    assert "PATH=" in environ and saved_key not in environ
