"""The words the user reads about tools, cells and undo conflicts are plain: no tool names, no cell ids
(issue 28, problem 5). The sidebar shows these strings as they come (translated from the same templates)."""

from __future__ import annotations

import re

from hdsp_agent.agent.undo import UndoConflict, UndoConflicts
from hdsp_agent.documents.edits import cell_words
from hdsp_agent.permissions.defaults import default_level
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
