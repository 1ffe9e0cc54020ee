"""Sessions and their store: persistence across restarts, interrupted turns, export, and a damaged store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn, wait_for_event
from scripted_model import ScriptedModel, text, tool_calls
from test_loop import WriteNoteTool

from hdsp_agent.agent.store import SessionStore
from hdsp_agent.tools.builtin.ls import ListDirectoryTool

pytestmark = pytest.mark.asyncio


async def test_conversation_survives_a_restart(tmp_path: Path) -> None:
    store_path = tmp_path / "store.sqlite3"
    with ScriptedModel([tool_calls(("ls", "{}")), text("one file")]) as model:
        runtime = make_runtime(tmp_path, model, [ListDirectoryTool()])
        manager = make_manager(tmp_path, runtime, store_path)
        session = manager.create(title="My analysis")
        await run_turn(session, "list files")
        events_before, messages_before = list(session.events), list(session.messages)
        await manager.shutdown()

        restarted = make_manager(tmp_path, runtime, store_path)
        assert [s["title"] for s in restarted.list()] == ["My analysis"]
        reopened = await restarted.get(session.id)
        assert reopened.messages == messages_before
        assert reopened.events == events_before
        # the conversation goes on where it was
        model.add(text("still here"))
        events = await run_turn(reopened, "and now?")
        assert of_type(events, "turn.end")[0]["reason"] == "completed"
        assert events[0]["seq"] == events_before[-1]["seq"] + 1
        assert [m["role"] for m in model.requests[-1]["messages"][1:]] == ["user", "assistant", "tool", "assistant", "user"]
        await restarted.shutdown()


async def test_turn_cut_by_a_restart_is_marked_interrupted(tmp_path: Path) -> None:
    store_path = tmp_path / "store.sqlite3"
    with ScriptedModel([tool_calls(("write_note", '{"name": "a.txt"}'))]) as model:
        runtime = make_runtime(tmp_path, model, [WriteNoteTool()])
        crashed = make_manager(tmp_path, runtime, store_path)
        session = crashed.create()
        session.send("write it")
        await wait_for_event(session, "approval.request")
        crashed.store.flush()  # what a crash leaves on disk: everything up to the pending approval

        restarted = make_manager(tmp_path, runtime, store_path)
        recovered = await restarted.get(session.id)
        kinds = [e["type"] for e in recovered.events]
        assert kinds[-3:] == ["tool.status", "approval.resolved", "turn.end"]
        end = of_type(recovered.events, "turn.end")[-1]
        assert end["reason"] == "interrupted"
        assert of_type(recovered.events, "approval.resolved")[-1]["approved"] is False
        assert of_type(recovered.events, "tool.status")[-1]["status"] == "canceled"
        assert recovered.messages[-1]["role"] == "tool" and "interrupted" in recovered.messages[-1]["content"]
        assert restarted.list()[0]["status"] == "idle"
        await session.cancel()
        await restarted.shutdown()


async def test_rename_delete_and_export(tmp_path: Path) -> None:
    with ScriptedModel([tool_calls(("ls", "{}")), text("**done**")]) as model:
        manager = make_manager(tmp_path, make_runtime(tmp_path, model, [ListDirectoryTool()]))
        session = manager.create()
        await run_turn(session, "list please")
        await manager.rename(session.id, "Renamed")
        markdown = await manager.export(session.id, "markdown")
        exported = json.loads(await manager.export(session.id, "json"))
        other = manager.create()
        await manager.delete(other.id)
        assert [s["id"] for s in manager.list()] == [session.id]
        await manager.shutdown()
    assert markdown.startswith("# Renamed")
    assert "## User\n\nlist please" in markdown and "**Tool call** `ls`" in markdown and "**done**" in markdown
    assert exported["session"]["title"] == "Renamed"
    assert [m["role"] for m in exported["messages"]] == ["user", "assistant", "tool", "assistant"]


async def test_corrupted_store_is_moved_aside_and_the_server_starts(tmp_path: Path) -> None:
    store_path = tmp_path / "store.sqlite3"
    store_path.write_bytes(b"this is not a database" * 100)
    store = SessionStore(store_path)
    assert store.moved_aside is not None and store.moved_aside.exists()
    assert store.load_sessions() == []
    store.close()


async def test_store_writes_are_batched_off_the_loop_and_flushed(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s.sqlite3")
    for seq in range(1, 2001):
        store.append_event("abc", seq, {"seq": seq, "type": "assistant.delta", "text": "x"})
    await asyncio.to_thread(store.flush)
    assert len(store.load_events("abc")) == 2000
    store.close()
