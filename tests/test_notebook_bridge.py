"""The live notebook route: ``/hdsp-agent/notebooks/ws`` and the notebook tools working through it.

A real Jupyter server, real kernels, a real WebSocket. The browser tab at the other end is played by
``fake_tab.FakeTab``, which answers the server's requests the way the sidebar's NotebookBridge does, from the
bridge's wire models.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import os
import struct
from pathlib import Path
from typing import Any

import nbformat
import pytest
import tornado.httpclient
import tornado.websocket
from fake_tab import FakeTab
from test_notebook_tools import Agent, ok, write_notebook

from hdsp_agent.agent.undo import TurnUndo
from hdsp_agent.documents.edits import SetCellOutputs
from hdsp_agent.documents.live import E_NOTEBOOK_BRIDGE
from hdsp_agent.tools.base import ToolError
from hdsp_agent.tools.state import ToolState


async def open_tab(jp_ws_fetch: Any, notebooks: dict[str, nbformat.NotebookNode], **options: Any) -> FakeTab:
    ws = await jp_ws_fetch("hdsp-agent", "notebooks", "ws")
    tab = FakeTab(ws, notebooks, **options)
    await tab.announce()
    return tab


def live_agent(jp_serverapp: Any, root: Path) -> Agent:
    return Agent(
        jp_serverapp, root, notebook_gateway=jp_serverapp.web_app.settings["hdsp_agent"].live_notebooks
    )


async def test_run_cell_changes_the_open_notebook_and_streams_its_outputs(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    on_disk = path.read_bytes()
    live = nbformat.read(path, as_version=4)
    live.cells[0].source = "x = 1  # typed, not saved"
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": live})
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        code = "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.4)\nprint(6*7)"
        result = ok(await agent.call("run_cell", path="nb.ipynb", code=code))
        assert "42" in result.content

        notebook = tab.notebooks["nb.ipynb"]
        assert [cell.source for cell in notebook.cells] == ["x = 1  # typed, not saved", code]
        ran = notebook.cells[1]
        assert ran.execution_count == result.details["execution_count"]
        assert "".join(ran.outputs[0].text) == "0\n1\n2\n42\n"
        # While it ran, the tab was shown the outputs so far, growing, the cell marked running.
        shown = tab.progress_outputs()
        assert shown[0] == [], "the run starts by clearing the cell's outputs"
        partial = [texts[0] for texts in shown if texts]
        assert partial and all(text in "0\n1\n2\n42\n" for text in partial)
        assert any(text.count("\n") < 4 for text in partial), "an output shown before the run finished"
        assert all(r["edit"]["running"] for r in tab.requests if r["id"] is None)
        assert path.read_bytes() == on_disk, "the open notebook changed, not its file"

        # Undo takes the live notebook back to before the turn: no agent cell, the user's typing kept.
        await agent.runtime.undo.undo_since(agent.ctx.session_id, 0)
        assert [cell.source for cell in tab.notebooks["nb.ipynb"].cells] == ["x = 1  # typed, not saved"]
    finally:
        await tab.close()
        await agent.close()


@pytest.mark.fault
async def test_a_tab_that_closes_mid_request_is_a_clear_error_then_the_file_is_used(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": nbformat.read(path, as_version=4)}, answer=False)
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        call = asyncio.ensure_future(agent.call("read_notebook", path="nb.ipynb"))
        while not tab.requests:
            await asyncio.sleep(0.01)
        await tab.close()
        failed = await call
        assert failed.error is not None and failed.error.code == E_NOTEBOOK_BRIDGE
        assert "disconnected" in failed.error.message

        # The tab is gone: the next call reads the file.
        read = ok(await agent.call("read_notebook", path="nb.ipynb"))
        assert "x = 1" in read.content and "live notebook" not in read.content
    finally:
        await agent.close()


async def test_the_bridge_requires_jupyter_auth(
    jp_serverapp: Any, http_server_client: Any, jp_http_port: int, jp_base_url: str
) -> None:
    # http_server_client: requesting it is what makes pytest-jupyter listen on jp_http_port.
    url = f"ws://127.0.0.1:{jp_http_port}{jp_base_url}hdsp-agent/notebooks/ws"
    with pytest.raises(tornado.httpclient.HTTPClientError) as refused:
        await tornado.websocket.websocket_connect(url)
    assert refused.value.code == 403


async def test_a_progress_update_for_a_closed_tab_is_dropped(jp_serverapp: Any, jp_ws_fetch: Any) -> None:
    live = jp_serverapp.web_app.settings["hdsp_agent"].live_notebooks
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": notebook})
    assert await live.is_open("nb.ipynb")
    await tab.close()
    await asyncio.sleep(0.05)
    assert not await live.is_open("nb.ipynb")
    live.show("nb.ipynb", SetCellOutputs(cell_id=notebook.cells[0].id, outputs=[], running=True))


async def test_a_run_cut_short_by_a_restart_leaves_the_live_cell_idle(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": nbformat.read(path, as_version=4)})
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        code = "import time\nprint('started', flush=True)\ntime.sleep(60)"
        running = ok(await agent.call("run_cell", path="nb.ipynb", code=code, timeout=2))
        assert running.details["status"] == "running"
        ok(await agent.call("restart_kernel", path="nb.ipynb"))
        await asyncio.sleep(0.2)
        last = [r for r in tab.requests if r["id"] is None][-1]["edit"]
        assert last["running"] is False, "the cell is not left showing [*]"
        assert "".join(last["outputs"][0]["text"]) == "started\n"
    finally:
        await tab.close()
        await agent.close()


async def test_a_notebook_with_outputs_larger_than_tornados_default_frame_is_read_live(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "big.ipynb", "print('x' * 12_000_000)")
    live = nbformat.read(path, as_version=4)
    live.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * 12_000_000 + "\n")]
    tab = await open_tab(jp_ws_fetch, {"big.ipynb": live})
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        read = ok(await agent.call("read_notebook", path="big.ipynb", format="full", include_outputs=True))
        assert "read from the live notebook open in JupyterLab" in read.content
        assert "xxxx" in read.content
    finally:
        await tab.close()
        await agent.close()


def plot_png(width: int, height: int, size: int) -> str:
    """A PNG's base64 as a plot holds it: the signature, an IHDR with the dimensions, ``size`` bytes."""
    header = (
        b"\x89PNG\r\n\x1a\n"
        + b"\x00\x00\x00\rIHDR"
        + struct.pack(">II", width, height)
        + b"\x08\x06\x00\x00\x00"
    )
    return base64.b64encode(header + os.urandom(size - len(header))).decode()


async def test_an_overview_of_a_notebook_with_plots_does_not_carry_their_bytes_and_undo_restores_them(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "plots.ipynb", "plot()", "plot()", "print(log)")
    live = nbformat.read(path, as_version=4)
    plots = [plot_png(640, 480, 400_000), plot_png(800, 600, 300_000)]
    for cell, data in zip(live.cells, plots, strict=False):
        cell.outputs = [
            nbformat.v4.new_output(
                "display_data", data={"image/png": data, "text/plain": "<Figure size 640x480 with 1 Axes>"}
            )
        ]
    live.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="line\n" * 100_000)]
    exact = copy.deepcopy(live)
    tab = await open_tab(jp_ws_fetch, {"plots.ipynb": live})
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        read = ok(await agent.call("read_notebook", path="plots.ipynb", format="full", include_outputs=True))
        # The model is told what each plot is, from the tab's brief answer ...
        assert "image/png 640×480 px, 390.6 kB" in read.content
        assert "image/png 800×600 px, 293.0 kB" in read.content
        assert "line\nline" in read.content
        # ... which carried neither plot's bytes nor the whole log.
        brief = tab.replies[-1]
        assert len(brief) < 30_000
        assert all(data[100:200] not in brief for data in plots)
        assert tab.requests[-1]["output_chars"] is not None

        # A change reads the notebook whole: its undo puts the deleted plot back exactly.
        first = live.cells[0].id
        ok(await agent.call("delete_cell", path="plots.ipynb", cell_id=first))
        assert [cell.id for cell in tab.notebooks["plots.ipynb"].cells] == [c.id for c in exact.cells[1:]]
        await agent.runtime.undo.undo_since(agent.ctx.session_id, 0)
        assert tab.notebooks["plots.ipynb"].cells == exact.cells

        # A snapshot (what restores a notebook whole) carries every byte too.
        live_notebooks = jp_serverapp.web_app.settings["hdsp_agent"].live_notebooks
        snapshot = await live_notebooks.snapshot("plots.ipynb")
        assert snapshot.content is not None
        assert nbformat.from_dict(json.loads(snapshot.content)).cells == exact.cells
    finally:
        await tab.close()
        await agent.close()


async def test_undo_in_the_open_notebook_takes_back_only_the_agents_cells(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1", "y = 2")
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": nbformat.read(path, as_version=4)})
    agent = live_agent(jp_serverapp, jp_root_dir)
    session = agent.ctx.session_id
    try:
        notebook = tab.notebooks["nb.ipynb"]
        first, second = (cell.id for cell in notebook.cells)
        ok(await agent.call("insert_cell", path="nb.ipynb", source="z = 3"))
        ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=second, old_string="2", new_string="20"))
        # After the agent's turn the user types in the first cell, without saving.
        notebook.cells[0].source = "x = 1  # mine"

        await agent.runtime.undo.undo_since(session, 0)
        assert [cell.source for cell in tab.notebooks["nb.ipynb"].cells] == ["x = 1  # mine", "y = 2"]
        assert [cell.id for cell in tab.notebooks["nb.ipynb"].cells] == [first, second]

        # A cell the user edited after the agent changed it is not overwritten by undo.
        ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=second, source="y = 'agent'"))
        tab.notebooks["nb.ipynb"].cells[1].source = "y = 'agent', then mine"
        refused = agent.runtime.undo.undo_since(session, 0)
        with pytest.raises(ToolError) as error:
            await refused
        assert error.value.code == "E_NOTEBOOK_CHANGED"
        assert tab.notebooks["nb.ipynb"].cells[1].source == "y = 'agent', then mine"
    finally:
        await tab.close()
        await agent.close()


async def test_undo_of_one_cell_leaves_the_turns_other_changes(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    # The review in the notebook: a turn inserted two cells and edited a third; "Undo" on one of them.
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1", "y = 2")
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": nbformat.read(path, as_version=4)})
    agent = live_agent(jp_serverapp, jp_root_dir)
    session = agent.ctx.session_id
    try:
        notebook = tab.notebooks["nb.ipynb"]
        first, second = (cell.id for cell in notebook.cells)
        inserted_a = ok(await agent.call("insert_cell", path="nb.ipynb", source="a = 1")).details["cell_id"]
        inserted_b = ok(await agent.call("insert_cell", path="nb.ipynb", source="b = 2")).details["cell_id"]
        ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=second, old_string="2", new_string="20"))

        undone = await agent.runtime.undo.undo_cell_since(session, 0, "nb.ipynb", inserted_a)
        assert [entry.cell_id for entry in undone] == [inserted_a]
        cells = tab.notebooks["nb.ipynb"].cells
        assert inserted_a not in [cell.id for cell in cells] and inserted_b in [cell.id for cell in cells]
        assert {cell.source for cell in cells} == {"x = 1", "y = 20", "b = 2"}

        # The edit is undone alone too; the other inserted cell stays.
        await agent.runtime.undo.undo_cell_since(session, 0, "nb.ipynb", second)
        assert {cell.source for cell in tab.notebooks["nb.ipynb"].cells} == {"x = 1", "y = 2", "b = 2"}
        # Nothing is left to undo in those cells; the whole-turn undo takes back only what remains.
        assert await agent.runtime.undo.undo_cell_since(session, 0, "nb.ipynb", second) == []
        await agent.runtime.undo.undo_since(session, 0)
        assert [cell.source for cell in tab.notebooks["nb.ipynb"].cells] == ["x = 1", "y = 2"]
    finally:
        await tab.close()
        await agent.close()


def answered(tab: FakeTab) -> list[str]:
    """The methods of the round trips the tab was asked for (progress pushes, wanting no answer, left out)."""
    return [request["method"] for request in tab.requests if request["id"] is not None]


def count_open_checks(agent: Agent, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every "is this notebook open in a tab?" the tools ask the live gateway."""
    asked: list[str] = []
    live = agent.ctx.notebook_gateway
    is_open = live.is_open

    async def counting(path: str) -> bool:
        asked.append(path)
        return await is_open(path)

    monkeypatch.setattr(live, "is_open", counting)
    return asked


async def test_a_live_run_cell_crosses_the_bridge_no_more_than_it_must(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": nbformat.read(path, as_version=4)})
    agent = live_agent(jp_serverapp, jp_root_dir)
    asked = count_open_checks(agent, monkeypatch)
    try:
        # New code: one cell's read (the last: is it the launcher's empty starter? its kernelspec, as no
        # kernel runs yet), the insert (the tab answers with the cell), the final outputs. The undo record of
        # the insert and of the outputs comes from what the call already holds, not from another read.
        ok(await agent.call("run_cell", path="nb.ipynb", code="print(6*7)"))
        assert answered(tab) == ["read_cell", "apply", "apply"]
        # The gateway is chosen once for the call, once more for the final write (the tab may be gone by
        # then).
        assert len(asked) <= 2
        # With the kernel running, only the turn's previous new cell is read (the next goes after it).
        tab.requests.clear()
        ok(await agent.call("run_cell", path="nb.ipynb", code="print(7)"))
        assert answered(tab) == ["read_cell", "apply", "apply"]

        # An existing cell: a read of that cell for the card (the code as it is now, not as the agent last
        # saw it), one for the run (its source, the kernelspec: the user may edit while the card waits), the
        # final outputs.
        tab.requests.clear()
        asked.clear()
        cell_id = tab.notebooks["nb.ipynb"].cells[0].id
        ok(await agent.call("run_cell", path="nb.ipynb", cell_id=cell_id))
        assert answered(tab) == ["read_cell", "read_cell", "apply"]
        assert len(asked) <= 3

        # Undo still takes both runs back, from the notebooks the calls held.
        await agent.runtime.undo.undo_since(agent.ctx.session_id, 0)
        notebook = tab.notebooks["nb.ipynb"]
        assert [cell.source for cell in notebook.cells] == ["x = 1"]
        assert notebook.cells[0].outputs == [] and notebook.cells[0].execution_count is None
    finally:
        await tab.close()
        await agent.close()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("insert_cell", {"source": "y = 2"}),
        ("edit_cell", {"old_string": "1", "new_string": "10"}),
        ("delete_cell", {}),
        ("move_cell", {"to_index": -1}),
    ],
)
async def test_a_live_cell_change_reads_at_most_its_cell_and_applies_once(
    tool: str,
    arguments: dict[str, Any],
    jp_serverapp: Any,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1", "z = 3")
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": nbformat.read(path, as_version=4)})
    agent = live_agent(jp_serverapp, jp_root_dir)
    asked = count_open_checks(agent, monkeypatch)
    try:
        original = copy.deepcopy(tab.notebooks["nb.ipynb"])
        if tool != "insert_cell":
            arguments = {**arguments, "cell_id": original.cells[0].id}
        ok(await agent.call(tool, path="nb.ipynb", **arguments))
        # A new cell reads one cell (the last: is it the launcher's empty starter cell?); a change to one
        # cell reads that cell once for the approval card (its preview and the words naming it) and once for
        # the change — never the notebook.
        expected = {"insert_cell": ["read_cell", "apply"]}
        assert answered(tab) == expected.get(tool, ["read_cell", "read_cell", "apply"])
        assert len(asked) == (1 if tool == "insert_cell" else 2)  # the card's read opens the notebook too
        assert tab.notebooks["nb.ipynb"] != original

        # The inverse recorded from the call's own read takes the change back.
        await agent.runtime.undo.undo_since(agent.ctx.session_id, 0)
        assert [c.source for c in tab.notebooks["nb.ipynb"].cells] == [c.source for c in original.cells]
    finally:
        await tab.close()
        await agent.close()


def notebook_of(cells: int) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(f"x{i} = {i}  # {'some code ' * 8}") for i in range(cells)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )


async def edit_bytes(jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path, cells: int) -> int:
    """The bytes over the bridge (requests and answers) for an edit of one cell of an open notebook."""
    path = f"nb{cells}.ipynb"
    tab = await open_tab(jp_ws_fetch, {path: notebook_of(cells)})
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        cell_id = tab.notebooks[path].cells[cells // 2].id
        edited = ok(
            await agent.call("edit_cell", path=path, cell_id=cell_id, old_string="= ", new_string="= 10 + ")
        )
        assert edited.details["index"] == cells // 2
        assert answered(tab) == ["read_cell", "read_cell", "apply"]  # the approval's preview, the change
        assert tab.notebooks[path].cells[cells // 2].source.startswith(f"x{cells // 2} = 10 + ")
        return tab.transferred()
    finally:
        await tab.close()
        await agent.close()


async def test_an_edit_of_one_cell_costs_the_same_in_a_2000_cell_notebook_as_in_a_50_cell_one(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    small = await edit_bytes(jp_serverapp, jp_ws_fetch, jp_root_dir, 50)
    large = await edit_bytes(jp_serverapp, jp_ws_fetch, jp_root_dir, 2_000)
    # The cell ids and the index differ in length; the whole 2,000-cell notebook would be ~250 kB.
    assert large < small * 1.2, (small, large)
    assert large < 3_000


async def test_a_user_edit_between_the_read_and_the_apply_is_caught_by_the_version(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    tab = await open_tab(jp_ws_fetch, {"nb.ipynb": notebook_of(3)})
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        cell_id = tab.notebooks["nb.ipynb"].cells[1].id
        # The user types in another cell after the agent read this one, before its edit arrives.
        other = tab.notebooks["nb.ipynb"].cells[2].id
        tab.before_apply = lambda: tab.type("nb.ipynb", other, "typed by the user")
        refused = await agent.call("edit_cell", path="nb.ipynb", cell_id=cell_id, source="y = 'agent'")
        assert refused.error is not None and refused.error.code == "E_NOTEBOOK_CHANGED"
        assert "changed in JupyterLab after the agent read the cell" in refused.error.message
        cells = tab.notebooks["nb.ipynb"].cells
        assert cells[1].source.startswith("x1 = 1") and cells[2].source == "typed by the user"
        assert agent.runtime.undo.entries(agent.ctx.session_id) == [], "nothing to undo: nothing changed"
        assert not jp_serverapp.web_app.settings["hdsp_agent"].live_notebooks.journal.has("nb.ipynb")

        # Read again, the edit goes through: the read's version is the tab's.
        tab.before_apply = None
        ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=cell_id, source="y = 'agent'"))
        assert tab.notebooks["nb.ipynb"].cells[1].source == "y = 'agent'"
        assert tab.notebooks["nb.ipynb"].cells[2].source == "typed by the user"
    finally:
        await tab.close()
        await agent.close()


def round_trips_since(tab: FakeTab, start: int) -> list[tuple[str, int]]:
    """Each round trip after request number ``start``: its method and its bytes (request and answer)."""
    asked = [
        (raw, text) for raw, text in zip(tab.requests, tab.received, strict=True) if raw["id"] is not None
    ]
    return [
        (raw["method"], len(text.encode()) + len(reply.encode()))
        for (raw, text), reply in list(zip(asked, tab.replies, strict=True))[start:]
    ]


async def live_costs(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path, cells: int
) -> dict[str, list[tuple[str, int]]]:
    """The round trips of insert_cell, run_cell with new code (the kernel's first run, then a second),
    execute_code, and an undo's redo, in an open notebook of ``cells`` cells."""
    path = f"nb{cells}.ipynb"
    tab = await open_tab(jp_ws_fetch, {path: notebook_of(cells)})
    agent = live_agent(jp_serverapp, jp_root_dir)
    undo = TurnUndo(ToolState(notebooks=agent.runtime))
    session = agent.ctx.session_id
    costs: dict[str, list[tuple[str, int]]] = {}

    async def measured(name: str, tool: str, **arguments: Any) -> Any:
        start = len(answered(tab))
        result = ok(await agent.call(tool, path=path, **arguments))
        costs[name] = round_trips_since(tab, start)
        return result

    try:
        undo.mark(session, "turn_1")
        inserted = await measured("insert_cell", "insert_cell", source="y = 2")
        assert inserted.details["index"] == cells
        first_run = await measured("run_cell, first", "run_cell", code="print(6 * 7)")
        assert "42" in first_run.content and first_run.details["index"] == cells + 1
        await measured("run_cell", "run_cell", code="print(7)")
        ran = await measured("execute_code", "execute_code", code="print(6 * 8)")
        assert "48" in ran.content
        assert len(tab.notebooks[path].cells) == cells + 3
        await undo.undo_last(session)
        assert len(tab.notebooks[path].cells) == cells
        start = len(answered(tab))
        await undo.redo(session)
        costs["redo"] = round_trips_since(tab, start)
        assert [cell.source for cell in tab.notebooks[path].cells[cells:]] == [
            "y = 2",
            "print(6 * 7)",
            "print(7)",
        ]
        return costs
    finally:
        await tab.close()
        await agent.close()


async def test_insert_run_new_code_execute_code_and_redo_cost_the_same_in_2000_cells_as_in_50(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    small = await live_costs(jp_serverapp, jp_ws_fetch, jp_root_dir, 50)
    large = await live_costs(jp_serverapp, jp_ws_fetch, jp_root_dir, 2_000)
    # One cell is read to place a new cell (the last cell, or the turn's previous new cell); the last cell's
    # read also gives the kernelspec a first run needs.
    assert [method for method, _ in large["insert_cell"]] == ["read_cell", "apply"]
    # After the insert, the first run reads the inserted cell (it goes after it) and the last for the
    # kernelspec.
    assert [method for method, _ in large["run_cell, first"]] == ["read_cell", "apply", "read_cell", "apply"]
    assert [method for method, _ in large["run_cell"]] == ["read_cell", "apply", "apply"]
    assert large["execute_code"] == []
    # A redo plans on the notebook once (all or nothing: every step is checked before any is applied),
    # then applies each step with nothing read after.
    redo_methods = [method for method, _ in large["redo"]]
    assert redo_methods[0] == "read" and set(redo_methods[1:]) == {"apply"}, redo_methods
    for name in ("insert_cell", "run_cell, first", "run_cell", "execute_code"):
        small_bytes = sum(size for _, size in small[name])
        large_bytes = sum(size for _, size in large[name])
        # The cell ids and the index differ in length; the whole 2,000-cell notebook would be ~250 kB.
        assert large_bytes <= small_bytes * 1.2 + 64 and large_bytes < 8_000, (name, small_bytes, large_bytes)
    small_applies = [size for method, size in small["redo"] if method == "apply"]
    large_applies = [size for method, size in large["redo"] if method == "apply"]
    assert len(large_applies) == len(small_applies)
    assert sum(large_applies) <= sum(small_applies) * 1.2 + 64, (small_applies, large_applies)


async def test_an_overview_carries_the_outputs_of_the_cells_it_shows_only(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    notebook = notebook_of(300)
    for cell in notebook.cells:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="out " * 100)]
    tab = await open_tab(jp_ws_fetch, {"big.ipynb": notebook})
    agent = live_agent(jp_serverapp, jp_root_dir)
    try:
        read = ok(await agent.call("read_notebook", path="big.ipynb"))
        assert len(read.details["cell_ids"]) == 200 and "start=200" in read.content
        [answer] = tab.replies
        cells = json.loads(answer)["result"]["notebook"]["cells"]
        assert len(cells) == 300
        assert all(cell["outputs"] for cell in cells[:200]) and not any(
            cell["outputs"] for cell in cells[200:]
        )
        assert "out out" in read.content
        tab.replies.clear()
        ok(await agent.call("read_notebook", path="big.ipynb", start=250, limit=10))
        cells = json.loads(tab.replies[0])["result"]["notebook"]["cells"]
        assert [bool(cell["outputs"]) for cell in cells] == [250 <= i < 260 for i in range(300)]
    finally:
        await tab.close()
        await agent.close()


async def test_the_end_of_a_turn_compares_the_tabs_sources_without_its_outputs(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    notebook = notebook_of(50)
    for cell in notebook.cells:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="out " * 2_000)]
    nbformat.write(notebook, jp_root_dir / "nb.ipynb")
    tab = await open_tab(
        jp_ws_fetch,
        {"nb.ipynb": nbformat.read(jp_root_dir / "nb.ipynb", as_version=4)},
        contents_manager=jp_serverapp.contents_manager,
    )
    agent = live_agent(jp_serverapp, jp_root_dir)
    live = jp_serverapp.web_app.settings["hdsp_agent"].live_notebooks
    try:
        ok(await agent.call("insert_cell", path="nb.ipynb", source="y = 2"))
        tab.requests.clear()
        tab.replies.clear()
        [outcome] = await live.settle(jp_serverapp.contents_manager)
        assert outcome.outcome == "saved"
        read = next(request for request in tab.requests if request["method"] == "read")
        assert read["outputs_stop"] == 0
        assert len(tab.replies[0]) < 20_000, "the tab's 400 kB of outputs stayed in the tab"

        # The tab's save, as JupyterLab's, goes through the contents manager (the file may be half written).
        def last_source_on_disk() -> str | None:
            try:
                return str(nbformat.read(jp_root_dir / "nb.ipynb", as_version=4).cells[-1].source)
            except (nbformat.reader.NotJSONError, ValueError):
                return None

        for _ in range(100):
            if last_source_on_disk() == "y = 2":
                break
            await asyncio.sleep(0.05)
        assert last_source_on_disk() == "y = 2"
    finally:
        await tab.close()
        await agent.close()
