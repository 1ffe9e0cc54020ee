"""hdsp-agent behind a real JupyterHub: two users, the real proxy, one single-user server each.

The hub starts once for the module (``hub`` fixture; see ``hub_process.py`` for how it is set up).
Everything a client of hdsp-agent uses goes through the hub's proxy under ``/user/<name>/``: the sidebar's
REST routes and conversation socket (with a dropped socket resumed), the NotebookBridge socket, the MCP
endpoint and ``/v1`` with a hub token scoped to the user's server. Then isolation: alice's cookie and token
are refused on each of bob's routes, each user's conversations and grants sit in their own dirs, and alice's
runaway turn does not stop bob's turn from finishing.

One scripted model serves both servers; it picks each conversation's script by the ``[script:NAME]`` tag in
the conversation's first user message and the step by the number of assistant messages so far, so concurrent
turns of two users never take each other's replies.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import nbformat
import pytest
import pytest_asyncio
from fake_tab import FakeTab
from hub_process import BrowserSession, Hub, server_url, websocket
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from scripted_model import Reply, ScriptedModel, text, tool_calls

TURN_TIMEOUT = 90.0

# name -> step -> reply (None: the script is over)
Script = Callable[[int], "Reply | None"]


def _steps(*replies: Reply) -> Script:
    return lambda step: replies[step] if step < len(replies) else None


def _runaway(step: int) -> Reply:
    """A turn that never ends by itself: a cell that never finishes, then one slow step after another."""
    if step == 0:
        return tool_calls(
            ("run_cell", json.dumps({"path": "spin.ipynb", "code": "while True: pass", "timeout": 1}))
        )
    # A different call each step, or the loop would stop it as a repeated call.
    reply = tool_calls(("file_glob_search", json.dumps({"pattern": f"*{step}*"})), call_ids=[f"call_{step}"])
    reply.delay = 0.2
    return reply


SCRIPTS: dict[str, Script] = {
    "answer": _steps(tool_calls(("run_cell", json.dumps({"path": "nb.ipynb", "code": "print(6*7)"})))),
    "bridge": _steps(tool_calls(("read_notebook", json.dumps({"path": "live.ipynb"})))),
    "runaway": _runaway,
    "floor": _steps(tool_calls(("run_terminal_command", json.dumps({"command": "echo floor reached"})))),
    "bob": _steps(tool_calls(("run_cell", json.dumps({"path": "bob.ipynb", "code": "print(6*7)"})))),
}


def _script_reply(request: dict[str, Any]) -> Reply:
    messages = request.get("messages", [])
    first_user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    name = first_user.split("[script:", 1)[-1].split("]", 1)[0] if "[script:" in first_user else ""
    script = SCRIPTS.get(name)
    step = sum(1 for m in messages if m.get("role") == "assistant")
    reply = script(step) if script is not None else None
    return reply if reply is not None else text(f"done ({name or 'no script'})")


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(factory=_script_reply) as scripted:
        yield scripted


# The administrator's floor for everyone (hdsp_agent/admin.json in the hub's JUPYTER_CONFIG_PATH dir).
ADMIN_FLOOR = {
    "disabled_tools": ["fetch_url_content"],
    "deny_rules": ["run_terminal_command(echo floor*)"],
}


@pytest.fixture(scope="module")
def hub(model: ScriptedModel) -> Iterator[Hub]:
    running = Hub(model.base_url, admin_config=ADMIN_FLOOR)
    try:
        running.start()
        running.spawn("alice", "bob")
        yield running
    finally:
        running.stop()


@pytest_asyncio.fixture
async def alice(hub: Hub) -> AsyncIterator[BrowserSession]:
    session = await hub.login("alice")
    yield session
    await session.close()


@pytest_asyncio.fixture
async def bob(hub: Hub) -> AsyncIterator[BrowserSession]:
    session = await hub.login("bob")
    yield session
    await session.close()


def token_headers(token: str) -> dict[str, str]:
    return {"Authorization": f"token {token}"}


async def create_conversation(user: BrowserSession, server_user: str | None = None) -> httpx.Response:
    target = server_user or user.user
    return await user.client.post(
        server_url(user.hub, target, "hdsp-agent", "sessions"), json={}, headers=user.headers(target)
    )


async def token_conversation(hub: Hub, user: str, token: str) -> Any:
    """A new conversation and its socket, authenticated with a hub token instead of a login."""
    async with httpx.AsyncClient(timeout=30) as http:
        created = await http.post(
            server_url(hub, user, "hdsp-agent", "sessions"), json={}, headers=token_headers(token)
        )
    created.raise_for_status()
    url = server_url(hub, user, "hdsp-agent", "sessions", created.json()["id"], "ws")
    return await websocket(url, token_headers(token))


async def conversation_socket(user: BrowserSession, conversation_id: str) -> Any:
    url = server_url(user.hub, user.user, "hdsp-agent", "sessions", conversation_id, "ws")
    return await websocket(url, {"Cookie": user.cookie_header()})


async def read_until(ws: Any, stop: Callable[[dict[str, Any]], bool], events: list[dict[str, Any]]) -> None:
    while True:
        raw = await asyncio.wait_for(ws.read_message(), TURN_TIMEOUT)
        if raw is None:
            raise RuntimeError("the socket closed mid-turn")
        event = json.loads(raw)
        events.append(event)
        if stop(event):
            return


async def run_turn(ws: Any, content: str, *, approve: str | None = "once") -> list[dict[str, Any]]:
    """Send a message, approve each call the server asks about (``approve`` scope), collect to turn.end."""
    await ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    await ws.write_message(json.dumps({"type": "send", "content": content}))
    events: list[dict[str, Any]] = []
    while True:
        await read_until(ws, lambda e: e["type"] in ("turn.end", "approval.request"), events)
        if events[-1]["type"] == "turn.end":
            return events
        call_id = events[-1]["request"]["call_id"]
        await ws.write_message(json.dumps({"type": "approve", "call_id": call_id, "scope": approve}))


def finished(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "tool.status" and e["status"] in ("done", "errored", "denied")]


def write_notebook(hub: Hub, user: str, name: str) -> None:
    nbformat.write(nbformat.v4.new_notebook(), hub.home(user) / name)


@asynccontextmanager
async def mcp_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(*streams) as session:
                await session.initialize()
                yield session


# -- through the hub's proxy ------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_sidebar_turn_runs_a_cell_on_the_users_server_through_the_hub(
    hub: Hub, alice: BrowserSession
) -> None:
    write_notebook(hub, "alice", "nb.ipynb")
    created = await create_conversation(alice)
    assert created.status_code == 201, created.text
    ws = await conversation_socket(alice, created.json()["id"])
    events = await run_turn(ws, "[script:answer] compute 6*7 in nb.ipynb")
    ws.close()
    assert events[-1]["reason"] == "completed", events[-1]
    done = finished(events)
    assert [e["status"] for e in done] == ["done"] and "42" in done[0]["content"]
    await asyncio.sleep(0.3)  # the file is saved after the call answers
    cell = nbformat.read(hub.home("alice") / "nb.ipynb", as_version=4).cells[0]
    assert cell.outputs[0].text == "42\n"
    listed = await alice.client.get(server_url(hub, "alice", "hdsp-agent", "sessions"))
    assert created.json()["id"] in [s["id"] for s in listed.json()["sessions"]]


@pytest.mark.asyncio
async def test_a_dropped_socket_resumes_through_the_proxy_without_losing_events(
    hub: Hub, alice: BrowserSession
) -> None:
    write_notebook(hub, "alice", "nb.ipynb")
    conversation_id = (await create_conversation(alice)).json()["id"]
    first = await conversation_socket(alice, conversation_id)
    await first.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    await first.write_message(json.dumps({"type": "send", "content": "[script:answer] again"}))
    seen: list[dict[str, Any]] = []
    await read_until(first, lambda e: e["type"] == "approval.request", seen)
    first.close()  # the browser's connection drops while the server waits for the approval

    second = await conversation_socket(alice, conversation_id)
    last_seq = max(e["seq"] for e in seen if "seq" in e)
    await second.write_message(json.dumps({"type": "resume", "since_seq": last_seq}))
    call_id = seen[-1]["request"]["call_id"]
    await second.write_message(json.dumps({"type": "approve", "call_id": call_id, "scope": "once"}))
    rest: list[dict[str, Any]] = []
    await read_until(second, lambda e: e["type"] == "turn.end", rest)
    second.close()
    sequence = [e["seq"] for e in seen + rest if "seq" in e]
    assert sequence == list(range(1, sequence[-1] + 1)), "an event was lost or repeated across the reconnect"
    assert rest[-1]["reason"] == "completed"
    assert "42" in finished(rest)[0]["content"]


@pytest.mark.asyncio
async def test_notebook_bridge_socket_serves_the_open_notebook_through_the_proxy(
    hub: Hub, alice: BrowserSession
) -> None:
    # Only the tab has this notebook (no file): a read that finds the marker went through the bridge.
    live = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("bridge_marker = 'only in the tab'")])
    bridge = await websocket(
        server_url(hub, "alice", "hdsp-agent", "notebooks", "ws"), {"Cookie": alice.cookie_header()}
    )
    tab = FakeTab(bridge, {"live.ipynb": live})
    await tab.announce()
    conversation_id = (await create_conversation(alice)).json()["id"]
    ws = await conversation_socket(alice, conversation_id)
    events = await run_turn(ws, "[script:bridge] read live.ipynb")
    ws.close()
    await tab.close()
    assert [r["method"] for r in tab.requests] == ["read"]
    assert "only in the tab" in finished(events)[0]["content"]


@pytest.mark.asyncio
async def test_mcp_endpoint_and_v1_take_a_hub_token_scoped_to_the_users_server(hub: Hub) -> None:
    token = hub.token("alice", ["access:servers!user=alice"])
    async with mcp_session(server_url(hub, "alice", "hdsp-agent", "mcp"), token_headers(token)) as session:
        tools = await session.list_tools()
        assert "read_file" in [tool.name for tool in tools.tools]
    async with httpx.AsyncClient(timeout=60) as http:
        completion = await http.post(
            server_url(hub, "alice", "hdsp-agent", "v1", "chat", "completions"),
            headers=token_headers(token),
            json={"model": "scripted", "messages": [{"role": "user", "content": "hello"}]},
        )
    assert completion.status_code == 200, completion.text
    assert completion.json()["choices"][0]["message"]["content"] == "done (no script)"


# -- isolation --------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_alices_cookie_is_refused_on_bobs_routes_and_sockets(
    hub: Hub, alice: BrowserSession, bob: BrowserSession
) -> None:
    bobs_conversation = (await create_conversation(bob)).json()["id"]
    refused = await alice.client.get(server_url(hub, "bob", "hdsp-agent", "sessions"))
    assert refused.status_code == 403
    posted = await create_conversation(alice, "bob")
    assert posted.status_code == 403
    read = await alice.client.get(server_url(hub, "bob", "hdsp-agent", "sessions", bobs_conversation))
    assert read.status_code == 403
    for path in (("sessions", bobs_conversation, "ws"), ("notebooks", "ws")):
        with pytest.raises(Exception) as refused_socket:
            await websocket(server_url(hub, "bob", "hdsp-agent", *path), {"Cookie": alice.cookie_header()})
        assert "403" in str(refused_socket.value), refused_socket.value
    # Control: bob's own cookie opens the same socket.
    own = await websocket(
        server_url(hub, "bob", "hdsp-agent", "sessions", bobs_conversation, "ws"),
        {"Cookie": bob.cookie_header()},
    )
    own.close()


@pytest.mark.asyncio
async def test_alices_token_is_refused_on_bobs_mcp_v1_and_sockets(hub: Hub) -> None:
    token = hub.token("alice", ["access:servers!user=alice"])
    headers = token_headers(token)
    async with httpx.AsyncClient(timeout=30) as http:
        for method, path in (
            ("GET", ("sessions",)),
            ("POST", ("sessions",)),
            ("GET", ("info",)),
            ("GET", ("v1", "models")),
            ("POST", ("v1", "chat", "completions")),
            ("POST", ("mcp",)),
        ):
            response = await http.request(
                method,
                server_url(hub, "bob", "hdsp-agent", *path),
                headers={**headers, "Accept": "application/json, text/event-stream"},
                json={"model": "scripted", "messages": [{"role": "user", "content": "hi"}]},
            )
            assert response.status_code == 403, (method, path, response.status_code)
        # Control: the same token works on alice's own server.
        own = await http.get(server_url(hub, "alice", "hdsp-agent", "v1", "models"), headers=headers)
        assert own.status_code == 200
    for path in (("notebooks", "ws"),):
        with pytest.raises(Exception) as refused_socket:
            await websocket(server_url(hub, "bob", "hdsp-agent", *path), headers)
        assert "403" in str(refused_socket.value)


@pytest.mark.asyncio
async def test_conversations_and_grants_live_in_each_users_own_dirs(
    hub: Hub, alice: BrowserSession, bob: BrowserSession
) -> None:
    write_notebook(hub, "alice", "nb.ipynb")
    conversation_id = (await create_conversation(alice)).json()["id"]
    ws = await conversation_socket(alice, conversation_id)
    await run_turn(ws, "[script:answer] remember this", approve="always")
    ws.close()

    bobs_list = (await bob.client.get(server_url(hub, "bob", "hdsp-agent", "sessions"))).json()["sessions"]
    assert conversation_id not in [s["id"] for s in bobs_list]
    missing = await bob.client.get(server_url(hub, "bob", "hdsp-agent", "sessions", conversation_id))
    assert missing.status_code == 404

    def agent_files(user: str) -> set[str]:
        home = hub.home(user)
        return {str(p.relative_to(home)) for p in home.rglob("*") if "hdsp_agent" in p.parts and p.is_file()}

    alices = agent_files("alice")
    assert ".local/share/jupyter/hdsp_agent/sessions.sqlite3" in alices
    assert ".jupyter/hdsp_agent/permissions.json" in alices
    assert "run_cell" in (hub.home("alice") / ".jupyter/hdsp_agent/permissions.json").read_text()
    assert ".jupyter/hdsp_agent/permissions.json" not in agent_files("bob")
    # The audit log too: alice's tool calls in her own file, under her hub name.
    audit = hub.home("alice") / ".local/share/jupyter/hdsp_agent/audit.jsonl"
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    mine = [r for r in records if r.get("session") == conversation_id and r["event"] == "tool_call"]
    assert [(r["user"], r["tool"], r["approval"]["scope"]) for r in mine] == [("alice", "run_cell", "always")]
    bobs_audit = hub.home("bob") / ".local/share/jupyter/hdsp_agent/audit.jsonl"
    assert not bobs_audit.exists() or conversation_id not in bobs_audit.read_text()
    assert not (hub.admin_config_dir / "hdsp_agent" / "permissions.json").exists()


@pytest.mark.asyncio
async def test_alices_runaway_turn_does_not_hold_up_bobs_turn(
    hub: Hub, alice: BrowserSession, bob: BrowserSession
) -> None:
    write_notebook(hub, "alice", "spin.ipynb")
    write_notebook(hub, "bob", "bob.ipynb")
    alices_id = (await create_conversation(alice)).json()["id"]
    alices_ws = await conversation_socket(alice, alices_id)
    await alices_ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    await alices_ws.write_message(json.dumps({"type": "send", "content": "[script:runaway] spin"}))
    alices_events: list[dict[str, Any]] = []
    await read_until(alices_ws, lambda e: e["type"] == "approval.request", alices_events)
    call_id = alices_events[-1]["request"]["call_id"]
    await alices_ws.write_message(json.dumps({"type": "approve", "call_id": call_id, "scope": "once"}))
    # Alice's cell is spinning (the call answered "running") and her turn keeps stepping.
    await read_until(
        alices_ws,
        lambda e: e["type"] == "tool.status" and e["name"] == "file_glob_search" and e["status"] == "done",
        alices_events,
    )
    try:
        bobs_ws = await conversation_socket(bob, (await create_conversation(bob)).json()["id"])
        bobs_events = await asyncio.wait_for(run_turn(bobs_ws, "[script:bob] compute"), TURN_TIMEOUT)
        bobs_ws.close()
        assert bobs_events[-1]["reason"] == "completed"
        assert "42" in finished(bobs_events)[0]["content"]
        status = await alice.client.get(server_url(hub, "alice", "hdsp-agent", "sessions", alices_id))
        assert status.json()["status"] == "running", "alice's turn was meant to still be running"
    finally:
        await alices_ws.write_message(json.dumps({"type": "cancel"}))
        await read_until(alices_ws, lambda e: e["type"] == "turn.end", alices_events)
        alices_ws.close()
        kernels = await alice.client.get(server_url(hub, "alice", "api", "kernels"))
        for kernel in kernels.json():  # stop the spinning cell: the machine is shared
            await alice.client.post(
                server_url(hub, "alice", "api", "kernels", kernel["id"], "interrupt"), headers=alice.headers()
            )


# -- central administration ----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_users_own_config_cannot_loosen_the_admin_floor(hub: Hub) -> None:
    """Carol's ~/.jupyter tries every way to loosen the admin's settings; her server keeps them."""
    jupyter_dir = hub.home("carol") / ".jupyter"
    (jupyter_dir / "hdsp_agent").mkdir(parents=True)
    loosening = {
        "disabled_tools": [],
        "deny_rules": [],
        "allow_rules": ["run_terminal_command(echo*)", "fetch_url_content"],
        "base_url": "http://127.0.0.1:9/v1",  # nothing listens there: a turn that works used the admin's
    }
    (jupyter_dir / "jupyter_server_config.json").write_text(json.dumps({"HdspAgentApp": loosening}))
    (jupyter_dir / "hdsp_agent" / "permissions.json").write_text(
        json.dumps({"allow": ["run_terminal_command(echo*)", "fetch_url_content"]})
    )
    (jupyter_dir / "hdsp_agent" / "admin.json").write_text(
        json.dumps({"deny_rules": [], "disabled_tools": []})
    )
    await asyncio.to_thread(hub.spawn, "carol")
    token = hub.token("carol", ["access:servers!user=carol"])

    async with httpx.AsyncClient(timeout=30) as http:
        info = await http.get(server_url(hub, "carol", "hdsp-agent", "info"), headers=token_headers(token))
    offered = [tool["name"] for tool in info.json()["tools"]]
    assert "fetch_url_content" not in offered and "run_terminal_command" in offered

    ws = await token_conversation(hub, "carol", token)
    events = await run_turn(ws, "[script:floor] echo it")
    ws.close()
    assert events[-1]["reason"] == "completed", events[-1]  # the model answered: the admin's endpoint
    [call] = finished(events)
    assert call["status"] == "denied", call
    assert "administrator" in json.dumps(call)
