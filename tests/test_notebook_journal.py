"""The agent's unsaved changes to open notebooks survive the tab (``documents/journal.py``, ``live.py``).

A real Jupyter server and WebSocket; the browser tab is ``fake_tab.FakeTab``, which announces the notebooks it
has just loaded from disk (``loaded``) as a freshly (re)loaded JupyterLab tab does, and saves through the
server's contents manager when asked, as JupyterLab's save does.
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import nbformat
import pytest
from fake_tab import FakeTab
from test_notebook_bridge import live_agent
from test_notebook_tools import ok, write_notebook

from hdsp_agent.documents.edits import DeleteCell, InsertCell, SetCellSource, new_cell
from hdsp_agent.documents.journal import replay_onto, replayable


async def open_from_disk(jp_ws_fetch: Any, jp_serverapp: Any, root: Path, name: str) -> FakeTab:
    """A tab that (re)opens ``name``: its notebook is the file's content, as JupyterLab loads it."""
    ws = await jp_ws_fetch("hdsp-agent", "notebooks", "ws")
    notebooks = {name: nbformat.read(root / name, as_version=4)}
    tab = FakeTab(ws, notebooks, contents_manager=jp_serverapp.contents_manager, loaded=True)
    await tab.announce()
    return tab


def live_notebooks(jp_serverapp: Any) -> Any:
    return jp_serverapp.web_app.settings["hdsp_agent"].live_notebooks


def sources(notebook: nbformat.NotebookNode) -> list[str]:
    return ["".join(cell.source) for cell in notebook.cells]


def on_disk(root: Path, name: str) -> list[str]:
    return sources(nbformat.read(root / name, as_version=4))


async def wait_until(condition: Any, seconds: float = 15.0) -> None:
    # Generous: on a 2-core CI machine a tab's save can wait behind kernels starting in the other worker.
    # A condition that holds returns at once; the time only matters when it never does.
    for _ in range(int(seconds / 0.05)):
        try:
            if condition():
                return
        except nbformat.reader.NotJSONError:
            pass  # the file read while the tab's save was writing it
        await asyncio.sleep(0.05)
    raise AssertionError("the condition did not become true")


async def test_a_reloaded_tab_gets_the_agents_unsaved_cells_back_and_later_steps_land_with_them(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1"))
        first = tab.notebooks["nb.ipynb"].cells[0].id
        ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=first, source="x = 10"))
        assert on_disk(jp_root_dir, "nb.ipynb") == ["x = 1"], "nothing saved behind the tab's back"

        # The page reloads: the tab goes, a new one opens the notebook from its file.
        await tab.close()
        tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
        await wait_until(lambda: len(tab.notebooks["nb.ipynb"].cells) == 2)
        assert sources(tab.notebooks["nb.ipynb"]) == ["x = 10", "a = 1"]

        # The turn's next step sees and extends the notebook with the agent's changes.
        read = ok(await agent.call("read_notebook", path="nb.ipynb"))
        assert "a = 1" in read.content and "live notebook" in read.content
        ok(await agent.call("insert_cell", path="nb.ipynb", source="b = 2"))
        assert sources(tab.notebooks["nb.ipynb"]) == ["x = 10", "a = 1", "b = 2"]
    finally:
        await tab.close()
        await agent.close()


async def test_a_tab_that_reconnects_with_its_changes_gets_nothing_twice(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1"))
        kept = tab.notebooks
        await tab.close()
        # The socket dropped but the page stayed: the panel, with the agent's cell, was announced before.
        ws = await jp_ws_fetch("hdsp-agent", "notebooks", "ws")
        tab = FakeTab(ws, kept, contents_manager=jp_serverapp.contents_manager)
        await tab.announce()
        await asyncio.sleep(0.2)
        assert sources(tab.notebooks["nb.ipynb"]) == ["x = 1", "a = 1"]
        assert [r["method"] for r in tab.requests] == []
    finally:
        await tab.close()
        await agent.close()


async def test_a_closed_tabs_changes_are_written_to_the_file_before_the_file_is_used(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = live_notebooks(jp_serverapp)
    monkeypatch.setattr(live, "reconnect_grace_seconds", 0.3)
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("read_notebook", path="nb.ipynb"))
        ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1"))
        await tab.close()

        # The next step finds no tab: the journal goes to the file, then the step changes the file.
        ok(await agent.call("insert_cell", path="nb.ipynb", source="b = 2"))
        assert on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "a = 1", "b = 2"]
        assert not live.journal.has("nb.ipynb")
    finally:
        await agent.close()


async def test_at_the_end_of_a_turn_a_notebook_no_tab_holds_is_written(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = live_notebooks(jp_serverapp)
    monkeypatch.setattr(live, "reconnect_grace_seconds", 0.3)
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1"))
        await tab.close()
        outcomes = await live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.outcome, o.problem) for o in outcomes] == [("nb.ipynb", "written", None)]
        assert on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "a = 1"]
    finally:
        await agent.close()


async def test_a_turn_settles_only_what_changed_since_it_began_and_a_deleted_folder_is_let_go(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another conversation's notebook, whose tab (and folder) is gone, neither delays a later turn's end nor
    reports an error in it; when settled itself, a deleted folder means nothing is left to write into."""
    import shutil

    live = live_notebooks(jp_serverapp)
    monkeypatch.setattr(live, "reconnect_grace_seconds", 0.3)
    (jp_root_dir / "old").mkdir()
    write_notebook(jp_root_dir / "old", "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "old/nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("insert_cell", path="old/nb.ipynb", source="a = 1"))
        await tab.close()
        shutil.rmtree(jp_root_dir / "old")  # the user deletes the folder

        mark = live.change_mark()  # a later turn starts here and changes nothing
        assert await live.settle(jp_serverapp.contents_manager, since=mark) == []

        outcomes = await live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.problem) for o in outcomes] == [("old/nb.ipynb", None)]
        assert not live.journal.has("old/nb.ipynb")
        assert not (jp_root_dir / "old").exists()
    finally:
        await agent.close()


async def test_at_the_end_of_a_turn_a_notebook_without_the_users_edits_is_saved_through_its_tab(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    live = live_notebooks(jp_serverapp)
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1"))
        outcomes = await live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.outcome) for o in outcomes] == [("nb.ipynb", "saved")]
        assert "save" in [request["method"] for request in tab.requests]
        await wait_until(lambda: on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "a = 1"])
        assert not live.journal.has("nb.ipynb")
    finally:
        await tab.close()
        await agent.close()


async def test_a_notebook_with_the_users_unsaved_typing_is_left_unsaved_and_survives_a_reload(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    live = live_notebooks(jp_serverapp)
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1"))
        tab.notebooks["nb.ipynb"].cells[0].source = "x = 1  # typed, not saved"
        outcomes = await live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.outcome) for o in outcomes] == [("nb.ipynb", "left_unsaved")]
        assert "save" not in [request["method"] for request in tab.requests]
        assert on_disk(jp_root_dir, "nb.ipynb") == ["x = 1"], "not saved behind the user's back"

        # The user reloads without saving: their typing is gone (JupyterLab warned them), the agent's cell
        # comes back from the journal.
        await tab.close()
        tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
        await wait_until(lambda: sources(tab.notebooks["nb.ipynb"]) == ["x = 1", "a = 1"])
    finally:
        await tab.close()
        await agent.close()


async def test_a_save_by_the_user_empties_the_journal(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    live = live_notebooks(jp_serverapp)
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        inserted = ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1")).details["cell_id"]
        # The user deletes the agent's cell and saves: the journal must not bring it back on the next reload.
        notebook = tab.notebooks["nb.ipynb"]
        notebook.cells = [cell for cell in notebook.cells if cell.id != inserted]
        model = {"type": "notebook", "format": "json", "content": copy.deepcopy(notebook)}
        await jp_serverapp.contents_manager.save(model, "nb.ipynb")
        await wait_until(lambda: not live.journal.has("nb.ipynb"))
        await tab.close()
        tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
        await asyncio.sleep(0.2)
        assert sources(tab.notebooks["nb.ipynb"]) == ["x = 1"]
    finally:
        await tab.close()
        await agent.close()


def test_replay_skips_what_the_notebook_already_has_and_edits_of_cells_that_are_gone() -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", id="keep")])
    added = new_cell("code", "a = 1")
    edits = [
        InsertCell(index=1, cell=dict(added)),
        SetCellSource(cell_id="gone", source="lost"),
        SetCellSource(cell_id="keep", source="x = 2"),
        DeleteCell(cell_id="never-there"),
    ]
    assert replayable(notebook, edits) == [edits[0], edits[2]]
    replayed = replay_onto(notebook, edits)
    assert sources(replayed) == ["x = 2", "a = 1"]
    # Replaying onto a notebook that has the changes already changes nothing.
    assert sources(replay_onto(replayed, edits)) == ["x = 2", "a = 1"]
    assert sources(notebook) == ["x = 1"], "the original is left as it was"
