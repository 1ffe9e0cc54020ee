"""Undo, restore and redo survive a restart of the Jupyter server (agent/undo_records.py, agent/store.py).

A real ``jupyter server`` (tests/jupyter_process.py) with the scripted model: turns edit a file and a
notebook, the server is stopped with SIGTERM and started again on the same store, and Undo, Restore to here
and Redo put back the exact bytes. The bound (``undo_history_mb``) drops the oldest checkpoints first, and
says so.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from jupyter_process import JupyterProcess, run_turn_over_ws
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.agent.store import SessionStore

ALLOW = {"allow_rules": ["single_find_and_replace", "insert_cell", "create_new_file"]}


def _replace(path: str, old: str, new: str) -> tuple[str, str]:
    return ("single_find_and_replace", json.dumps({"filepath": path, "old_string": old, "new_string": new}))


async def run_turn_over_ws_more(ws: Any) -> list[dict[str, Any]]:
    """The events up to the next turn's end (after ``run_turn_over_ws`` stopped at a replayed one)."""
    events = []
    while True:
        raw = await asyncio.wait_for(ws.read_message(), 120)
        assert raw is not None, "socket closed mid-turn"
        events.append(json.loads(raw))
        if events[-1].get("type") == "turn.end":
            return events


def _insert(path: str, source: str) -> tuple[str, str]:
    return ("insert_cell", json.dumps({"path": path, "source": source}))


async def _post(server: JupyterProcess, http: httpx.AsyncClient, session: str, what: str, **body: Any) -> Any:
    response = await http.post(
        f"{server.base}/hdsp-agent/sessions/{session}/{what}", headers=server.headers, json=body
    )
    assert response.status_code == 200, (what, response.status_code, response.text)
    return response.json()


async def _turn(server: JupyterProcess, session: str, content: str) -> list[dict[str, Any]]:
    """Send ``content`` and return the events of that turn (the socket's replay of earlier ones left out)."""
    ws = await server.connect(session)
    try:
        events = await run_turn_over_ws(ws, content)
        while not any(e.get("type") == "message.user" and e.get("content") == content for e in events):
            events = await run_turn_over_ws_more(ws)
    finally:
        ws.close()
    start = max(i for i, e in enumerate(events) if e.get("type") == "message.user")
    events = events[start:]
    failed = [
        e for e in events if e.get("type") == "tool.status" and e.get("status") in ("errored", "denied")
    ]
    assert not failed, [(e.get("status"), e.get("error"), e.get("result")) for e in failed]
    return events


@pytest.mark.asyncio
@pytest.mark.timeout(600)
async def test_undo_restore_and_redo_work_after_a_server_restart(tmp_path: Path) -> None:
    script = [
        tool_calls(_replace("a.py", "x = 1", "x = 2"), _insert("nb.ipynb", "print('turn one')")),
        text("Done."),
        tool_calls(_replace("a.py", "x = 2", "x = 3"), _insert("nb.ipynb", "print('turn two')")),
        text("Done."),
    ]
    with ScriptedModel(script) as model:
        server = JupyterProcess(model_url=model.base_url, extra=ALLOW)
        a_py, notebook = server.root / "a.py", server.root / "nb.ipynb"
        a_py.write_bytes(b"x = 1\n")
        nb = nbformat.v4.new_notebook()
        nb.cells.append(nbformat.v4.new_code_cell("import os"))
        nbformat.write(nb, notebook)
        original = (a_py.read_bytes(), notebook.read_bytes())
        server.start()
        try:
            async with httpx.AsyncClient(timeout=60) as http:
                session = await server.create_session(http)
                await _turn(server, session, "first")
                after_one = (a_py.read_bytes(), notebook.read_bytes())
                await _turn(server, session, "second")
                after_two = (a_py.read_bytes(), notebook.read_bytes())
                assert after_two[0] == b"x = 3\n"
                assert "turn two" in after_two[1].decode()
                events = (
                    await http.get(
                        f"{server.base}/hdsp-agent/sessions/{session}/events", headers=server.headers
                    )
                ).json()["events"]
                turns = [e["turn_id"] for e in events if e["type"] == "turn.end"]

                server.restart()

                # Restore to the checkpoint before the first turn: both turns undone, the original bytes.
                restored = await _post(server, http, session, "restore", turn_id=turns[0])
                assert restored["turn_ids"] == turns
                assert (a_py.read_bytes(), notebook.read_bytes()) == original

                server.restart()  # what can be redone is stored too

                redone = await _post(server, http, session, "redo")
                assert redone["turn_ids"] == turns
                assert (a_py.read_bytes(), notebook.read_bytes()) == after_two

                server.restart()  # the redo's own records are stored: its turns are checkpoints again

                # The composer's Undo: the second turn, back to the exact bytes after the first.
                undone = await _post(server, http, session, "undo")
                assert undone["turn_ids"] == [turns[1]]
                assert (a_py.read_bytes(), notebook.read_bytes()) == after_one
                await _post(server, http, session, "redo")
                assert (a_py.read_bytes(), notebook.read_bytes()) == after_two
        finally:
            server.stop()


@pytest.mark.asyncio
@pytest.mark.timeout(400)
async def test_the_bound_on_the_undo_history_drops_the_oldest_checkpoints_first(tmp_path: Path) -> None:
    big = "y" * 40_000
    script = [
        tool_calls(_replace("one.txt", "old", "new")),
        text("Done."),
        tool_calls(_replace("two.txt", "old", "new")),
        text("Done."),
        tool_calls(_replace("three.txt", "old", "new")),
        text("Done."),
    ]
    with ScriptedModel(script) as model:
        # 0.1 MB: two files' prior content (40 KB each) fit, three do not.
        server = JupyterProcess(model_url=model.base_url, extra={**ALLOW, "undo_history_mb": 0.1})
        for name in ("one.txt", "two.txt", "three.txt"):
            (server.root / name).write_text(f"old\n{big}\n")
        server.start()
        try:
            async with httpx.AsyncClient(timeout=60) as http:
                session = await server.create_session(http)
                await _turn(server, session, "one")
                await _turn(server, session, "two")
                await _turn(server, session, "three")
                events = (
                    await http.get(
                        f"{server.base}/hdsp-agent/sessions/{session}/events", headers=server.headers
                    )
                ).json()["events"]
                turns = [e["turn_id"] for e in events if e["type"] == "turn.end"]
                pruned = [e for e in events if e["type"] == "checkpoints.pruned"]
                # The oldest turn's checkpoint went, and the conversation was told, in the user's words.
                assert [e["turn_ids"] for e in pruned] == [[turns[0]]]
                assert "under 0.1 MB" in pruned[0]["message"]
                assert pruned[0]["texts"][pruned[0]["message"]]["id"].startswith(
                    "Older checkpoints were removed"
                )

                server.restart()

                refused = await http.post(
                    f"{server.base}/hdsp-agent/sessions/{session}/restore",
                    headers=server.headers,
                    json={"turn_id": turns[0]},
                )
                assert refused.status_code != 200
                # The newer checkpoints still restore, after the restart.
                restored = await _post(server, http, session, "restore", turn_id=turns[1])
                assert restored["turn_ids"] == turns[1:]
                assert (server.root / "two.txt").read_text() == f"old\n{big}\n"
                assert (server.root / "three.txt").read_text() == f"old\n{big}\n"
                assert (server.root / "one.txt").read_text() == f"new\n{big}\n"
        finally:
            server.stop()


def test_a_store_written_before_the_undo_tables_opens_with_its_conversations(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL, created REAL NOT NULL,
            updated REAL NOT NULL, model TEXT NOT NULL DEFAULT '', status TEXT NOT NULL DEFAULT 'idle');
        CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, payload TEXT NOT NULL,
            PRIMARY KEY (session_id, seq));
        CREATE TABLE messages (session_id TEXT NOT NULL, position INTEGER NOT NULL, payload TEXT NOT NULL,
            PRIMARY KEY (session_id, position));
        INSERT INTO sessions VALUES ('s1', 'Old chat', 1.0, 2.0, 'm', 'idle');
        INSERT INTO events VALUES ('s1', 1, '{"type": "message.user", "content": "hi"}');
        INSERT INTO messages VALUES ('s1', 0, '{"role": "user", "content": "hi"}');
        """
    )
    old.commit()
    old.close()
    store = SessionStore(path)
    try:
        assert [record.title for record in store.load_sessions()] == ["Old chat"]
        assert store.load_events("s1") == [{"type": "message.user", "content": "hi"}]
        assert store.load_messages("s1") == [{"role": "user", "content": "hi"}]
        assert store.moved_aside is None
        store.put_undo_item("s1", "file", "r1", {"record_id": "r1"}, b"prior")
        store.flush()
        assert [item[1:] for item in store.load_undo_items()] == [("file", {"record_id": "r1"}, b"prior")]
    finally:
        store.close()
