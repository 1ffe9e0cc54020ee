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
        assert [m["role"] for m in model.requests[-1]["messages"][1:]] == [
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
        ]
        await restarted.shutdown()


@pytest.mark.fault
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
    assert (
        "## User\n\nlist please" in markdown and "**Tool call** `ls`" in markdown and "**done**" in markdown
    )
    assert exported["session"]["title"] == "Renamed"
    assert [m["role"] for m in exported["messages"]] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.fault
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


async def test_undo_last_turn_restores_files_it_changed(tmp_path: Path) -> None:
    from test_loop import _AllowAll

    from hdsp_agent.agent.undo import NothingToUndo
    from hdsp_agent.tools.builtin.edit.tools import CreateNewFileTool, SingleFindAndReplaceTool
    from hdsp_agent.tools.state import ToolState

    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    script = [
        tool_calls(
            ("create_new_file", '{"filepath": "new.txt", "contents": "fresh"}'),
            (
                "single_find_and_replace",
                '{"filepath": "notes.txt", "old_string": "beta", "new_string": "gamma"}',
            ),
        ),
        text("Done."),
    ]
    with ScriptedModel(script) as model:
        state = ToolState()  # the tools' file state is the one turn undo reads
        tools = [CreateNewFileTool(state.files), SingleFindAndReplaceTool(state.files)]
        runtime = make_runtime(tmp_path, model, tools, policy=_AllowAll(), state=state)
        manager = make_manager(tmp_path, runtime)
        session = manager.create()
        await run_turn(session, "edit things")
        assert (tmp_path / "new.txt").read_text() == "fresh"
        assert (tmp_path / "notes.txt").read_text() == "alpha\ngamma\n"
        restored = (await session.undo_last_turn()).restored
        assert not (tmp_path / "new.txt").exists()
        assert (tmp_path / "notes.txt").read_text() == "alpha\nbeta\n"
        assert len(restored) == 2
        assert of_type(session.events, "turn.undone")[0]["restored"] == restored
        assert "undid the previous turn" in session.messages[-1]["content"]
        with pytest.raises(NothingToUndo):
            await session.undo_last_turn()
        await manager.shutdown()


async def test_read_only_mode_offers_only_read_tools(tmp_path: Path) -> None:
    from hdsp_agent.config import HdspAgentConfig
    from hdsp_agent.permissions.policy import build_policy
    from hdsp_agent.tools.defaults import default_tools

    with ScriptedModel([text("a"), text("b")]) as model:
        policy = build_policy(HdspAgentConfig(), tmp_path, permissions_file=tmp_path / "permissions.json")
        runtime = make_runtime(tmp_path, model, default_tools(), policy=policy)
        manager = make_manager(tmp_path, runtime)
        session = manager.create()
        await run_turn(session, "look only", context={"mode": "read-only"})
        other = manager.create()
        await run_turn(other, "anything")
        await manager.shutdown()
    read_only_tools = {t["function"]["name"] for t in model.requests[0]["tools"]}
    all_tools = {t["function"]["name"] for t in model.requests[1]["tools"]}
    assert "read_file" in read_only_tools and "create_new_file" not in read_only_tools
    assert "run_terminal_command" not in read_only_tools
    assert "create_new_file" in all_tools, "the mode belongs to one conversation"


async def test_idle_conversations_leave_memory_and_come_back_from_the_store(tmp_path: Path) -> None:
    from hdsp_agent.agent import conversations as sessions_module

    with ScriptedModel([text(f"answer {i}") for i in range(3)]) as model:
        manager = make_manager(tmp_path, make_runtime(tmp_path, model, []))
        first = manager.create()
        await run_turn(first, "remember me")
        for _ in range(sessions_module.MAX_LIVE + 5):
            manager.create()
        assert len(manager._live) <= sessions_module.MAX_LIVE
        assert first.id not in manager._live
        manager.store.flush()
        reopened = await manager.get(first.id)
        assert reopened is not first
        assert reopened.messages == first.messages and reopened.events == first.events
        await manager.shutdown()


async def test_a_conversation_records_its_notebooks_and_keeps_them_across_a_restart(tmp_path: Path) -> None:
    """The notebook in view when a message is sent and every notebook a tool changed are the conversation's
    (a notebook only read is not); the list reply carries them, after a restart too."""
    import nbformat
    from jupyter_server.services.contents.filemanager import FileContentsManager
    from test_loop import _AllowAll

    from hdsp_agent.tools.base import ToolContext
    from hdsp_agent.tools.jupyter import notebook_tools
    from hdsp_agent.web.rest_models import SessionList

    for name in ("analysis.ipynb", "other.ipynb", "reference.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(), tmp_path / name)
    contents = FileContentsManager(root_dir=str(tmp_path))
    store_path = tmp_path / "store.sqlite3"
    script = [
        tool_calls(("read_notebook", '{"path": "reference.ipynb"}')),
        tool_calls(("insert_cell", '{"path": "./other.ipynb", "source": "x = 1"}')),
        text("Added a cell to other.ipynb."),
    ]
    with ScriptedModel(script) as model:
        runtime = make_runtime(tmp_path, model, notebook_tools(), policy=_AllowAll())
        runtime.context_factory = lambda **overrides: ToolContext(
            root_dir=tmp_path, contents_manager=contents, **overrides
        )
        manager = make_manager(tmp_path, runtime, store_path)
        session = manager.create()
        untouched = manager.create()
        assert session.record.notebooks == []
        # The sidebar names the notebook in view with JupyterLab's drive prefix.
        in_view = {"active_document": {"path": "RTC:analysis.ipynb"}}
        events = await run_turn(session, "add a cell there", context=in_view)
        assert of_type(events, "turn.end")[0]["reason"] == "completed"
        assert session.record.notebooks == ["analysis.ipynb", "other.ipynb"]
        # The sidebar hears of each notebook as it is tied.
        announced = [event["notebooks"] for event in of_type(events, "session.updated")]
        assert ["analysis.ipynb"] in announced and announced[-1] == ["analysis.ipynb", "other.ipynb"]
        await manager.shutdown()

        restarted = make_manager(tmp_path, runtime, store_path)
        listed = SessionList.model_validate({"sessions": restarted.list()}).model_dump()["sessions"]
        by_id = {record["id"]: record for record in listed}
        assert by_id[session.id]["notebooks"] == ["analysis.ipynb", "other.ipynb"]
        assert by_id[untouched.id]["notebooks"] == []
        await restarted.shutdown()


async def test_a_store_written_before_notebooks_were_recorded_opens_with_its_conversations(
    tmp_path: Path,
) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL, created REAL NOT NULL, "
        "updated REAL NOT NULL, model TEXT NOT NULL DEFAULT '', status TEXT NOT NULL DEFAULT 'idle')"
    )
    old.execute("INSERT INTO sessions VALUES ('s1', 'Old chat', 1.0, 2.0, '', 'idle')")
    old.commit()
    old.close()
    store = SessionStore(path)
    assert store.moved_aside is None
    [record] = store.load_sessions()
    assert (record.title, record.notebooks) == ("Old chat", [])
    record.notebooks.append("a.ipynb")
    store.upsert_session(record)
    store.flush()
    assert store.load_sessions()[0].notebooks == ["a.ipynb"]
    store.close()
