"""The undo history and the journals, written to the conversation store and rebuilt from it
(agent/undo_records.py).

In process, with a real SQLite store: what a restarted server loads is what the first one recorded, and the
rebuilt entries undo for real (files on disk; an editor change merged back out of the file once no editor
holds it). The end-to-end restart through a real Jupyter server is in test_undo_restart.py.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.agent.store import SessionStore
from hdsp_agent.agent.undo import TurnUndo
from hdsp_agent.agent.undo_records import UndoPersistence
from hdsp_agent.documents.edits import InsertCell
from hdsp_agent.documents.history import TextChange, UndoEntry
from hdsp_agent.documents.journal import AgentText
from hdsp_agent.documents.live import LiveNotebooks
from hdsp_agent.tools.base import ToolContext
from hdsp_agent.tools.state import ToolState

pytestmark = pytest.mark.asyncio


def _server(store: SessionStore, root: Path, limit: int | None = None) -> tuple[Any, ...]:
    """What a server builds at start: the histories, the journals, and the store loaded into them."""
    live = LiveNotebooks()
    undo = TurnUndo(ToolState())
    persistence = UndoPersistence(store, limit_bytes=limit)

    def contexts(**overrides: Any) -> ToolContext:
        return ToolContext(root_dir=root, notebook_gateway=live, **overrides)

    persistence.load(undo, live.journal, live.texts.texts, contexts)
    return undo, live.journal, live.texts.texts, persistence


async def _nothing() -> None:
    return None


async def test_journals_and_undo_history_are_rebuilt_from_the_store(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions.sqlite3")
    notes, script = tmp_path / "notes.txt", tmp_path / "script.py"
    undo, journal, texts, _ = _server(store, tmp_path)
    undo.mark("s1", "t1")
    notes.write_bytes(b"after\n")
    undo.file_state.record_prior(
        "s1", notes, b"before\n", after_sha256=hashlib.sha256(b"after\n").hexdigest(), shown_as="notes.txt"
    )
    script.write_text("a = 2\n")
    change = TextChange(script, planned="a = 2\n", before="a = 1\n")
    undo.notebooks.undo.record(
        UndoEntry("s1", "c2", "script.py", "edit in the open editor", _nothing, text_change=change)
    )
    cell = {"id": "agent-cell", "cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": []}
    journal.record("nb.ipynb", InsertCell(index=1, cell=cell))
    texts["other.py"] = AgentText("base\n", "agent\n")
    store.flush()

    undo2, journal2, texts2, _ = _server(store, tmp_path)
    assert undo2.checkpoints("s1") == ["t1"]
    assert [entry.edit for entry in journal2.entries("nb.ipynb")] == [InsertCell(index=1, cell=cell)]
    assert texts2["other.py"] == AgentText("base\n", "agent\n")
    assert undo2.notebooks.undo.entries("s1")[0].text_change == change

    # The rebuilt history undoes for real: the file's bytes, and the editor change out of the file.
    result = await undo2.undo_last("s1")
    assert result.turn_ids == ["t1"]
    assert notes.read_bytes() == b"before\n"
    assert script.read_text() == "a = 1\n"

    # What the undo did is stored too: a third start has nothing to undo, and Redo puts the file back.
    store.flush()
    undo3, *_ = _server(store, tmp_path)
    assert undo3.checkpoints("s1") == []
    assert undo3.can_redo("s1")
    await undo3.redo("s1")
    assert notes.read_bytes() == b"after\n"
    store.close()


async def test_a_saved_document_leaves_the_stored_journal(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions.sqlite3")
    _, journal, texts, _ = _server(store, tmp_path)
    cell = {"id": "c", "cell_type": "code", "source": "", "metadata": {}, "outputs": []}
    entry = journal.record("nb.ipynb", InsertCell(index=0, cell=cell))
    entry.acknowledged = True
    journal.saved("nb.ipynb")
    texts["a.py"] = AgentText("x", "y")
    texts.pop("a.py")
    store.flush()
    _, journal2, texts2, _ = _server(store, tmp_path)
    assert journal2.paths() == []
    assert dict(texts2) == {}
    store.close()


async def test_the_bound_drops_the_oldest_checkpoint_with_its_records(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions.sqlite3")
    undo, _, _, persistence = _server(store, tmp_path, limit=25_000)
    for turn in ("t1", "t2", "t3"):
        undo.mark("s1", turn)
        undo.file_state.record_prior("s1", tmp_path / f"{turn}.txt", b"x" * 10_000, shown_as=f"{turn}.txt")
    # Recorded from the event loop here: the bound is kept as the history grows.
    assert undo.checkpoints("s1") == ["t2", "t3"]
    assert [record.shown_as for record in undo.file_state.records("s1")] == ["t2.txt", "t3.txt"]
    assert persistence.stored_bytes() <= 25_000
    store.flush()
    undo2, *_ = _server(store, tmp_path)
    assert undo2.checkpoints("s1") == ["t2", "t3"]
    assert [record.shown_as for record in undo2.file_state.records("s1")] == ["t2.txt", "t3.txt"]
    store.close()
