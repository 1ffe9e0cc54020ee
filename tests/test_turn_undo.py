"""Undo that is exact (agent/undo.py): one path form, all or nothing, checkpoints and redo.

Real files, a real Jupyter server and the live-notebook WebSocket with ``BrowserTab`` playing the sidebar's
NotebookBridge (as in test_notebook_bridge.py); the model is the scripted one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn
from scripted_model import ScriptedModel, text, tool_calls
from test_loop import _AllowAll
from test_notebook_bridge import live_agent, open_tab
from test_notebook_tools import ok, write_notebook

from hdsp_agent.agent.undo import NothingToRedo, TurnUndo, UndoConflicts
from hdsp_agent.documents.edits import SetCellOutputs
from hdsp_agent.tools.builtin.edit.tools import SingleFindAndReplaceTool
from hdsp_agent.tools.state import ToolState


def _replace(path: str, old: str, new: str) -> tuple[str, str]:
    arguments = {"filepath": path, "old_string": old, "new_string": new}
    return ("single_find_and_replace", json.dumps(arguments))


async def test_undo_names_files_by_the_contents_path_the_frontend_uses(tmp_path: Path) -> None:
    # The model names the file by its absolute path; the editor knows it as "pkg/utils.py".
    (tmp_path / "pkg").mkdir()
    target = tmp_path / "pkg" / "utils.py"
    target.write_text("def f():\n    return 1\n")
    script = [tool_calls(_replace(str(target), "return 1", "return 2")), text("Done.")]
    with ScriptedModel(script) as model:
        state = ToolState()
        runtime = make_runtime(
            tmp_path, model, [SingleFindAndReplaceTool(state.files)], policy=_AllowAll(), state=state
        )
        manager = make_manager(tmp_path, runtime)
        session = manager.create()
        events = await run_turn(session, "change f")
        done = [e for e in of_type(events, "tool.status") if e["status"] == "done"]
        assert done[0]["details"]["path"] == "pkg/utils.py"
        await session.undo_last_turn()
        undone = of_type(session.events, "turn.undone")[0]
        # One path form end to end: the tool's result, the undo event's paths and its lines.
        assert undone["paths"] == ["pkg/utils.py"]
        assert undone["restored"] == ["pkg/utils.py: restored"]
        assert target.read_text() == "def f():\n    return 1\n"
        await manager.shutdown()


async def test_checkpoints_restore_several_turns_and_redo_brings_them_back(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("one\n")
    script = [
        tool_calls(_replace("notes.txt", "one", "two")),
        text("Done."),
        tool_calls(_replace("notes.txt", "two", "three")),
        text("Done."),
        text("Nothing to change."),
    ]
    with ScriptedModel(script) as model:
        state = ToolState()
        runtime = make_runtime(
            tmp_path, model, [SingleFindAndReplaceTool(state.files)], policy=_AllowAll(), state=state
        )
        manager = make_manager(tmp_path, runtime)
        session = manager.create()
        await run_turn(session, "first")
        await run_turn(session, "second")
        first, second = (e["turn_id"] for e in of_type(session.events, "message.user"))
        assert runtime.undo.checkpoints(session.id) == [first, second]

        result = await session.restore(first)
        assert result.turn_ids == [first, second]
        assert notes.read_text() == "one\n"
        assert runtime.undo.checkpoints(session.id) == []

        redone = await session.redo()
        assert redone.turn_ids == [first, second]
        assert notes.read_text() == "three\n"
        assert of_type(session.events, "turn.redone")[0]["paths"] == ["notes.txt"]
        # The redone turns are checkpoints again: undo the last one alone.
        assert runtime.undo.checkpoints(session.id) == [first, second]
        await session.undo_last_turn()
        assert notes.read_text() == "two\n"
        with pytest.raises(NothingToRedo):
            await run_turn(session, "third")  # a new turn ends what could be redone
            await session.redo()
        await manager.shutdown()


async def test_a_file_changed_since_the_turn_makes_the_whole_undo_refuse(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    script = [tool_calls(_replace("a.txt", "a", "A"), _replace("b.txt", "b", "B")), text("Done.")]
    with ScriptedModel(script) as model:
        state = ToolState()
        runtime = make_runtime(
            tmp_path, model, [SingleFindAndReplaceTool(state.files)], policy=_AllowAll(), state=state
        )
        manager = make_manager(tmp_path, runtime)
        session = manager.create()
        await run_turn(session, "capitalise")
        (tmp_path / "b.txt").write_text("B, and mine\n")
        with pytest.raises(UndoConflicts) as refused:
            await session.undo_last_turn()
        assert [(c.path, c.cell_id) for c in refused.value.conflicts] == [("b.txt", None)]
        # Nothing applied: a.txt keeps the agent's change too, and the undo can still be done later.
        assert (tmp_path / "a.txt").read_text() == "A\n"
        assert (tmp_path / "b.txt").read_text() == "B, and mine\n"
        assert of_type(session.events, "turn.undone") == []
        # A file open with unsaved changes in JupyterLab conflicts too: the editor's save would undo the undo.
        (tmp_path / "b.txt").write_text("B\n")
        with pytest.raises(UndoConflicts) as unsaved:
            await session.undo_last_turn(frozenset({"a.txt"}))
        assert "unsaved changes" in unsaved.value.conflicts[0].reason
        await session.undo_last_turn()
        assert (tmp_path / "a.txt").read_text() == "a\n" and (tmp_path / "b.txt").read_text() == "b\n"
        await manager.shutdown()


async def test_a_file_the_agents_change_was_partly_kept_in_is_still_undone_whole(tmp_path: Path) -> None:
    # The per-hunk review keeps some of a change: it tells the history what the file now holds.
    from hdsp_agent.tools.builtin.edit.filestate import atomic_write

    state = ToolState()
    undo = TurnUndo(state)
    target = tmp_path / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    undo.mark("s", "turn_1")
    atomic_write(target, b"ONE\nTWO\n")
    record = state.files.record_prior(
        "s", target, b"one\ntwo\n", after_sha256=hashlib.sha256(b"ONE\nTWO\n").hexdigest(), shown_as="a.txt"
    )
    atomic_write(target, b"ONE\ntwo\n")  # one hunk undone by the review, one kept
    state.files.amend_after(record, hashlib.sha256(b"ONE\ntwo\n").hexdigest())
    await undo.undo_last("s")
    assert target.read_bytes() == b"one\ntwo\n"


async def test_a_cell_the_user_touched_makes_the_whole_undo_refuse_and_nothing_is_cleared(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    # Reproduction 2 of issue 21: the agent inserts B, then inserts A and runs it; the user edits A.
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": nbformat.read(path, as_version=4)})
    agent = live_agent(jp_serverapp, jp_root_dir)
    session = agent.ctx.session_id
    undo = TurnUndo(ToolState(notebooks=agent.runtime))
    try:
        undo.mark(session, "turn_1")
        ok(await agent.call("insert_cell", path="nb.ipynb", source="b = 2"))
        cell_a = ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1")).details["cell_id"]
        outputs = SetCellOutputs(cell_id=cell_a, outputs=[], execution_count=7)
        await agent.runtime.change(agent.ctx, "nb.ipynb", outputs, f"outputs of cell {cell_a}")
        notebook = tab.notebooks["nb.ipynb"]
        before = [(cell.source, cell.get("execution_count")) for cell in notebook.cells]
        [typed] = [cell for cell in notebook.cells if cell.id == cell_a]
        typed.source = "a = 1  # mine"

        with pytest.raises(UndoConflicts) as refused:
            await undo.undo_last(session)
        assert [(c.path, c.cell_id) for c in refused.value.conflicts] == [("nb.ipynb", cell_a)]
        after = [(cell.source, cell.get("execution_count")) for cell in tab.notebooks["nb.ipynb"].cells]
        assert after == [(s if s != "a = 1" else "a = 1  # mine", n) for s, n in before]
        assert undo.checkpoints(session) == ["turn_1"]

        # The user puts the cell back as the agent left it: now the whole turn goes, at once.
        typed.source = "a = 1"
        result = await undo.undo_last(session)
        assert [cell.source for cell in tab.notebooks["nb.ipynb"].cells] == ["x = 1"]
        assert result.paths == ["nb.ipynb"]
        # And comes back with redo, cell ids and all.
        await undo.redo(session)
        redone = [(cell.source, cell.get("execution_count")) for cell in tab.notebooks["nb.ipynb"].cells]
        assert redone == before
    finally:
        await tab.close()
        await agent.close()


async def test_undo_of_a_closed_notebook_checks_the_file_the_agent_saved(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    from test_notebook_tools import Agent

    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    original = path.read_bytes()
    agent = Agent(jp_serverapp, jp_root_dir)
    undo = TurnUndo(ToolState(notebooks=agent.runtime))
    try:
        undo.mark(agent.ctx.session_id, "turn_1")
        ok(await agent.call("insert_cell", path="nb.ipynb", source="y = 2"))
        undo.mark(agent.ctx.session_id, "turn_2")
        ok(await agent.call("insert_cell", path="nb.ipynb", source="z = 3"))
        result = await undo.restore(agent.ctx.session_id, "turn_1")
        assert result.turn_ids == ["turn_1", "turn_2"]
        assert path.read_bytes() == original
        await undo.redo(agent.ctx.session_id)
        assert [c.source for c in nbformat.read(path, as_version=4).cells] == ["x = 1", "y = 2", "z = 3"]
        # The user saves their own change: the file is no longer what the agent saved.
        notebook = nbformat.read(path, as_version=4)
        notebook.cells[0].source = "x = 1  # mine"
        await jp_serverapp.contents_manager.save({"type": "notebook", "content": notebook}, "nb.ipynb")
        with pytest.raises(UndoConflicts):
            await undo.undo_last(agent.ctx.session_id)
        assert nbformat.read(path, as_version=4).cells[0].source == "x = 1  # mine"
    finally:
        await agent.close()


async def test_two_undos_in_a_row_of_a_closed_notebook_each_apply(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    """The first undo rewrites the file: the turn before it still finds the file as its own change left it."""
    from test_notebook_tools import Agent

    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    original = path.read_bytes()
    agent = Agent(jp_serverapp, jp_root_dir)
    undo = TurnUndo(ToolState(notebooks=agent.runtime))
    try:
        undo.mark(agent.ctx.session_id, "turn_1")
        ok(await agent.call("insert_cell", path="nb.ipynb", source="y = 2"))
        undo.mark(agent.ctx.session_id, "turn_2")
        ok(await agent.call("insert_cell", path="nb.ipynb", source="z = 3"))
        await undo.undo_last(agent.ctx.session_id)
        assert [c.source for c in nbformat.read(path, as_version=4).cells] == ["x = 1", "y = 2"]
        await undo.undo_last(agent.ctx.session_id)
        assert path.read_bytes() == original
    finally:
        await agent.close()


async def test_restore_and_redo_routes_answer_conflicts_with_the_cells_and_files(
    jp_serverapp: Any, jp_fetch: Any, jp_root_dir: Path
) -> None:
    import tornado.httpclient

    agent_app = jp_serverapp.web_app.settings["hdsp_agent"]
    created = await jp_fetch("hdsp-agent", "sessions", method="POST", body="{}")
    session_id = json.loads(created.body)["id"]
    for name, body in (("restore", '{"turn_id": "t"}'), ("redo", "{}")):
        with pytest.raises(tornado.httpclient.HTTPClientError) as refused:
            await jp_fetch("hdsp-agent", "sessions", session_id, name, method="POST", body=body)
        assert refused.value.code == 409
    with pytest.raises(tornado.httpclient.HTTPClientError) as bad:
        await jp_fetch("hdsp-agent", "sessions", session_id, "restore", method="POST", body="{}")
    assert bad.value.code == 400

    # A turn that changed a file the user changed since: 409 with the file named, nothing applied.
    (jp_root_dir / "a.txt").write_text("a\n")
    undo = agent_app.runtime.undo
    undo.mark(session_id, "turn_1")
    store = agent_app.runtime.state.files
    # What a turn's edit records, made by hand (the agent's write left other bytes than the file has now).
    store.record_prior(
        session_id, jp_root_dir / "a.txt", b"before\n", after_sha256="0" * 64, shown_as="a.txt"
    )
    with pytest.raises(tornado.httpclient.HTTPClientError) as conflict:
        await jp_fetch(
            "hdsp-agent", "sessions", session_id, "restore", method="POST", body='{"turn_id": "turn_1"}'
        )
    assert conflict.value.code == 409
    reply = json.loads(conflict.value.response.body)
    assert reply["conflicts"] == [
        {"path": "a.txt", "cell_id": None, "reason": "the file changed after the agent wrote it"}
    ]
    assert (jp_root_dir / "a.txt").read_text() == "a\n"


async def test_two_undos_at_once_apply_once(tmp_path: Path) -> None:
    from hdsp_agent.agent.undo import NothingToUndo
    from hdsp_agent.tools.builtin.edit.filestate import atomic_write

    state = ToolState()
    undo = TurnUndo(state)
    target = tmp_path / "a.txt"
    target.write_bytes(b"before\n")
    undo.mark("s", "turn_1")
    atomic_write(target, b"after\n")
    state.files.record_prior(
        "s", target, b"before\n", after_sha256=hashlib.sha256(b"after\n").hexdigest(), shown_as="a.txt"
    )
    first, second = await asyncio.gather(undo.undo_last("s"), undo.undo_last("s"), return_exceptions=True)
    assert not isinstance(first, BaseException) and first.turn_ids == ["turn_1"]
    assert isinstance(second, NothingToUndo)
    assert target.read_bytes() == b"before\n"
    # One undo, so one redo.
    await undo.redo("s")
    assert target.read_bytes() == b"after\n"
    with pytest.raises(NothingToRedo):
        await undo.redo("s")


async def test_a_redo_never_writes_a_path_that_became_protected(tmp_path: Path) -> None:
    # The agent writes scratch/json.py where no notebook is (an ordinary file then); the user undoes the turn
    # and starts a notebook in that folder. Redoing now would plant a module that stands in for json in every
    # kernel started there: the redo refuses, nothing is applied.
    from hdsp_agent.tools.builtin.edit.tools import CreateNewFileTool

    (tmp_path / "scratch").mkdir()
    (tmp_path / "notes.txt").write_text("one\n")
    created = ("create_new_file", json.dumps({"filepath": "scratch/json.py", "contents": "import os\n"}))
    script = [tool_calls(created, _replace("notes.txt", "one", "two")), text("Done.")]
    with ScriptedModel(script) as model:
        state = ToolState()
        tools = [CreateNewFileTool(state.files), SingleFindAndReplaceTool(state.files)]
        runtime = make_runtime(tmp_path, model, tools, policy=_AllowAll(), state=state)
        manager = make_manager(tmp_path, runtime)
        session = manager.create()
        await run_turn(session, "add a helper")
        assert (tmp_path / "scratch" / "json.py").exists()
        await session.undo_last_turn()
        assert not (tmp_path / "scratch" / "json.py").exists()
        (tmp_path / "scratch" / "explore.ipynb").write_text("{}")
        with pytest.raises(UndoConflicts) as refused:
            await session.redo()
        assert [c.path for c in refused.value.conflicts] == ["scratch/json.py"]
        assert (
            "protected" in refused.value.conflicts[0].reason and "'json'" in refused.value.conflicts[0].reason
        )
        assert not (tmp_path / "scratch" / "json.py").exists()
        assert (tmp_path / "notes.txt").read_text() == "one\n"  # all or nothing
        # Without the notebook the same redo is an ordinary one again.
        (tmp_path / "scratch" / "explore.ipynb").unlink()
        await session.redo()
        assert (tmp_path / "scratch" / "json.py").read_text() == "import os\n"
        assert (tmp_path / "notes.txt").read_text() == "two\n"
        await manager.shutdown()


# -- issue 24: undo re-resolves each path when it applies ----------------------------------------------------


def _agent_wrote(state: ToolState, session_id: str, file: Path, prior: bytes | None, after: bytes) -> None:
    """What an edit tool leaves: the prior bytes recorded under the resolved path, then the new ones."""
    state.files.record_prior(
        session_id,
        file.resolve(),
        prior,
        after_sha256=hashlib.sha256(after).hexdigest(),
        shown_as=file.name if file.parent.name != "src" else f"src/{file.name}",
    )
    file.write_bytes(after)


def _swap_for_link(folder: Path, target: Path) -> None:
    """The folder is moved aside and a link of the same name points at ``target`` (outside the root)."""
    folder.rename(folder.with_name(folder.name + ".moved"))
    folder.symlink_to(target, target_is_directory=True)


@pytest.mark.parametrize("created", [False, True], ids=["changed", "created"])
async def test_undo_does_not_follow_a_folder_swapped_for_a_link(tmp_path: Path, created: bool) -> None:
    """After the turn wrote ``src/app.py``, ``src`` becomes a link to a folder outside the project holding an
    ``app.py`` with the very bytes the agent wrote (so the content check passes). The undo is refused for
    that path with a conflict naming it; nothing outside is written or deleted."""
    root, outside = tmp_path / "project", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    app = root / "src" / "app.py"
    prior = None if created else b"print('before')\n"
    if prior is not None:
        app.write_bytes(prior)
    state = ToolState()
    undo = TurnUndo(state)
    undo.mark("s1", "t1")
    _agent_wrote(state, "s1", app, prior, b"print('agent')\n")
    (outside / "app.py").write_bytes(b"print('agent')\n")
    _swap_for_link(root / "src", outside)
    with pytest.raises(UndoConflicts) as refused:
        await undo.undo_last("s1")
    assert [conflict.path for conflict in refused.value.conflicts] == ["src/app.py"]
    assert "link" in refused.value.conflicts[0].reason
    assert (outside / "app.py").read_bytes() == b"print('agent')\n", "written or deleted outside the root"
    assert sorted(p.name for p in outside.iterdir()) == ["app.py"]


async def test_redo_does_not_follow_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    app = root / "src" / "app.py"
    app.write_bytes(b"before\n")
    state = ToolState()
    undo = TurnUndo(state)
    undo.mark("s1", "t1")
    _agent_wrote(state, "s1", app, b"before\n", b"agent\n")
    await undo.undo_last("s1")
    assert app.read_bytes() == b"before\n"
    (outside / "app.py").write_bytes(b"before\n")
    _swap_for_link(root / "src", outside)
    with pytest.raises(UndoConflicts) as refused:
        await undo.redo("s1")
    assert [conflict.path for conflict in refused.value.conflicts] == ["src/app.py"]
    assert (outside / "app.py").read_bytes() == b"before\n"
