"""The file is the truth the user sees (issue 26, problems 5, 6 and 8): an undo or a redo leaves the file as
the tab shows it (unless the user has unsaved edits of their own there), a notebook new from the launcher is
saved at the end of a turn, and closing a notebook ends the agent's work on it.

A real Jupyter server and the live-notebook WebSocket; ``FakeTab`` plays the browser tab and saves
through the contents manager when asked, as JupyterLab does; the model is the scripted one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
from agent_harness import make_manager, of_type, run_turn
from fake_tab import FakeTab
from scripted_model import ScriptedModel, text, tool_calls
from test_loop import _AllowAll
from test_notebook_bridge import live_agent
from test_notebook_journal import live_notebooks, on_disk, open_from_disk, sources, wait_until
from test_notebook_tools import ok, write_notebook

from hdsp_agent.agent.llm import ModelSettings
from hdsp_agent.agent.models import ModelCatalog
from hdsp_agent.agent.runtime import AgentRuntime
from hdsp_agent.tools.base import ToolContext
from hdsp_agent.tools.jupyter import notebook_tools
from hdsp_agent.tools.registry import ToolRegistry
from hdsp_agent.tools.state import ToolState


def _insert(path: str, source: str) -> tuple[str, str]:
    return ("insert_cell", json.dumps({"path": path, "source": source}))


def _live_runtime(jp_serverapp: Any, root: Path, model: ScriptedModel) -> AgentRuntime:
    """A runtime whose notebook tools change the tabs connected to this server (the server's own runtime
    does the same: one ``LiveNotebooks``)."""
    state = ToolState()
    live = live_notebooks(jp_serverapp)
    return AgentRuntime(
        registry=ToolRegistry(notebook_tools(state.notebooks)),
        policy=_AllowAll(),
        models=ModelCatalog([ModelSettings(model="scripted", base_url=model.base_url, max_retries=0)]),
        context_factory=lambda **overrides: ToolContext(
            root_dir=root,
            kernel_manager=jp_serverapp.kernel_manager,
            session_manager=jp_serverapp.session_manager,
            contents_manager=jp_serverapp.contents_manager,
            notebook_gateway=live,
            **overrides,
        ),
        state=state,
    )


async def test_undo_and_redo_of_a_saved_agent_change_are_saved_too(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    with ScriptedModel([tool_calls(_insert("nb.ipynb", "a = 1")), text("Done.")]) as model:
        manager = make_manager(jp_root_dir, _live_runtime(jp_serverapp, jp_root_dir, model))
        session = manager.create()
        try:
            await run_turn(session, "add a cell")
            await wait_until(lambda: on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "a = 1"])

            await session.undo_last_turn()
            assert sources(tab.notebooks["nb.ipynb"]) == ["x = 1"]
            # The undo is in the file too: a Discard, a restart or a crash cannot bring the cell back.
            await wait_until(lambda: on_disk(jp_root_dir, "nb.ipynb") == ["x = 1"])
            assert not live_notebooks(jp_serverapp).journal.has("nb.ipynb")

            await session.redo()
            assert sources(tab.notebooks["nb.ipynb"]) == ["x = 1", "a = 1"]
            await wait_until(lambda: on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "a = 1"])
        finally:
            await tab.close()
            await manager.shutdown()
            await jp_serverapp.kernel_manager.shutdown_all()


async def test_an_undo_under_the_users_unsaved_typing_saves_nothing_of_theirs(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    with ScriptedModel([tool_calls(_insert("nb.ipynb", "a = 1")), text("Done.")]) as model:
        manager = make_manager(jp_root_dir, _live_runtime(jp_serverapp, jp_root_dir, model))
        session = manager.create()
        try:
            await run_turn(session, "add a cell")
            await wait_until(lambda: on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "a = 1"])
            tab.notebooks["nb.ipynb"].cells[0].source = "x = 1  # mine, not saved"
            asked = len(tab.requests)

            await session.undo_last_turn()
            assert sources(tab.notebooks["nb.ipynb"]) == ["x = 1  # mine, not saved"]
            assert "save" not in [request["method"] for request in tab.requests[asked:]]
            assert on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "a = 1"], "the typing is theirs to save"
        finally:
            await tab.close()
            await manager.shutdown()
            await jp_serverapp.kernel_manager.shutdown_all()


def _new_from_launcher(root: Path, name: str, starter: str = "") -> dict[str, nbformat.NotebookNode]:
    """What JupyterLab's launcher makes: a file with no cells, a tab showing one (empty) starter cell."""
    nbformat.write(nbformat.v4.new_notebook(), root / name)
    shown = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(starter)])
    return {name: shown}


async def test_a_notebook_new_from_the_launcher_is_saved_at_the_end_of_the_turn(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    live = live_notebooks(jp_serverapp)
    ws = await jp_ws_fetch("hdsp-agent", "notebooks", "ws")
    tab = FakeTab(
        ws,
        _new_from_launcher(jp_root_dir, "Untitled.ipynb"),
        contents_manager=jp_serverapp.contents_manager,
        loaded=True,
    )
    await tab.announce()
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("insert_cell", path="Untitled.ipynb", source="a = 1"))
        outcomes = await live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.outcome) for o in outcomes] == [("Untitled.ipynb", "saved")]
        # The launcher's empty starter cell got the agent's code (tools/jupyter/placement.py).
        await wait_until(lambda: on_disk(jp_root_dir, "Untitled.ipynb") == ["a = 1"])
    finally:
        await tab.close()
        await agent.close()


async def test_what_the_user_typed_in_a_new_notebook_is_saved_with_the_agents_cells_not_lost(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    live = live_notebooks(jp_serverapp)
    ws = await jp_ws_fetch("hdsp-agent", "notebooks", "ws")
    notebooks = _new_from_launcher(jp_root_dir, "Untitled.ipynb", starter="import math")
    tab = FakeTab(ws, notebooks, contents_manager=jp_serverapp.contents_manager, loaded=True)
    await tab.announce()
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("insert_cell", path="Untitled.ipynb", source="a = 1"))
        outcomes = await live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.outcome) for o in outcomes] == [("Untitled.ipynb", "saved")]
        await wait_until(lambda: on_disk(jp_root_dir, "Untitled.ipynb") == ["import math", "a = 1"])
    finally:
        await tab.close()
        await agent.close()


async def test_a_saved_notebook_with_the_users_typing_is_still_left_unsaved(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    """The launcher's rule is for a file with no cells only: a notebook with saved cells keeps the old one."""
    live = live_notebooks(jp_serverapp)
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1"))
        # An empty cell the user added holds nothing of theirs; a typed one does.
        tab.notebooks["nb.ipynb"].cells.append(nbformat.v4.new_code_cell(""))
        outcomes = await live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.outcome) for o in outcomes] == [("nb.ipynb", "saved")]
        ok(await agent.call("insert_cell", path="nb.ipynb", source="b = 2"))
        tab.notebooks["nb.ipynb"].cells[0].source = "x = 1  # mine"
        outcomes = await live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.outcome) for o in outcomes] == [("nb.ipynb", "left_unsaved")]
    finally:
        await tab.close()
        await agent.close()


async def test_closing_a_notebook_ends_the_turns_work_on_it_and_discard_means_discard(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    live = live_notebooks(jp_serverapp)
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    session = agent.ctx.session_id
    try:
        live.change_mark(session)  # the turn starts
        ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1"))
        # The user closes the notebook and discards; the tab stays connected and says what it has open.
        tab.notebooks.pop("nb.ipynb")
        tab.loaded = set()
        await tab.announce()

        refused = await agent.call("insert_cell", path="nb.ipynb", source="b = 2")
        assert refused.error is not None and refused.error.code == "E_NOTEBOOK_CLOSED"
        assert "closed in JupyterLab" in refused.error.message
        ran = await agent.call("run_cell", path="nb.ipynb", code="print(1)")
        assert ran.error is not None and ran.error.code == "E_NOTEBOOK_CLOSED"
        assert await live.settle(jp_serverapp.contents_manager) == []
        assert on_disk(jp_root_dir, "nb.ipynb") == ["x = 1"], "the discarded cell is not written"

        # The user asks again in a new turn: the agent may work on the file.
        live.change_mark(session)
        ok(await agent.call("insert_cell", path="nb.ipynb", source="c = 3"))
        assert on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "c = 3"]
    finally:
        await tab.close()
        await agent.close()


async def test_closing_a_notebook_interrupts_the_cell_the_agent_is_running_there(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    from test_notebook_tools import Agent

    app = jp_serverapp.web_app.settings["hdsp_agent"]
    live = live_notebooks(jp_serverapp)
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    # The server's own notebook runtime: the one its close listener stops runs in.
    agent = Agent(jp_serverapp, jp_root_dir, runtime=app.tool_state.notebooks, notebook_gateway=live)
    try:
        live.change_mark(agent.ctx.session_id)
        code = "import time\nprint('started', flush=True)\ntime.sleep(120)\nprint('finished')"
        running = ok(await agent.call("run_cell", path="nb.ipynb", code=code, timeout=3))
        record = agent.runtime.executions.get("nb.ipynb", running.details["cell_id"])
        assert record is not None and not record.done
        # The user closes the notebook (the kernel stays, as in JupyterLab): the agent's run is interrupted.
        tab.notebooks.pop("nb.ipynb")
        tab.loaded = set()
        await tab.announce()
        await wait_until(lambda: record.done, seconds=30)
        shown = json.dumps(record.collector.outputs)
        assert record.outcome == "error" and "KeyboardInterrupt" in shown
        assert "closed the notebook" in (record.problem or "")
        printed = "".join(o.get("text", "") for o in record.collector.outputs if o["output_type"] == "stream")
        assert printed == "started\n"
    finally:
        await tab.close()
        await agent.close()


async def test_a_rename_or_a_reload_is_not_a_close(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    live = live_notebooks(jp_serverapp)
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        live.change_mark(agent.ctx.session_id)
        ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1"))
        # A rename: the tab names the notebook by its new path in one message.
        tab.notebooks["renamed.ipynb"] = tab.notebooks.pop("nb.ipynb")
        tab.loaded = set()
        await tab.announce()
        assert live.journal.has("nb.ipynb"), "the journal moves with the contents manager's rename event"
        assert not live.closed_during_turn(agent.ctx.session_id, "nb.ipynb")
    finally:
        await tab.close()
        await agent.close()


async def test_a_kept_cell_is_final_restore_leaves_it_and_the_keep_is_in_the_event_log(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_from_disk(jp_ws_fetch, jp_serverapp, jp_root_dir, "nb.ipynb")
    script = [
        tool_calls(_insert("nb.ipynb", "a = 1"), _insert("nb.ipynb", "b = 2")),
        text("Added two cells."),
        text("Nothing else."),
    ]
    with ScriptedModel(script) as model:
        manager = make_manager(jp_root_dir, _live_runtime(jp_serverapp, jp_root_dir, model))
        session = manager.create()
        try:
            await run_turn(session, "add two cells")
            first = of_type(session.events, "turn.end")[-1]["turn_id"]
            [kept] = [cell.id for cell in tab.notebooks["nb.ipynb"].cells if cell.source == "a = 1"]
            assert session.keep_cell("nb.ipynb", kept) == 1
            reviewed = session.events[-1]
            assert [reviewed[key] for key in ("type", "path", "cell_id", "outcome")] == [
                "cell.reviewed",
                "nb.ipynb",
                kept,
                "kept",
            ]
            await run_turn(session, "anything else?")

            # Restore to before the first turn: the kept cell stays, the other goes; the file agrees.
            await session.restore(first)
            assert sources(tab.notebooks["nb.ipynb"]) == ["x = 1", "a = 1"]
            await wait_until(lambda: on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "a = 1"])
        finally:
            await tab.close()
            await manager.shutdown()
            await jp_serverapp.kernel_manager.shutdown_all()
