"""The administrator's floor on a real JupyterHub started from docs/deploy.md's own ``jupyterhub_config.py``.

The hub's config is read from the guide (section 1, "The hub's config"), its constants pointed at a temp dir
and free ports (``hub_process.guide_hub_config``), and started as the tests run: as root in CI. Then each
user tries a sanctioned way around the administrator's ``admin.json``, which fixes the model and a daily token
limit:

- alice's ``~/.jupyter`` names her own endpoint and models, lets herself pick models, turns her audit off
  and points it at ``/dev/null``; her ``model.json`` (the sidebar's saved model) names her own endpoint too;
  and she tries to save another in the sidebar. Nothing of it takes: her turn and her ``/v1`` call reach the
  admin's model, and both are in her audit log where the hub's floor keeps it, counted in her day's tokens;
- bob is over the day's tokens: ``/v1`` answers 429 in OpenAI's shape and the refusal is audited;
- carol's server starts after the administrator turned ``/v1`` off: it answers 403 saying so.

Nothing listens at the users' own endpoint (port 9): a turn that completes went to the admin's model.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hub_process import Hub, server_url, websocket
from scripted_model import ScriptedModel, text

from hdsp_agent.agent.model_setup import UserModelFile

GUIDE = Path(__file__).parent.parent / "docs" / "deploy.md"
USERS_OWN = "http://127.0.0.1:9/v1"  # nothing listens there
DAILY_LIMIT = 50_000
ADMIN = {"daily_token_limit": DAILY_LIMIT, "admin_contact": "the floor test's admin"}
TURN_TIMEOUT = 90.0


def guide_hub_config_block() -> str:
    """The ``python`` block under "### The hub's config" in docs/deploy.md: what an administrator copies."""
    section = GUIDE.read_text().split("### The hub's config", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert found, "docs/deploy.md has no python block under 'The hub's config'"
    return found.group(1)


def data_dir(hub: Hub, user: str) -> Path:
    return hub.home(user) / ".local" / "share" / "jupyter" / "hdsp_agent"


def audit_records(hub: Hub, user: str) -> list[dict[str, Any]]:
    path = data_dir(hub, user) / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def write_alices_loosening(hub: Hub) -> None:
    jupyter_dir = hub.home("alice") / ".jupyter"
    own_model = {"name": "mine", "model": "my-own-model", "base_url": USERS_OWN}
    loosening = {
        "base_url": USERS_OWN,
        "models": [own_model],
        "allow_user_models": True,
        "audit_enabled": False,
        "audit_log_path": "/dev/null",
        "daily_token_limit": 0,
    }
    jupyter_dir.mkdir(parents=True)
    (jupyter_dir / "jupyter_server_config.json").write_text(json.dumps({"HdspAgentApp": loosening}))
    # What the sidebar saved before the administrator fixed the model.
    UserModelFile(jupyter_dir / "hdsp_agent" / "model.json").save(USERS_OWN, "saved-in-the-sidebar", None)


def write_bobs_day_used_up(hub: Hub) -> None:
    usage = data_dir(hub, "bob") / "usage.json"
    usage.parent.mkdir(parents=True)
    usage.write_text(json.dumps({"day": time.strftime("%Y-%m-%d"), "tokens": DAILY_LIMIT + 1}))


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(factory=lambda request: text("the admin's model answered")) as scripted:
        yield scripted


@pytest.fixture(scope="module")
def hub(model: ScriptedModel) -> Iterator[Hub]:
    running = Hub(model.base_url, admin_config=ADMIN, guide_config=guide_hub_config_block())
    try:
        write_alices_loosening(running)
        write_bobs_day_used_up(running)
        running.start()
        running.spawn("alice", "bob", timeout=300)  # a loaded machine: two servers side by side
        yield running
    finally:
        running.stop()


def token_headers(hub: Hub, user: str) -> dict[str, str]:
    return {"Authorization": f"token {hub.token(user, [f'access:servers!user={user}'])}"}


async def v1_completion(hub: Hub, user: str, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=60) as http:
        return await http.post(
            server_url(hub, user, "hdsp-agent", "v1", "chat", "completions"),
            headers=headers,
            json={"model": "my-own-model", "messages": [{"role": "user", "content": "hello"}]},
        )


def test_the_guides_hub_config_starts_both_users_servers(hub: Hub) -> None:
    """Both servers of the guide's config are up, as the user the tests run as (root in CI)."""
    servers = [pid for pid in hub._user_server_pids() if "jupyterhub-singleuser" in _cmdline(pid)]
    assert len(servers) == 2, hub.log_tail()
    assert {os.stat(f"/proc/{pid}").st_uid for pid in servers} == {os.geteuid()}
    assert "--ServerApp.allow_root=True" in _cmdline(servers[0]) or os.geteuid() != 0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.asyncio
async def test_a_users_own_model_is_refused_and_her_turn_reaches_the_admins_model(hub: Hub) -> None:
    headers = token_headers(hub, "alice")
    async with httpx.AsyncClient(timeout=60) as http:
        setup = await http.get(server_url(hub, "alice", "hdsp-agent", "model-setup"), headers=headers)
        saved = await http.put(
            server_url(hub, "alice", "hdsp-agent", "model-setup"),
            headers=headers,
            json={"base_url": USERS_OWN, "model": "another-of-mine"},
        )
        models = await http.get(server_url(hub, "alice", "hdsp-agent", "models"), headers=headers)
        created = await http.post(
            server_url(hub, "alice", "hdsp-agent", "sessions"), json={}, headers=headers
        )
    # The sidebar: no saved model shown, no save possible, and who to ask.
    assert (setup.json()["allowed"], setup.json()["saved"]) == (False, None), setup.json()
    assert saved.status_code == 403, saved.text
    assert "set by the administrator" in saved.text and "the floor test's admin" in saved.text
    listed = [(m["model"], m["base_url"]) for m in models.json()["models"]]
    assert listed == [("scripted", hub_model_url(hub))]

    ws = await websocket(
        server_url(hub, "alice", "hdsp-agent", "sessions", created.json()["id"], "ws"), headers
    )
    await ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    await ws.write_message(json.dumps({"type": "send", "content": "hello"}))
    events: list[dict[str, Any]] = []
    while not events or events[-1]["type"] != "turn.end":
        events.append(json.loads(await asyncio.wait_for(ws.read_message(), TURN_TIMEOUT)))
    ws.close()
    assert events[-1]["reason"] == "completed", events[-1]
    # Her audit, though her config turned it off and pointed it at /dev/null: in her data dir, under her name.
    calls = [r for r in audit_records(hub, "alice") if r["event"] == "model_call"]
    assert [(r["user"], r["model"], r["session"]) for r in calls] == [
        ("alice", "scripted", created.json()["id"])
    ]


def hub_model_url(hub: Hub) -> str:
    return str(json.loads((hub.admin_config_dir / "hdsp_agent" / "admin.json").read_text())["base_url"])


@pytest.mark.asyncio
async def test_v1_counts_tokens_audits_and_refuses_a_user_over_the_days_limit(hub: Hub) -> None:
    usage = data_dir(hub, "alice") / "usage.json"
    before = json.loads(usage.read_text())["tokens"] if usage.exists() else 0
    answered = await v1_completion(hub, "alice", token_headers(hub, "alice"))
    assert answered.status_code == 200, answered.text
    assert answered.json()["choices"][0]["message"]["content"] == "the admin's model answered"
    assert json.loads(usage.read_text())["tokens"] > before
    v1_calls = [r for r in audit_records(hub, "alice") if r.get("door") == "v1"]
    # The admin's model, although the client named alice's own.
    assert [(r["event"], r["user"], r["model"]) for r in v1_calls] == [("model_call", "alice", "scripted")]

    refused = await v1_completion(hub, "bob", token_headers(hub, "bob"))
    assert refused.status_code == 429, refused.text
    error = refused.json()["error"]
    assert (error["type"], error["code"]) == ("insufficient_quota", "E_QUOTA_TOKENS")
    assert "allowance is used up" in error["message"] and f"{DAILY_LIMIT:,}" in error["message"]
    bobs = audit_records(hub, "bob")
    assert [(r["event"], r["code"], r["door"]) for r in bobs] == [("quota", "E_QUOTA_TOKENS", "v1")]


@pytest.mark.asyncio
async def test_v1_turned_off_by_the_admin_answers_403_saying_so(hub: Hub) -> None:
    admin = json.loads((hub.admin_config_dir / "hdsp_agent" / "admin.json").read_text())
    hub.write_admin_config({**admin, "v1_enabled": False})  # read when carol's server starts
    await asyncio.to_thread(hub.spawn, "carol", timeout=300)
    headers = token_headers(hub, "carol")
    refused = await v1_completion(hub, "carol", headers)
    async with httpx.AsyncClient(timeout=30) as http:
        listed = await http.get(server_url(hub, "carol", "hdsp-agent", "v1", "models"), headers=headers)
    assert (refused.status_code, listed.status_code) == (403, 403), refused.text
    assert refused.json()["error"]["code"] == "v1_disabled"
    assert "turned off by your administrator" in refused.json()["error"]["message"]


def test_every_file_hdsp_agent_wrote_in_a_users_jupyter_dirs_is_in_the_guides_table(hub: Hub) -> None:
    """After the turns above: each file under the users' hdsp_agent dirs is named in section 1's table."""
    table = GUIDE.read_text().split("| What | Where (per user) | Setting |", 1)[1].split("\n\n", 1)[0]
    written = {
        re.sub(r"(-wal|-shm|\.\d+|\.partial)$", "", path.name)
        for user in ("alice", "bob", "carol")
        for path in hub.home(user).rglob("*")
        if path.is_file() and "hdsp_agent" in path.parts
    }
    assert {"sessions.sqlite3", "audit.jsonl", "usage.json", "model.json"} <= written
    assert sorted(name for name in written if f"/hdsp_agent/{name}`" not in table) == []
