"""The live-document contract (``documents/contract.py``): both notebook gateways and the text editors
satisfy their Protocols, and an edit through an open tab costs O(cell) on the wire, not O(notebook)."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import nbformat
from fake_tab import FakeTab
from test_notebook_bridge import live_agent
from test_notebook_tools import ok

from hdsp_agent.documents.contract import LiveNotebookGateway, LiveTextGateway, NotebookGateway
from hdsp_agent.documents.gateway import FileNotebookGateway, ParsedNotebooks, PathLocks
from hdsp_agent.documents.live import LiveNotebooks


def test_the_file_and_the_live_gateway_satisfy_the_notebook_contract(jp_serverapp: Any) -> None:
    file = FileNotebookGateway(jp_serverapp.contents_manager, {}, PathLocks(), ParsedNotebooks())
    live = LiveNotebooks()
    assert isinstance(file, NotebookGateway) and not file.live
    assert isinstance(live, NotebookGateway) and live.live
    assert isinstance(live, LiveNotebookGateway)
    assert isinstance(live.texts, LiveTextGateway)
    assert not isinstance(file, LiveNotebookGateway), "a file cannot show progress or settle a turn"


def big_notebook(root: Path, name: str, cells: int) -> Path:
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(f"x{index} = {index}  # " + "padding " * 20) for index in range(cells)
        ]
    )
    path = root / name
    nbformat.write(notebook, path)
    return path


async def test_an_apply_reply_does_not_grow_with_the_notebook(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    sizes: dict[int, int] = {}
    for cells in (50, 2_000):
        name = f"nb{cells}.ipynb"
        path = big_notebook(jp_root_dir, name, cells)
        ws = await jp_ws_fetch("hdsp-agent", "notebooks", "ws")
        tab = FakeTab(ws, {name: nbformat.read(path, as_version=4)})
        await tab.announce()
        agent = live_agent(jp_serverapp, jp_root_dir)
        try:
            first = tab.notebooks[name].cells[0].id
            ok(
                await agent.call(
                    "edit_cell", path=name, cell_id=first, old_string="x0 = 0", new_string="x0 = 1"
                )
            )
            applied = [
                reply
                for request, reply in zip(
                    [r for r in tab.requests if r["id"] is not None], tab.replies, strict=True
                )
                if request["method"] == "apply"
            ]
            assert len(applied) == 1
            sizes[cells] = len(applied[0])
            assert tab.notebooks[name].cells[0].source.startswith("x0 = 1")
        finally:
            await tab.close()
            await agent.close()
        await asyncio.sleep(0)
    # The reply carries the one cell (before and after) and a version: the same size for 50 or 2,000 cells.
    assert sizes[2_000] <= sizes[50] + 16, sizes
    assert sizes[2_000] < 2_000, sizes


def test_no_live_document_module_probes_an_object_for_what_it_has() -> None:
    """documents/ calls what its Protocols declare (``ContentsManager``, the gateways); it never asks an
    object whether it has an attribute (``getattr``/``hasattr``): a missing method is a type error."""
    documents = Path(__file__).resolve().parent.parent / "hdsp_agent" / "documents"
    probes = [
        f"{path.name}:{node.lineno} {node.func.id}"
        for path in sorted(documents.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
    ]
    assert probes == []
