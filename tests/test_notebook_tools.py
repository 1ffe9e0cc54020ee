"""The notebook tools through the real executor, on a real Jupyter server with real ipykernel kernels.

Tests that use pytest-jupyter's server fixtures are plain ``async def`` (pytest-jupyter runs them on its
loop). Each kernel test shares one kernel between its steps and shuts every kernel down at the end.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import os
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from images import png_bytes
from pydantic import BaseModel

from hdsp_agent.documents.contract import Applied, CellRead
from hdsp_agent.documents.edits import apply_edit
from hdsp_agent.documents.gateway import cell_read
from hdsp_agent.documents.inverse import inverse_of
from hdsp_agent.events import ToolProgressEvent
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest, FixedApprover
from hdsp_agent.tools.base import CancelToken, ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.jupyter import NotebookRuntime, NotebookSnapshot, notebook_tools
from hdsp_agent.tools.registry import ToolRegistry

SESSION = "agent-session-1"


class RecordingApprover:
    """Answers like a user would, and keeps what the approval dialog was shown."""

    def __init__(self, approve: bool = True) -> None:
        self.approve = approve
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self.requests.append(request)
        return ApprovalReply(approved=self.approve, reason=None if self.approve else "not now")


class FrontendNotebooks:
    """Stands in for the sidebar's NotebookBridge in process (a ``LiveNotebookGateway``): notebooks open in
    JupyterLab, changed in the live model. The bridge itself is played by tests/fake_tab.py."""

    live = True

    def __init__(self, notebooks: dict[str, nbformat.NotebookNode]) -> None:
        self.notebooks = notebooks
        self.edits: list[BaseModel] = []

    async def is_open(self, path: str) -> bool:
        return path in self.notebooks

    async def read(
        self,
        path: str,
        purpose: str = "show",
        outputs: str = "full",
        output_cells: tuple[int, int] | None = None,
    ) -> nbformat.NotebookNode:
        return copy.deepcopy(self.notebooks[path])

    async def read_cell(
        self, path: str, cell_id: str | None = None, index: int | None = None, purpose: str = "change"
    ) -> CellRead:
        return cell_read(copy.deepcopy(self.notebooks[path]), cell_id, index)

    async def apply(
        self,
        path: str,
        edit: BaseModel,
        before: nbformat.NotebookNode | CellRead | None = None,
        version: int | None = None,
    ) -> Applied:
        self.edits.append(edit)
        undo = inverse_of(self.notebooks[path], edit)
        apply_edit(self.notebooks[path], edit)
        return Applied(undo, copy.deepcopy(self.notebooks[path]))

    async def acknowledge(self, path: str) -> None:
        return None

    async def snapshot(self, path: str) -> NotebookSnapshot:
        return NotebookSnapshot(path, nbformat.writes(self.notebooks[path]))

    async def restore(self, path: str, snapshot: NotebookSnapshot) -> None:
        assert snapshot.content is not None
        self.notebooks[path] = nbformat.reads(snapshot.content, as_version=4)

    def show(self, path: str, edit: BaseModel) -> int:
        apply_edit(self.notebooks[path], edit)
        return 0

    async def reclaim(self, path: str, contents_manager: Any) -> bool:
        return False

    def change_mark(self, session_id: str | None = None) -> int:
        return 0

    def closed_during_turn(self, session_id: str, path: str) -> bool:
        return False

    async def settle(self, contents_manager: Any, since: int = 0, paths: Any = None) -> list[Any]:
        return []


class Agent:
    """One agent session calling notebook tools through the real pipeline."""

    def __init__(
        self,
        serverapp: Any,
        root: Path,
        approver: Any = None,
        runtime: NotebookRuntime | None = None,
        **context: Any,
    ) -> None:
        self.runtime = runtime or NotebookRuntime()
        self.kernel_manager = serverapp.kernel_manager
        self.executor = ToolExecutor(
            ToolRegistry(notebook_tools(self.runtime)), approver=approver or FixedApprover(True)
        )
        self.events: list[BaseModel] = []
        self.ctx = ToolContext(
            root_dir=root,
            session_id=SESSION,
            emit=self.events.append,
            kernel_manager=serverapp.kernel_manager,
            session_manager=serverapp.session_manager,
            contents_manager=serverapp.contents_manager,
            **context,
        )
        self._calls = 0

    async def call(self, name: str, ctx: ToolContext | None = None, **arguments: Any) -> ToolResult:
        self._calls += 1
        call = ToolCall(id=f"call-{self._calls}", name=name, arguments=json.dumps(arguments))
        return await self.executor.execute(call, ctx or self.ctx)

    async def close(self) -> None:
        await self.runtime.aclose()
        await self.kernel_manager.shutdown_all()


def write_notebook(root: Path, name: str, *sources: str, minor: int = 5, **json_options: Any) -> Path:
    """A notebook file: sources starting with '#' are markdown cells, the others code cells."""
    cells = [
        nbformat.v4.new_markdown_cell(s) if s.startswith("#") else nbformat.v4.new_code_cell(s)
        for s in sources
    ]
    notebook = nbformat.v4.new_notebook(
        cells=cells,
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    if minor < 5:
        notebook.nbformat_minor = minor
        for cell in notebook.cells:
            del cell["id"]
    path = root / name
    path.write_text(json.dumps(notebook, **json_options) if json_options else nbformat.writes(notebook))
    return path


def cells_of(path: Path) -> list[tuple[str, str]]:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    return [(cell.cell_type, cell.source) for cell in notebook.cells]


def ok(result: ToolResult) -> ToolResult:
    assert result.status == "ok", (result.error, result.content)
    return result


# -- documents (no kernel) -----------------------------------------------------------------------------------


async def test_cells_are_inserted_edited_moved_and_deleted_by_id(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "# Title", "x = 1")
    agent = Agent(jp_serverapp, jp_root_dir)
    first_id = nbformat.read(path, as_version=4).cells[0].id

    inserted = ok(await agent.call("insert_cell", path="nb.ipynb", after_cell_id=first_id, source="y = 2"))
    new_id = inserted.details["cell_id"]
    assert inserted.details["index"] == 1
    assert inserted.content == f"Inserted code cell {new_id} at index 1 of nb.ipynb."
    assert cells_of(path) == [("markdown", "# Title"), ("code", "y = 2"), ("code", "x = 1")]

    edited = ok(
        await agent.call("edit_cell", path="nb.ipynb", cell_id=new_id, old_string="y = 2", new_string="y = 3")
    )
    assert (edited.details["cell_id"], edited.details["index"]) == (new_id, 1)
    assert "-y = 2\n+y = 3\n" in edited.details["diff"]
    replaced = ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=new_id, source="y = 4\nz = 5"))
    assert "+z = 5" in replaced.content

    moved = ok(await agent.call("move_cell", path="nb.ipynb", cell_id=new_id, to_index=-1))
    assert (moved.details["old_index"], moved.details["index"]) == (1, 2)
    assert cells_of(path) == [("markdown", "# Title"), ("code", "x = 1"), ("code", "y = 4\nz = 5")]

    deleted = ok(await agent.call("delete_cell", path="nb.ipynb", cell_id=new_id))
    assert deleted.details == {"path": "nb.ipynb", "cell_id": new_id, "index": 2, "first_line": "y = 4"}
    assert deleted.content.endswith("Its source was:\ny = 4\nz = 5")
    assert cells_of(path) == [("markdown", "# Title"), ("code", "x = 1")]

    missing = await agent.call("delete_cell", path="nb.ipynb", cell_id=new_id)
    assert missing.error is not None and missing.error.code == "E_CELL_NOT_FOUND"
    assert "read_notebook" in (missing.error.suggestion or "")


async def test_a_turns_new_cells_go_after_the_cell_in_view_in_order_and_reuse_an_empty_starter(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "place.ipynb", "# Intro", "x = 1", "# End")
    intro_id = nbformat.read(path, as_version=4).cells[0].id
    agent = Agent(jp_serverapp, jp_root_dir, client_context={"active_cell_id": intro_id, "turn_id": "t1"})
    for source in ("first = 1", "second = 2", "third = 3"):
        ok(await agent.call("insert_cell", path="place.ipynb", source=source))
    assert [source for _, source in cells_of(path)] == [
        "# Intro", "first = 1", "second = 2", "third = 3", "x = 1", "# End"
    ]  # fmt: skip
    # The next turn starts again after the cell in view.
    agent.ctx.client_context = {"active_cell_id": intro_id, "turn_id": "t2"}
    ok(await agent.call("insert_cell", path="place.ipynb", source="next_turn = 1"))
    assert [source for _, source in cells_of(path)][1] == "next_turn = 1"

    # A new notebook's single empty cell takes the agent's first code cell; the next one goes after it.
    write_notebook(jp_root_dir, "new.ipynb", "")
    starter = nbformat.read(jp_root_dir / "new.ipynb", as_version=4).cells[0].id
    agent.ctx.client_context = {"active_cell_id": starter, "turn_id": "t3"}
    first = ok(await agent.call("insert_cell", path="new.ipynb", source="import pandas as pd"))
    ok(await agent.call("insert_cell", path="new.ipynb", source="df = pd.DataFrame()"))
    assert cells_of(jp_root_dir / "new.ipynb") == [
        ("code", "import pandas as pd"),
        ("code", "df = pd.DataFrame()"),
    ]
    assert first.details["index"] == 0


async def test_read_notebook_lists_cells_briefly_or_in_full_and_pages(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "# Analysis", "import math\nprint(math.pi)", "r = 2")
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[1].execution_count = 3
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="3.14159\n")]
    nbformat.write(notebook, path)
    ids = [cell.id for cell in notebook.cells]
    agent = Agent(jp_serverapp, jp_root_dir)

    brief = ok(await agent.call("read_notebook", path="nb.ipynb"))
    assert brief.content.splitlines() == [
        "nb.ipynb · 3 cells · kernel Python 3 · read from the file",
        f"[0] {ids[0]}  markdown  1 line  # Analysis",
        f"[1] {ids[1]}  code [3]  2 lines  import math",
        "      → 3.14159",
        f"[2] {ids[2]}  code [ ]  1 line  r = 2",
    ]
    full = ok(await agent.call("read_notebook", path="nb.ipynb", format="full", start=1, limit=1))
    assert full.content.splitlines()[1:] == [
        f"--- [1] {ids[1]} · code · [3] ---",
        "import math",
        "print(math.pi)",
        "--- outputs ---",
        "3.14159",
        "[cells 1–1 of 3 shown; call read_notebook with start=2 for more]",
    ]
    last = ok(await agent.call("read_cell", path="nb.ipynb", index=-1, include_outputs=False))
    assert last.details == {"path": "nb.ipynb", "cell_id": ids[2], "index": 2}
    assert last.content == f"cell {ids[2]} · index 2 of 3 · code\n--- source ---\nr = 2"


async def test_cells_without_ids_get_stable_ids_that_the_first_change_saves(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "old.ipynb", "a = 1", "b = 2", minor=4)
    agent = Agent(jp_serverapp, jp_root_dir)
    first = ok(await agent.call("read_notebook", path="old.ipynb"))
    second = ok(await agent.call("read_notebook", path="old.ipynb"))
    assert first.details["cell_ids"] == second.details["cell_ids"] == ["cell-0", "cell-1"]
    ok(await agent.call("edit_cell", path="old.ipynb", cell_id="cell-1", source="b = 3"))
    saved = nbformat.read(path, as_version=4)
    assert (saved.nbformat, saved.nbformat_minor) == (4, 5)
    assert [(cell.id, cell.source) for cell in saved.cells] == [("cell-0", "a = 1"), ("cell-1", "b = 3")]


async def test_a_file_changed_since_it_was_read_is_not_overwritten(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    agent = Agent(jp_serverapp, jp_root_dir)
    cell_id = ok(await agent.call("read_notebook", path="nb.ipynb")).details["cell_ids"][0]

    # The user saves a change from somewhere else after the agent read the notebook.
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[0].source = "x = 'the user typed this'"
    nbformat.write(notebook, path)
    later = time.time() + 5
    os.utime(path, (later, later))

    refused = await agent.call("edit_cell", path="nb.ipynb", cell_id=cell_id, source="x = 2")
    assert refused.error is not None and refused.error.code == "E_NOTEBOOK_CHANGED"
    assert "read_notebook" in (refused.error.suggestion or "")
    assert cells_of(path) == [("code", "x = 'the user typed this'")]
    inserted = await agent.call("insert_cell", path="nb.ipynb", source="y = 1")
    assert inserted.error is not None and inserted.error.code == "E_NOTEBOOK_CHANGED"

    ok(await agent.call("read_cell", path="nb.ipynb", cell_id=cell_id))
    ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=cell_id, old_string="x = ", new_string="z = "))
    assert cells_of(path) == [("code", "z = 'the user typed this'")]


async def test_undo_restores_the_notebook_file_exactly(jp_serverapp: Any, jp_root_dir: Path) -> None:
    # Formatted unlike nbformat's own writer, so a re-serialization would show.
    path = write_notebook(jp_root_dir, "nb.ipynb", "# Notes", "x = 1", indent=4, sort_keys=False)
    original = path.read_bytes()
    agent = Agent(jp_serverapp, jp_root_dir)
    cell_id = nbformat.read(path, as_version=4).cells[1].id

    mark = agent.runtime.undo.mark(SESSION)
    ok(await agent.call("insert_cell", path="nb.ipynb", index=0, source="import os"))
    ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=cell_id, source="x = 2"))
    ok(await agent.call("delete_cell", path="nb.ipynb", cell_id=cell_id))
    ok(
        await agent.call(
            "insert_cell", path="new.ipynb", source="# created by the agent", cell_type="markdown"
        )
    )
    assert path.read_bytes() != original and (jp_root_dir / "new.ipynb").exists()
    entries = agent.runtime.undo.entries(SESSION)
    assert [(entry.path, entry.call_id) for entry in entries] == [
        ("nb.ipynb", "call-1"),
        ("nb.ipynb", "call-2"),
        ("nb.ipynb", "call-3"),
        ("new.ipynb", "call-4"),
    ]

    undone = await agent.runtime.undo.undo_since(SESSION, mark)
    assert len(undone) == 4
    assert path.read_bytes() == original
    assert not (jp_root_dir / "new.ipynb").exists()
    assert agent.runtime.undo.entries(SESSION) == []

    # Undo does not overwrite what the user changed after the agent did.
    ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=cell_id, source="x = 3"))
    path.write_text(path.read_text().replace("x = 3", "x = 'user'"))
    later = time.time() + 5
    os.utime(path, (later, later))
    with pytest.raises(Exception) as refused:
        await agent.runtime.undo.undo_last(SESSION)
    assert getattr(refused.value, "code", None) == "E_NOTEBOOK_CHANGED"
    assert "x = 'user'" in path.read_text()


async def test_the_path_comes_from_the_active_notebook_else_a_clear_error(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "active.ipynb", "a = 1")
    (jp_root_dir / "notes.txt").write_text("hi")
    active = Agent(jp_serverapp, jp_root_dir, client_context={"active_document": {"path": "active.ipynb"}})
    assert ok(await active.call("read_notebook")).content.startswith("active.ipynb · 1 cells")

    agent = Agent(jp_serverapp, jp_root_dir)
    expected = {
        "E_NO_NOTEBOOK": {},
        "E_NOT_A_NOTEBOOK": {"path": "notes.txt"},
        "E_PATH_OUTSIDE_ROOT": {"path": "../elsewhere.ipynb"},
        "E_NOTEBOOK_NOT_FOUND": {"path": "missing.ipynb"},
    }
    for code, arguments in expected.items():
        result = await agent.call("read_notebook", **arguments)
        assert result.error is not None and result.error.code == code, (code, result)


async def test_edit_errors_say_what_to_do(jp_serverapp: Any, jp_root_dir: Path) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "a = 1\nb = 1\n")
    cell_id = nbformat.read(path, as_version=4).cells[0].id
    agent = Agent(jp_serverapp, jp_root_dir)
    missing = await agent.call(
        "edit_cell", path="nb.ipynb", cell_id=cell_id, old_string="zzz = 9", new_string="q"
    )
    twice = await agent.call(
        "edit_cell", path="nb.ipynb", cell_id=cell_id, old_string="= 1", new_string="= 2"
    )
    both = await agent.call(
        "edit_cell", path="nb.ipynb", cell_id=cell_id, source="c", old_string="a", new_string="b"
    )
    codes = [r.error.code if r.error else None for r in (missing, twice, both)]
    assert codes == ["E_EDIT_NO_MATCH", "E_EDIT_AMBIGUOUS", "E_TOOL_INVALID_ARGS"]
    assert "not both" in both.error.message  # type: ignore[union-attr]
    assert cells_of(path) == [("code", "a = 1\nb = 1\n")]


async def test_approval_shows_the_diff_or_the_code_and_a_denial_changes_nothing(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "total = 1")
    cell_id = nbformat.read(path, as_version=4).cells[0].id
    approver = RecordingApprover(approve=False)
    agent = Agent(jp_serverapp, jp_root_dir, approver=approver)
    ok(await agent.call("read_cell", path="nb.ipynb", cell_id=cell_id))
    edit = await agent.call("edit_cell", path="nb.ipynb", cell_id=cell_id, old_string="1", new_string="2")
    run = await agent.call("run_cell", path="nb.ipynb", code="print('hi')")
    rerun = await agent.call("run_cell", path="nb.ipynb", cell_id=cell_id)
    restart = await agent.call("restart_kernel", path="nb.ipynb")
    assert [r.status for r in (edit, run, rerun, restart)] == ["denied"] * 4
    shown = [(r.tool, r.action_kind, r.action_target, r.preview) for r in approver.requests]
    assert shown == [
        (
            "edit_cell",
            "FileWrite",
            "nb.ipynb",
            "--- nb.ipynb cell 1 (total = 1)\n+++ nb.ipynb cell 1 (total = 1)\n"
            "@@ -1 +1 @@\n-total = 1\n+total = 2\n",
        ),
        ("run_cell", "Kernel", "nb.ipynb", "print('hi')"),
        ("run_cell", "Kernel", "nb.ipynb", "total = 1"),
        ("restart_kernel", "Kernel", "nb.ipynb", "restart the kernel of nb.ipynb: all variables are lost"),
    ]
    assert cells_of(path) == [("code", "total = 1")]
    assert await jp_serverapp.session_manager.list_sessions() == []


async def test_edit_cell_preview_is_the_change_against_the_cell_as_it_is_now(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    """The card's diff comes from the matcher that applies it, on the cell as it is (even one the model never
    read); an edit that cannot apply is refused before asking: the model gets the error, no card."""
    path = write_notebook(jp_root_dir, "nb.ipynb", "total = 5")
    cell_id = nbformat.read(path, as_version=4).cells[0].id
    approver = RecordingApprover(approve=True)
    agent = Agent(jp_serverapp, jp_root_dir, approver=approver)
    ok(await agent.call("edit_cell", path="nb.ipynb", cell_id=cell_id, old_string="5", new_string="6"))
    assert [r.preview for r in approver.requests] == [
        "--- nb.ipynb cell 1 (total = 5)\n+++ nb.ipynb cell 1 (total = 5)\n"
        "@@ -1 +1 @@\n-total = 5\n+total = 6\n"
    ]
    missing = await agent.call(
        "edit_cell", path="nb.ipynb", cell_id=cell_id, old_string="count = 9", new_string="count = 10"
    )
    assert missing.error is not None and missing.error.code == "E_EDIT_NO_MATCH"
    assert len(approver.requests) == 1  # nobody was asked about the edit that could not apply
    assert cells_of(path) == [("code", "total = 6")]


async def test_a_notebook_open_in_jupyterlab_changes_through_the_live_model(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "x = 1")
    on_disk = path.read_bytes()
    live = nbformat.read(path, as_version=4)
    live.cells[0].source = "x = 1  # unsaved edit in the browser"
    frontend = FrontendNotebooks({"nb.ipynb": live})
    agent = Agent(jp_serverapp, jp_root_dir, notebook_gateway=frontend)

    read = ok(await agent.call("read_notebook", path="nb.ipynb"))
    assert "read from the live notebook open in JupyterLab" in read.content
    assert "unsaved edit in the browser" in read.content
    inserted = ok(await agent.call("insert_cell", path="nb.ipynb", source="y = 2"))
    assert [type(edit).__name__ for edit in frontend.edits] == ["InsertCell"]
    assert [cell.source for cell in frontend.notebooks["nb.ipynb"].cells] == [live.cells[0].source, "y = 2"]
    assert path.read_bytes() == on_disk, "the file is the frontend's to save"

    await agent.runtime.undo.undo_last(SESSION)
    assert [cell.source for cell in frontend.notebooks["nb.ipynb"].cells] == [live.cells[0].source]
    assert inserted.details["index"] == 1


@pytest.mark.asyncio
async def test_a_synchronous_contents_manager_works_the_same(tmp_path: Path) -> None:
    from jupyter_server.services.contents.filemanager import FileContentsManager

    path = write_notebook(tmp_path, "nb.ipynb", "x = 1")
    executor = ToolExecutor(ToolRegistry(notebook_tools()), approver=FixedApprover(True))
    ctx = ToolContext(root_dir=tmp_path, contents_manager=FileContentsManager(root_dir=str(tmp_path)))

    async def call(name: str, **arguments: Any) -> ToolResult:
        return await executor.execute(ToolCall(id="c", name=name, arguments=json.dumps(arguments)), ctx)

    assert ok(await call("read_notebook", path="nb.ipynb")).details["cell_count"] == 1
    ok(await call("insert_cell", path="nb.ipynb", source="y = 2"))
    assert cells_of(path) == [("code", "x = 1"), ("code", "y = 2")]
    later = time.time() + 5
    os.utime(path, (later, later))
    refused = await call("insert_cell", path="nb.ipynb", source="z = 3")
    assert refused.error is not None and refused.error.code == "E_NOTEBOOK_CHANGED"


# -- schemas -------------------------------------------------------------------------------------------------

PATH = {"type": "string", "description": "Notebook path (default: the active notebook)."}


EXPECTED_SCHEMAS = {
    "read_notebook": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "start": {"default": 0, "description": "First cell index.", "minimum": 0, "type": "integer"},
            "limit": {"minimum": 1, "type": "integer", "description": "How many cells."},
            "format": {
                "default": "brief",
                "description": "brief: a line per cell; full: whole sources.",
                "enum": ["brief", "full"],
                "type": "string",
            },
            "include_outputs": {"default": True, "description": "Include outputs.", "type": "boolean"},
        },
        "type": "object",
    },
    "read_cell": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "cell_id": {"type": "string", "description": "Cell id."},
            "index": {"type": "integer", "description": "Or the cell's index (-1 = last)."},
            "include_outputs": {"default": True, "description": "Include outputs.", "type": "boolean"},
        },
        "type": "object",
    },
    "insert_cell": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "index": {"type": "integer", "description": "Position (default: after the cell in view)."},
            "after_cell_id": {"type": "string", "description": "Or insert after this cell."},
            "cell_type": {
                "default": "code",
                "description": "Cell type.",
                "enum": ["code", "markdown", "raw"],
                "type": "string",
            },
            "source": {"description": "Cell content.", "type": "string"},
        },
        "required": ["source"],
        "type": "object",
    },
    "edit_cell": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "cell_id": {"description": "Cell id.", "type": "string"},
            "source": {"type": "string", "description": "The whole new source."},
            "old_string": {"type": "string", "description": "Or: exact text in the cell to replace."},
            "new_string": {"type": "string", "description": "Replacement for old_string."},
        },
        "required": ["cell_id"],
        "type": "object",
    },
    "delete_cell": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "cell_id": {"description": "Cell id.", "type": "string"},
        },
        "required": ["cell_id"],
        "type": "object",
    },
    "move_cell": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "cell_id": {"description": "Cell id.", "type": "string"},
            "to_index": {"description": "New index (-1 = last).", "type": "integer"},
        },
        "required": ["cell_id", "to_index"],
        "type": "object",
    },
    "run_cell": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "cell_id": {"type": "string", "description": "An existing cell to run."},
            "code": {
                "type": "string",
                "description": "Or code for a new cell, inserted after the active cell.",
            },
            "timeout": {
                "default": 60.0,
                "description": "Seconds to wait for the cell before answering 'running'.",
                "exclusiveMinimum": 0,
                "maximum": 3600.0,
                "type": "number",
            },
        },
        "type": "object",
    },
    "execute_code": {
        "additionalProperties": False,
        "properties": {
            "code": {"description": "Python code.", "type": "string"},
            "path": PATH,
            "timeout": {
                "default": 60.0,
                "description": "Seconds to wait for the code before answering 'running'.",
                "exclusiveMinimum": 0,
                "maximum": 3600.0,
                "type": "number",
            },
        },
        "required": ["code"],
        "type": "object",
    },
    "get_cell_output": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "cell_id": {"description": "Cell id (or an execute_code id).", "type": "string"},
            "offset": {"default": 0, "description": "First character.", "minimum": 0, "type": "integer"},
            "limit": {
                "default": 20000,
                "description": "Characters to return.",
                "maximum": 100000,
                "minimum": 100,
                "type": "integer",
            },
            "timeout": {
                "default": 30.0,
                "description": "Seconds to wait for a running cell.",
                "maximum": 3600.0,
                "minimum": 0,
                "type": "number",
            },
        },
        "required": ["cell_id"],
        "type": "object",
    },
    "inspect_variables": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "names": {
                "items": {"type": "string"},
                "type": "array",
                "description": "Only these (default: all).",
            },
        },
        "type": "object",
    },
    "interrupt_kernel": {
        "additionalProperties": False,
        "properties": {"path": PATH},
        "type": "object",
    },
    "restart_kernel": {
        "additionalProperties": False,
        "properties": {"path": PATH},
        "type": "object",
    },
    "check_reproducibility": {
        "additionalProperties": False,
        "properties": {
            "path": PATH,
            "timeout": {
                "default": 300.0,
                "description": "Seconds all cells together may take; cells after it are not compared.",
                "exclusiveMinimum": 0,
                "maximum": 3600.0,
                "type": "number",
            },
        },
        "type": "object",
    },
}


def test_each_tool_offers_the_model_exactly_this_schema() -> None:
    tools = {tool.name: tool for tool in notebook_tools()}
    assert list(tools) == list(EXPECTED_SCHEMAS)
    for name, expected in EXPECTED_SCHEMAS.items():
        assert parameters_schema(tools[name]) == expected, name
    read_only = sorted(name for name, tool in tools.items() if tool.read_only)
    assert read_only == ["get_cell_output", "inspect_variables", "read_cell", "read_notebook"]


# -- the live kernel -----------------------------------------------------------------------------------------

PNG = base64.b64encode(png_bytes(3, 2)).decode()


async def test_run_cell_runs_in_the_notebooks_kernel_and_writes_outputs_into_the_cell(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb", "# Intro", "n = 6")
    intro_id = nbformat.read(path, as_version=4).cells[0].id
    agent = Agent(jp_serverapp, jp_root_dir, client_context={"active_cell_id": intro_id})
    try:
        first = ok(
            await agent.call("run_cell", path="nb.ipynb", code="print(n * 7 if 'n' in dir() else 6 * 7)")
        )
        assert first.content.splitlines()[1:] == ["--- output ---", "42"]
        assert (first.details["status"], first.details["execution_count"], first.details["index"]) == (
            "ok",
            1,
            1,
        )
        saved = nbformat.read(path, as_version=4)
        assert [cell.source for cell in saved.cells][1] == "print(n * 7 if 'n' in dir() else 6 * 7)"
        assert saved.cells[1].execution_count == 1
        assert saved.cells[1].outputs == [nbformat.v4.new_output("stream", name="stdout", text="42\n")]
        sessions = await jp_serverapp.session_manager.list_sessions()
        assert [(s["path"], s["type"], s["kernel"]["name"]) for s in sessions] == [
            ("nb.ipynb", "notebook", "python3")
        ]

        n_cell = saved.cells[2].id
        ok(await agent.call("run_cell", path="nb.ipynb", cell_id=n_cell))
        again = ok(await agent.call("run_cell", path="nb.ipynb", cell_id=first.details["cell_id"]))
        assert again.content.endswith("42") and again.details["execution_count"] == 3

        image_code = (
            "from base64 import b64decode\nfrom IPython.display import Image, display\n"
            f"display(Image(data=b64decode('{PNG}')))"
        )
        image = ok(await agent.call("run_cell", path="nb.ipynb", code=image_code))
        assert (
            "[image/png 3×2 px," in image.content
            and "not shown, this model does not read images" in image.content
        )
        # The model reads the line above; the tool card shows the picture (details never reach the model).
        assert [(i["mime_type"], i["data"], i["width"]) for i in image.details["images"]] == [
            ("image/png", PNG, 3)
        ]
        seeing = copy.copy(agent.ctx)
        seeing.client_context = {"vision": True}
        seen = ok(await agent.call("run_cell", ctx=seeing, path="nb.ipynb", cell_id=image.details["cell_id"]))
        assert [(i["mime_type"], i["data"], i["width"]) for i in seen.details["images"]] == [
            ("image/png", PNG, 3)
        ]

        frames = (
            "from IPython.display import clear_output\n"
            "for i in range(3):\n    clear_output(wait=True)\n    print('frame', i)"
        )
        cleared = ok(await agent.call("run_cell", path="nb.ipynb", code=frames))
        assert cleared.content.splitlines()[-1] == "frame 2" and "frame 1" not in cleared.content

        failing = ok(await agent.call("run_cell", path="nb.ipynb", code="def f():\n    return 1 / 0\nf()"))
        assert failing.details["status"] == "error"
        assert (
            "raised an error" in failing.content
            and "\nZeroDivisionError: division by zero\n" in failing.content
        )
        assert "return 1 / 0" in failing.content and "\x1b" not in failing.content

        long_code = "for i in range(3000):\n    print(f'line {i:04d}')"
        long = ok(await agent.call("run_cell", path="nb.ipynb", code=long_code))
        long_id = long.details["cell_id"]
        assert "line 0000" in long.content and long.content.endswith("line 2999")
        assert f'call get_cell_output with cell_id "{long_id}"' in long.content
        assert len(long.content) < 9_000
        page = ok(await agent.call("get_cell_output", path="nb.ipynb", cell_id=long_id, offset=10, limit=100))
        assert page.content.splitlines()[1:] == [
            "--- output, characters 10–110 of 29999 ---",
            *[f"line {i:04d}" for i in range(1, 11)],
            "[more: call get_cell_output with offset=110]",
        ]

        asking = ok(await agent.call("run_cell", path="nb.ipynb", code="name = input('name? ')"))
        assert "StdinNotImplementedError" in asking.content
        assert "input() is not available" in asking.content
    finally:
        await agent.close()


async def test_variables_are_inspected_silently_and_execute_code_adds_no_cell(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb")
    agent = Agent(jp_serverapp, jp_root_dir)
    setup = (
        "class Frame:\n"
        "    shape = (3, 2)\n"
        "    columns = ['a', 'b']\n"
        "    dtypes = {'a': 'int64', 'b': 'object'}\n"
        "table = Frame()\n"
        "count = 5\n"
        "items = [1, 2, 3]\n"
        "import json\n"
        "for step in range(3):\n"
        "    print('step', step, flush=True)\n"
        "    __import__('time').sleep(0.7)\n"
    )
    try:
        first = ok(await agent.call("run_cell", path="nb.ipynb", code=setup))
        assert first.details["execution_count"] == 1
        progress = [event for event in agent.events if isinstance(event, ToolProgressEvent)]
        assert progress and all(event.call_id == "call-1" for event in progress)
        assert {event.message for event in progress} & {"step 0", "step 1", "step 2"}

        listed = ok(await agent.call("inspect_variables", path="nb.ipynb"))
        assert listed.content.splitlines() == [
            "count: int, = 5",
            "items: list, len 3",
            "step: int, = 2",
            "table: __main__.Frame, shape (3, 2)",
            "    columns: a (int64), b (object)",
        ]
        chosen = ok(await agent.call("inspect_variables", path="nb.ipynb", names=["count", "nope"]))
        assert chosen.content.splitlines() == ["count: int, = 5", "nope: not defined"]

        quick = ok(await agent.call("execute_code", path="nb.ipynb", code="count * 2"))
        assert quick.content.startswith("The code finished")
        assert quick.content.splitlines()[1:] == ["--- output ---", "10"]
        after = ok(await agent.call("run_cell", path="nb.ipynb", code="'next'"))
        assert after.details["execution_count"] == 2, "inspection and execute_code must not move the count"
        assert [cell.source for cell in nbformat.read(path, as_version=4).cells] == [setup, "'next'"]
        assert "globals" not in ok(await agent.call("inspect_variables", path="nb.ipynb")).content
    finally:
        await agent.close()


async def test_a_long_cell_answers_running_and_is_picked_up_interrupted_or_cancelled(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path = write_notebook(jp_root_dir, "nb.ipynb")
    agent = Agent(jp_serverapp, jp_root_dir)
    # Margins for a loaded machine (CI has 2 cores): the kernel is started first, so the call's 2 s are
    # spent in the cell, and the cell outlasts them by 2 s.
    slow = "import time\nprint('start', flush=True)\ntime.sleep(4)\nprint('end')"
    try:
        warm = ok(await agent.call("run_cell", path="nb.ipynb", code="import time", timeout=60))
        ok(await agent.call("delete_cell", path="nb.ipynb", cell_id=warm.details["cell_id"]))
        running = ok(await agent.call("run_cell", path="nb.ipynb", code=slow, timeout=2))
        cell_id = running.details["cell_id"]
        assert running.details["status"] == "running"
        assert (
            "still running after 2 s" in running.content and "--- output so far ---\nstart" in running.content
        )
        assert f'get_cell_output with cell_id "{cell_id}"' in running.content
        done = ok(await agent.call("get_cell_output", path="nb.ipynb", cell_id=cell_id, timeout=20))
        assert done.content.splitlines()[0].startswith(
            f"Cell {cell_id} (index 0) finished, execution count 2"
        )
        assert done.content.endswith("--- output, characters 0–9 of 9 ---\nstart\nend")
        saved = nbformat.read(path, as_version=4).cells[0]
        assert (saved.execution_count, saved.outputs[0].text) == (2, "start\nend\n")

        # A run still going when its call answered is reported by the next run_cell once it has finished.
        ok(await agent.call("run_cell", path="nb.ipynb", code="time.sleep(0.8); print('later')", timeout=0.3))
        await asyncio.sleep(3)
        next_run = ok(await agent.call("run_cell", path="nb.ipynb", code="'x'"))
        assert "(still running at an earlier call) has finished: ok; later" in next_run.content

        stuck = ok(await agent.call("run_cell", path="nb.ipynb", code="time.sleep(60)", timeout=0.5))
        interrupted = ok(await agent.call("interrupt_kernel", path="nb.ipynb"))
        assert f"Cell {stuck.details['cell_id']} was running: error" in interrupted.content
        output = ok(await agent.call("get_cell_output", path="nb.ipynb", cell_id=stuck.details["cell_id"]))
        assert "KeyboardInterrupt" in output.content

        # Stopping the turn interrupts the kernel, like JupyterLab's stop button.
        cancel = CancelToken()
        stoppable = copy.copy(agent.ctx)
        stoppable.cancel = cancel
        call = asyncio.ensure_future(
            agent.call("run_cell", ctx=stoppable, path="nb.ipynb", code="time.sleep(60)")
        )
        await asyncio.sleep(1.5)
        cancel.cancel("stopped by the user")
        canceled = await call
        assert canceled.status == "canceled"
        last_cell = nbformat.read(path, as_version=4).cells[-1]
        output = ok(await agent.call("get_cell_output", path="nb.ipynb", cell_id=last_cell.id, timeout=15))
        assert "KeyboardInterrupt" in output.content
    finally:
        await agent.close()


@pytest.mark.fault
async def test_a_dead_kernel_is_an_error_and_restart_kernel_brings_it_back(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "nb.ipynb")
    agent = Agent(jp_serverapp, jp_root_dir)
    try:
        ok(await agent.call("run_cell", path="nb.ipynb", code="x = 1"))
        died = await agent.call("run_cell", path="nb.ipynb", code="import os; os._exit(1)")
        assert died.error is not None and died.error.code == "E_KERNEL_DIED"
        assert "restart_kernel" in (died.error.suggestion or "")
        restarted = ok(await agent.call("restart_kernel", path="nb.ipynb"))
        assert "all variables and imports are gone" in restarted.content
        back = ok(await agent.call("run_cell", path="nb.ipynb", code="print('x' in dir())"))
        assert back.content.endswith("False")
        assert back.details["execution_count"] == 1
    finally:
        await agent.close()


async def test_two_notebooks_run_at_the_same_time_on_their_own_kernels(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir, "a.ipynb")
    write_notebook(jp_root_dir, "b.ipynb")
    agent = Agent(jp_serverapp, jp_root_dir)
    try:
        await asyncio.gather(
            agent.call("run_cell", path="a.ipynb", code="import time; who = 'a'"),
            agent.call("run_cell", path="b.ipynb", code="import time; who = 'b'"),
        )
        started = time.monotonic()
        results = await asyncio.gather(
            agent.call("run_cell", path="a.ipynb", code="time.sleep(1.5); print(who)"),
            agent.call("run_cell", path="b.ipynb", code="time.sleep(1.5); print(who)"),
        )
        elapsed = time.monotonic() - started
        assert [ok(result).content.splitlines()[-1] for result in results] == ["a", "b"]
        assert elapsed < 2.9, f"the two runs took {elapsed:.1f} s: they did not run at the same time"
        sessions = await jp_serverapp.session_manager.list_sessions()
        assert len({session["kernel"]["id"] for session in sessions}) == 2
    finally:
        await agent.close()


def test_parsed_notebooks_keep_only_the_ones_used_last() -> None:
    from hdsp_agent.documents.gateway import ParsedNotebooks

    parsed = ParsedNotebooks()
    stat = {"last_modified": "t", "size": 1}
    for number in range(ParsedNotebooks.MAX_ENTRIES):
        parsed.put(f"{number}.ipynb", stat, nbformat.v4.new_notebook())
    assert parsed.get("0.ipynb", stat) is not None  # used: now the most recent
    parsed.put("new.ipynb", stat, nbformat.v4.new_notebook())
    assert parsed.get("1.ipynb", stat) is None  # the least recently used went
    assert parsed.get("0.ipynb", stat) is not None and parsed.get("new.ipynb", stat) is not None
    assert parsed.get("new.ipynb", {"last_modified": "t2", "size": 1}) is None  # the file changed since
