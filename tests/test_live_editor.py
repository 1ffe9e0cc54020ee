"""Agent edits to a text file open in a JupyterLab file editor go into the editor, merged with the user's
unsaved typing (``tools/builtin/edit/pipeline.py`` live path, ``merge.py``, ``documents/live.py``).

A real Jupyter server and WebSocket; the tab is ``fake_tab.FakeTab``, which holds the editors' texts and
answers the bridge's text requests as src/notebookBridge.ts does (and saves through the contents manager, as
JupyterLab).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fake_tab import FakeTab

from hdsp_agent.documents.merge import E_EDIT_CONFLICT, MergeConflict, merge_texts
from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.edit.filestate import FileStateStore
from hdsp_agent.tools.builtin.edit.tools import SingleFindAndReplaceTool
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry
from hdsp_agent.tools.state import ToolState

UTILS = "def load():\n    return 1\n\n\ndef clean():\n    return 2\n"


class Agent:
    def __init__(self, serverapp: Any, root: Path) -> None:
        self.live = serverapp.web_app.settings["hdsp_agent"].live_notebooks
        self.state = ToolState(files=FileStateStore())
        self.registry = ToolRegistry([SingleFindAndReplaceTool(self.state.files, self.state.notebooks.undo)])
        self.executor = ToolExecutor(self.registry, approver=FixedApprover(True))
        self.ctx = ToolContext(
            root_dir=root,
            session_id="s1",
            contents_manager=serverapp.contents_manager,
            notebook_gateway=self.live,
            text_editors=self.live.texts,
        )
        self.calls = 0

    async def replace(self, old: str, new: str) -> ToolResult:
        self.calls += 1
        arguments = json.dumps({"filepath": "utils.py", "old_string": old, "new_string": new})
        call = ToolCall(id=f"c{self.calls}", name="single_find_and_replace", arguments=arguments)
        return await self.executor.execute(call, self.ctx.for_call(call.id), self.registry.catalog(self.ctx))


async def open_editor(jp_ws_fetch: Any, jp_serverapp: Any, text: str, loaded: bool = False) -> FakeTab:
    ws = await jp_ws_fetch("hdsp-agent", "notebooks", "ws")
    root = Path(jp_serverapp.root_dir)
    tab = FakeTab(ws, editors={"utils.py": text}, contents_manager=jp_serverapp.contents_manager, root=root)
    await tab.announce(["utils.py"] if loaded else [])
    return tab


def typed(text: str) -> str:
    return "# typed by the user, not saved\n" + text


async def test_an_agent_edit_goes_into_the_open_editor_with_the_users_unsaved_typing(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "utils.py").write_text(UTILS)
    tab = await open_editor(jp_ws_fetch, jp_serverapp, typed(UTILS))
    agent = Agent(jp_serverapp, jp_root_dir)
    try:
        result = await agent.replace("    return 2", "    return 20")
        assert result.status == "ok", result.error
        assert tab.editors["utils.py"] == typed(UTILS.replace("return 2", "return 20"))
        assert (jp_root_dir / "utils.py").read_text() == UTILS, "nothing written behind the editor's back"
        assert "editor" in result.content

        # The agent's next edit builds on its first, as if the file had it.
        result = await agent.replace("    return 20", "    return 200")
        assert result.status == "ok", result.error
        assert tab.editors["utils.py"] == typed(UTILS.replace("return 2", "return 200"))
    finally:
        await tab.close()


async def test_an_agent_edit_on_the_lines_the_user_is_typing_is_a_conflict_and_changes_nothing(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "utils.py").write_text(UTILS)
    mine = UTILS.replace("return 2", "return 2  # mine")
    tab = await open_editor(jp_ws_fetch, jp_serverapp, mine)
    agent = Agent(jp_serverapp, jp_root_dir)
    try:
        result = await agent.replace("    return 2", "    return 20")
        assert result.status == "error" and result.error is not None
        assert result.error.code == E_EDIT_CONFLICT
        assert "line 6" in result.error.message
        assert tab.editors["utils.py"] == mine
        assert (jp_root_dir / "utils.py").read_text() == UTILS
    finally:
        await tab.close()


async def test_an_editor_without_unsaved_changes_gets_the_file_written_and_reloaded(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "utils.py").write_text(UTILS)
    tab = await open_editor(jp_ws_fetch, jp_serverapp, UTILS)
    agent = Agent(jp_serverapp, jp_root_dir)
    edited = UTILS.replace("return 2", "return 20")
    try:
        assert (await agent.replace("    return 2", "    return 20")).status == "ok"
        # Saved at once (what the end of the turn would do) and the editor reloaded: it shows the change and
        # has nothing unsaved, and the change is undone and redone like any file change.
        assert (jp_root_dir / "utils.py").read_text() == edited
        assert "revert_text" in [request["method"] for request in tab.requests]
        assert tab.editors["utils.py"] == tab.saved["utils.py"] == edited
        assert len(agent.state.files.records("s1")) == 1
        assert await agent.live.settle(jp_serverapp.contents_manager) == []
    finally:
        await tab.close()


async def test_the_end_of_the_turn_leaves_an_editor_with_the_users_typing_and_saves_it_once_it_is_gone(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "utils.py").write_text(UTILS)
    tab = await open_editor(jp_ws_fetch, jp_serverapp, typed(UTILS))
    agent = Agent(jp_serverapp, jp_root_dir)
    try:
        assert (await agent.replace("    return 1", "    return 10")).status == "ok"
        outcomes = await agent.live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.outcome) for o in outcomes] == [("utils.py", "left_unsaved")]
        assert (jp_root_dir / "utils.py").read_text() == UTILS, "not saved behind the user's back"
        assert tab.editors["utils.py"] == typed(UTILS.replace("return 1", "return 10"))

        # The user deletes their line again: the editor holds the file plus the agent's change, saved.
        tab.editors["utils.py"] = UTILS.replace("return 1", "return 10")
        outcomes = await agent.live.settle(jp_serverapp.contents_manager)
        assert [(o.path, o.outcome) for o in outcomes] == [("utils.py", "saved")]
        await wait_for_file(jp_root_dir / "utils.py", UTILS.replace("return 1", "return 10"))
    finally:
        await tab.close()


async def test_a_closed_editor_has_the_agents_change_written_to_the_file_with_nothing_else(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (jp_root_dir / "utils.py").write_text(UTILS)
    tab = await open_editor(jp_ws_fetch, jp_serverapp, typed(UTILS))
    agent = Agent(jp_serverapp, jp_root_dir)
    monkeypatch.setattr(agent.live, "reconnect_grace_seconds", 0.3)
    assert (await agent.replace("    return 2", "    return 20")).status == "ok"
    await tab.close()
    outcomes = await agent.live.settle(jp_serverapp.contents_manager)
    assert [(o.path, o.outcome, o.problem) for o in outcomes] == [("utils.py", "written", None)]
    # The user discarded their typing by closing the tab; the agent's change is kept.
    assert (jp_root_dir / "utils.py").read_text() == UTILS.replace("return 2", "return 20")


async def test_a_reloaded_editor_gets_the_agents_unsaved_change_back(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "utils.py").write_text(UTILS)
    tab = await open_editor(jp_ws_fetch, jp_serverapp, typed(UTILS))
    agent = Agent(jp_serverapp, jp_root_dir)
    assert (await agent.replace("    return 2", "    return 20")).status == "ok"
    await tab.close()
    tab = await open_editor(jp_ws_fetch, jp_serverapp, UTILS, loaded=True)
    try:
        for _ in range(100):
            if tab.editors["utils.py"] != UTILS:
                break
            await asyncio.sleep(0.05)
        assert tab.editors["utils.py"] == UTILS.replace("return 2", "return 20")
    finally:
        await tab.close()


async def test_undo_takes_the_agents_change_out_of_the_editor_and_keeps_the_users_typing(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "utils.py").write_text(UTILS)
    tab = await open_editor(jp_ws_fetch, jp_serverapp, typed(UTILS))
    agent = Agent(jp_serverapp, jp_root_dir)
    try:
        assert (await agent.replace("    return 2", "    return 20")).status == "ok"
        tab.editors["utils.py"] = "# more typing\n" + tab.editors["utils.py"]
        # Turn undo takes back the notebook changes' history, where an editor edit records its undo.
        restored = await agent.state.notebooks.undo.undo_since("s1", 0)
        assert [entry.path for entry in restored] == ["utils.py"]
        assert tab.editors["utils.py"] == "# more typing\n" + typed(UTILS)
        assert (jp_root_dir / "utils.py").read_text() == UTILS
    finally:
        await tab.close()


async def test_undo_of_an_editor_change_saved_since_puts_the_file_back_too(
    jp_serverapp: Any, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "utils.py").write_text(UTILS)
    tab = await open_editor(jp_ws_fetch, jp_serverapp, typed(UTILS))
    agent = Agent(jp_serverapp, jp_root_dir)
    edited = UTILS.replace("return 2", "return 20")
    try:
        assert (await agent.replace("    return 2", "    return 20")).status == "ok"
        tab.editors["utils.py"] = edited  # the user takes their line out again; the turn ends: saved
        assert [o.outcome for o in await agent.live.settle(jp_serverapp.contents_manager)] == ["saved"]
        await wait_for_file(jp_root_dir / "utils.py", edited)

        await agent.state.notebooks.undo.undo_since("s1", 0)
        assert tab.editors["utils.py"] == UTILS
        await wait_for_file(jp_root_dir / "utils.py", UTILS)
    finally:
        await tab.close()


async def wait_for_file(path: Path, text: str) -> None:
    for _ in range(100):
        if path.read_text() == text:
            return
        await asyncio.sleep(0.05)
    assert path.read_text() == text


def test_merge_takes_both_sides_and_reports_where_they_collide() -> None:
    base = "a\nb\nc\nd\ne\n"
    assert merge_texts(base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n") == "A\nb\nc\nd\nE\n"
    assert merge_texts(base, base, "x\n") == "x\n"
    assert merge_texts(base, "y\n", base) == "y\n"
    assert merge_texts(base, "a\nB\nc\nd\ne\n", "a\nBB\nc\nd\ne\n") == MergeConflict(2, 2)
