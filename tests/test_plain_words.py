"""The words the user reads about tools, cells and undo conflicts are plain: no tool names, no cell ids
(issue 28, problem 5). The sidebar shows these strings as they come (translated from the same templates)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
from test_notebook_tools import Agent, RecordingApprover, write_notebook
from test_user_text import korean

from hdsp_agent.agent.undo import UndoConflict, UndoConflicts
from hdsp_agent.documents.edits import cell_words
from hdsp_agent.permissions.defaults import default_level
from hdsp_agent.tools.builtin import builtin_tools
from hdsp_agent.tools.facts import known_facts
from hdsp_agent.user_text import UserText, collect_texts

CELL_ID = "aec4de07"


def test_a_cell_is_named_by_its_number_and_first_line() -> None:
    assert cell_words(3, "\n  df = load('data.csv')\nprint(df)") == "cell 4 (df = load('data.csv'))"
    assert cell_words(0, "") == "cell 1"
    long = cell_words(9, "x = " + "1" * 80)
    assert str(long).startswith("cell 10 (x = 111") and str(long).endswith("…)")
    assert len(str(long)) < 60
    assert cell_words(None, "y = 2") == "a cell (y = 2)"
    # Translatable: the template and its parameters travel with the text.
    assert isinstance(cell_words(3, "a"), UserText)
    assert cell_words(3, "a").template == "cell %1 (%2)"


def test_every_built_in_tool_has_words_and_its_reason_names_no_tool() -> None:
    names = set(known_facts())
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    pattern = re.compile(rf"\b({alternatives})\b")
    for name, facts in known_facts().items():
        assert facts.words is not None, f"{name} has no words for its cards"
        for text in (facts.words.question, facts.words.statement):
            assert not pattern.search(text), f"{name}'s words name a tool: {text!r}"
        if facts.ask_reason:
            level, reason = default_level(name, None)
            assert level == "ask"
            assert not pattern.search(reason), f"{name}'s reason names a tool: {reason!r}"
            assert "%" not in reason


def test_an_undo_conflict_names_the_cell_by_number_once() -> None:
    conflict = UndoConflict(
        "analysis.ipynb",
        CELL_ID,
        UserText("the cell was edited after the agent changed it"),
        cell_words(3, "df.head()"),
    )
    error = UndoConflicts([conflict, UndoConflict("notes.txt", None, UserText("it changed"))])
    message = error.args[0]
    assert str(message) == (
        "some of it changed since: cell 4 (df.head()) of analysis.ipynb: the cell was edited after the "
        "agent changed it; notes.txt: it changed"
    )
    assert CELL_ID not in str(message)
    # Every part is translatable (the sidebar shows the notice from the catalog, in Korean too).
    texts = collect_texts(message)
    assert "cell %1 (%2)" in {ref.id for ref in texts.values()}
    assert "the cell was edited after the agent changed it" in {ref.id for ref in texts.values()}


async def test_approval_cards_name_cells_by_number_and_files_relative_in_english_and_korean(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    """What a card shows (question's subject, reasons, preview) for cell tools addressed by id and for a file
    given by its absolute path: "cell 2 (df.describe())", "analysis.ipynb", "data/notes.txt", never an id,
    a tool name or the server's absolute root, in English and in Korean."""
    path = write_notebook(jp_root_dir, "analysis.ipynb", "import pandas as pd", "df.describe()", "df.plot()")
    ids = [cell.id for cell in nbformat.read(path, as_version=4).cells]
    (jp_root_dir / "data").mkdir()
    (jp_root_dir / "data" / "notes.txt").write_text("old\n")
    approver = RecordingApprover(approve=False)
    agent = Agent(jp_serverapp, jp_root_dir, approver=approver)
    agent.executor.registry.register(next(t for t in builtin_tools() if t.name == "single_find_and_replace"))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("delete_cell", {"path": "analysis.ipynb", "cell_id": ids[1]}),
        ("move_cell", {"path": "analysis.ipynb", "cell_id": ids[2], "to_index": 0}),
        ("run_cell", {"path": "analysis.ipynb", "cell_id": ids[1]}),
        (
            "edit_cell",
            {"path": "analysis.ipynb", "cell_id": ids[1], "old_string": "describe", "new_string": "head"},
        ),
        (
            "single_find_and_replace",
            {"filepath": str(jp_root_dir / "data" / "notes.txt"), "old_string": "old", "new_string": "new"},
        ),
    ]
    for name, arguments in calls:
        assert (await agent.call(name, **arguments)).status == "denied", name
    requests = approver.requests
    assert [request.reasons[0] for request in requests[:4]] == [
        "deletes cell 2 (df.describe()) of analysis.ipynb",
        "moves cell 3 (df.plot()) of analysis.ipynb to position 1",
        "runs code in cell 2 (df.describe()) of analysis.ipynb",
        "changes cell 2 (df.describe()) of analysis.ipynb",
    ]
    assert [request.preview for request in requests[:3]] == ["df.describe()", "df.plot()", "df.describe()"]
    assert requests[4].action_target == "data/notes.txt"
    tool_names = re.compile(r"\b(" + "|".join(re.escape(name) for name in known_facts()) + r")\b")
    root = str(jp_root_dir)
    for request in requests:
        texts = request.model_dump()["texts"]
        shown = [*request.reasons, request.preview or "", request.action_target or ""]
        for language, words in (("en", shown), ("ko", [korean(text, texts) for text in shown])):
            for text in words:
                assert not any(cell_id in text for cell_id in ids), (language, request.tool, text)
                assert root not in text, (language, request.tool, text)
                assert not tool_names.search(text), (language, request.tool, text)
                assert not re.search(r"\bE_[A-Z_]+", text), (language, request.tool, text)
        if request.tool != "single_find_and_replace":
            assert korean(request.reasons[0], texts).startswith("analysis.ipynb의 셀 ")
