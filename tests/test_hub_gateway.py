"""The model gateway as a hub service, on a real JupyterHub: users' servers reach the model only through it.

One hub for the module (``hub_process.py``) with the gateway added the way docs/deploy.md says
(``hdsp_agent.hub.config.gateway_for_users`` in jupyterhub_config.py, the gateway's URL as ``base_url`` in
admin.json, the model's key in a file only the hub's user can read). alice and bob chat through it from the
sidebar's path (REST + the conversation socket through the hub's proxy) and through ``/v1``; carol has used up
her day's tokens and is refused on both, with the gateway's message; every request is audited in the gateway's
data dir; and a real kernel in alice's server finds the key nowhere it can read.

When the tests run as root (CI), users' servers run without any capability and the hub's secret files (the
key, the gateway's data dir) belong to another uid: out of the servers' reach as in production, where a real
spawner runs each server as its own Unix user. Run as one ordinary user, nothing keeps a user's code from the
hub's files, so the key test needs root.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from datetime import date
from typing import Any

import httpx
import nbformat
import pytest
import pytest_asyncio
from hub_process import BrowserSession, Hub, server_url
from jupyter_process import free_port
from scripted_model import Reply, ScriptedModel, text, tool_calls
from test_hub import conversation_socket, create_conversation, finished, run_turn, token_headers

from hdsp_agent.hub.gateway.quotas import UsageLedger

MODEL_KEY = "sk-hub-gateway-" + secrets.token_hex(12)
DAILY_TOKENS = 1_000_000
AS_ROOT = os.geteuid() == 0
HUB_SECRETS_UID = 65534  # nobody
GATEWAY = "hdsp-gateway"
# Three servers to spawn on a loaded machine: the module fixture may take longer than one test's 120 s.
pytestmark = pytest.mark.timeout(300)

# What a cell in alice's kernel runs: look for the key (given hex-encoded, so the cell's own text, saved in
# her notebook and conversation, does not contain it) in the environment, in /proc, and in every file under
# the hub's dir it can read, and try the key file and the gateway's audit log by name.
PROBE = """
import json, os
needle = bytes.fromhex({needle!r}).decode()
def tried(path):
    try:
        with open(path, errors="replace") as f:
            return "KEY" if needle in f.read() else "read"
    except Exception as e:
        return type(e).__name__
found = {{"env": [k for k, v in os.environ.items() if needle in v], "files": [], "read": 0}}
for root, dirs, files in os.walk({hub_dir!r}):
    for name in files:
        result = tried(os.path.join(root, name))
        found["read"] += result != "PermissionError"
        if result == "KEY":
            found["files"].append(os.path.join(root, name))
for pid in filter(str.isdigit, os.listdir("/proc")):
    for part in ("environ", "cmdline"):
        if tried(f"/proc/{{pid}}/{{part}}") == "KEY":
            found["files"].append(f"/proc/{{pid}}/{{part}}")
found["key_file"] = tried({key_file!r})
found["audit"] = tried({audit!r})
found["has_hub_token"] = bool(os.environ.get("JUPYTERHUB_API_TOKEN"))
print("PROBE" + json.dumps(found))
"""


def _reply(request: dict[str, Any]) -> Reply:
    messages = request.get("messages", [])
    first_user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    step = sum(1 for m in messages if m.get("role") == "assistant")
    if "[script:probe]" in first_user and step == 0:
        code = first_user.split("[script:probe]", 1)[1]
        return tool_calls(("run_cell", json.dumps({"path": "probe.ipynb", "code": code, "timeout": 60})))
    if "[script:slow]" in first_user:
        reply = text("one two three four five", pieces=5)
        reply.delay = 0.3
        return reply
    return text(f"hello from the model ({first_user[:20]})")


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(factory=_reply) as scripted:
        yield scripted


def _extra_config(model_url: str, gateway_port: int) -> str:
    config = f"""
# -- the model gateway, as docs/deploy.md sets it up --
from hdsp_agent.hub.config import gateway_for_users

USERS_BASE_URL = gateway_for_users(
    c,
    upstream_url={model_url!r},
    api_key_file="{{dir}}/model-key",
    data_dir="{{dir}}/gateway",
    url="http://127.0.0.1:{gateway_port}",
    daily_tokens={DAILY_TOKENS},
    concurrent_requests=4,
)
"""
    if AS_ROOT:
        # Users' servers without any capability: uid 0 then reads only what uid 0 owns, so the hub's secret
        # files, owned by another uid, are out of their reach as they are in production, where the hub's
        # files belong to the hub's user and each server runs as its own user. (Here Python itself lives
        # under /root, 0700: a server as another uid could not even start.)
        config += """
c.Spawner.cmd = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--", *c.Spawner.cmd]
"""
    return config


def gateway_hub(model: ScriptedModel) -> Hub:
    """The hub with the gateway, not started: the key file written, carol's day used up."""
    gateway_port = free_port()
    users_base_url = f"http://127.0.0.1:{gateway_port}/services/{GATEWAY}/v1"
    hub = Hub(
        model.base_url,
        admin_config={"base_url": users_base_url},
        extra_config=_extra_config(model.base_url, gateway_port),
    )
    key_file = hub.dir / "model-key"
    key_file.write_text(MODEL_KEY + "\n")
    key_file.chmod(0o600)
    # carol has used her day's tokens already (the gateway keeps the count in its data dir).
    UsageLedger(hub.dir / "gateway" / "usage.sqlite3").add(
        "carol", date.today().isoformat(), tokens=DAILY_TOKENS
    )
    (hub.dir / "gateway").chmod(0o700)
    if AS_ROOT:
        # The hub's secrets belong to a uid other than the servers' (see _extra_config).
        for secret in (key_file, hub.dir / "gateway", hub.dir / "gateway" / "usage.sqlite3"):
            os.chown(secret, HUB_SECRETS_UID, HUB_SECRETS_UID)
    return hub


@pytest.fixture(scope="module")
def hub(model: ScriptedModel) -> Iterator[Hub]:
    running = gateway_hub(model)
    try:
        running.start()
        running.spawn("alice", "bob", "carol")
        yield running
    finally:
        running.stop()


@pytest_asyncio.fixture
async def login(hub: Hub) -> AsyncIterator[Any]:
    sessions: list[BrowserSession] = []

    async def log_in(user: str) -> BrowserSession:
        sessions.append(await hub.login(user))
        return sessions[-1]

    yield log_in
    for session in sessions:
        await session.close()


def gateway_audit(hub: Hub) -> list[dict[str, Any]]:
    path = hub.dir / "gateway" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def sidebar_turn(user: BrowserSession, content: str) -> list[dict[str, Any]]:
    created = await create_conversation(user)
    assert created.status_code == 201, created.text
    ws = await conversation_socket(user, created.json()["id"])
    try:
        return await run_turn(ws, content)
    finally:
        ws.close()


def write_notebook(hub: Hub, user: str, name: str) -> None:
    nbformat.write(nbformat.v4.new_notebook(), hub.home(user) / name)


@pytest.mark.asyncio
async def test_two_users_chat_through_the_gateway_which_alone_holds_the_key(
    hub: Hub, model: ScriptedModel, login: Any
) -> None:
    for name in ("alice", "bob"):
        events = await sidebar_turn(await login(name), f"say hello to {name}")
        assert events[-1]["reason"] == "completed", events[-1]
        said = "".join(e.get("text", "") for e in events if e["type"] == "assistant.delta")
        assert f"hello from the model (say hello to {name})" in said, events
    # Every request the model saw came from the gateway, with the model's key, never a user's hub token.
    assert model.request_headers and {h["authorization"] for h in model.request_headers} == {
        f"Bearer {MODEL_KEY}"
    }
    records = [r for r in gateway_audit(hub) if r["outcome"] == "ok"]
    assert {r["user"] for r in records} >= {"alice", "bob"}
    assert all(r["model"] == "scripted" and r["prompt_tokens"] > 0 for r in records)
    # The users' own dirs hold no record of the gateway's (its log is central).
    for name in ("alice", "bob"):
        assert not list(hub.home(name).rglob("usage.sqlite3"))


@pytest.mark.asyncio
async def test_v1_streams_through_the_gateway_in_chunks(hub: Hub, model: ScriptedModel) -> None:
    token = hub.token("bob", ["access:servers!user=bob"])
    arrivals: list[float] = []
    pieces: list[str] = []
    body = {
        "model": "scripted",
        "stream": True,
        "messages": [{"role": "user", "content": "[script:slow] go"}],
    }
    async with httpx.AsyncClient(timeout=60) as http:
        url = server_url(hub, "bob", "hdsp-agent", "v1", "chat", "completions")
        async with http.stream("POST", url, json=body, headers=token_headers(token)) as response:
            assert response.status_code == 200, await response.aread()
            async for line in response.aiter_lines():
                if line.startswith("data:") and line != "data: [DONE]":
                    chunk = json.loads(line[5:])
                    if chunk.get("choices") and chunk["choices"][0]["delta"].get("content"):
                        arrivals.append(time.monotonic())
                        pieces.append(chunk["choices"][0]["delta"]["content"])
    assert "".join(pieces) == "one two three four five"
    # Five pieces 0.3 s apart at the model arrive spread out at the client: nothing buffered on the way.
    assert len(arrivals) == 5 and arrivals[-1] - arrivals[0] > 0.8
    assert any(r["user"] == "bob" and r["outcome"] == "ok" for r in gateway_audit(hub))


@pytest.mark.asyncio
async def test_a_user_over_quota_is_refused_on_the_sidebar_and_on_v1(
    hub: Hub, model: ScriptedModel, login: Any
) -> None:
    seen_before = len(model.requests)
    events = await sidebar_turn(await login("carol"), "carol asks for more")
    errors = [e for e in events if e["type"] == "error"]
    assert errors and errors[0]["code"] == "E_MODEL_QUOTA", events
    message = errors[0]["message"]
    assert "the model gateway refused this request" in message
    assert f"carol has used {DAILY_TOKENS:,} of the {DAILY_TOKENS:,} model tokens allowed per day" in message

    token = hub.token("carol", ["access:servers!user=carol"])
    async with httpx.AsyncClient(timeout=60) as http:
        refused = await http.post(
            server_url(hub, "carol", "hdsp-agent", "v1", "chat", "completions"),
            json={"model": "scripted", "messages": [{"role": "user", "content": "carol via v1"}]},
            headers=token_headers(token),
        )
    assert refused.status_code == 429, refused.text
    assert "model tokens allowed per day" in refused.json()["error"]["message"]
    # Nothing of carol's reached the model; both refusals are in the central log.
    assert not any("carol" in json.dumps(r) for r in model.requests[seen_before:])
    refusals = [r for r in gateway_audit(hub) if r["user"] == "carol"]
    assert len(refusals) >= 2 and {r["outcome"] for r in refusals} == {"refused"}
    assert {r["code"] for r in refusals} == {"daily_tokens"}


@pytest.mark.skipif(
    not AS_ROOT, reason="users' servers are kept from the hub's files only when the tests run as root"
)
@pytest.mark.asyncio
async def test_a_users_kernel_finds_the_key_nowhere_it_can_read(hub: Hub, login: Any) -> None:
    write_notebook(hub, "alice", "probe.ipynb")
    code = PROBE.format(
        needle=MODEL_KEY.encode().hex(),
        hub_dir=str(hub.dir),
        key_file=str(hub.dir / "model-key"),
        audit=str(hub.dir / "gateway" / "audit.jsonl"),
    )
    events = await sidebar_turn(await login("alice"), "[script:probe]" + code)
    done = finished(events)
    assert done and done[0]["status"] == "done", events
    output = done[0]["content"]
    found = json.loads(output.split("PROBE", 1)[1].splitlines()[0])
    assert found["has_hub_token"] and found["read"] > 10  # the probe ran as alice and read the readable files
    assert found["env"] == [] and found["files"] == []
    assert found["key_file"] == "PermissionError"
    # The central audit log is out of reach too (the gateway's data dir is the hub user's alone).
    assert found["audit"] == "PermissionError"
