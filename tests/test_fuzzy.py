"""The matcher behind the edit tools: each pass finds what it should, uniquely and in proportion."""

from __future__ import annotations

import pytest

from hdsp_agent.tools.base import ToolError
from hdsp_agent.tools.builtin.edit.fuzzy import (
    E_EDIT_AMBIGUOUS,
    E_EDIT_DISPROPORTIONATE,
    E_EDIT_EMPTY_OLD,
    E_EDIT_NO_CHANGE,
    E_EDIT_NO_MATCH,
    PASSES,
    apply_edit,
    reindent,
    unescape,
)


def refused(text: str, old: str, new: str, *, replace_all: bool = False) -> ToolError:
    with pytest.raises(ToolError) as caught:
        apply_edit(text, old, new, replace_all=replace_all)
    return caught.value


# -- one positive and one negative case per pass -------------------------------------------------------------


def test_exact_pass_replaces_the_literal_text() -> None:
    outcome = apply_edit("a = 1\nb = 2\n", "b = 2", "b = 3")
    assert (outcome.text, outcome.pass_name, outcome.count) == ("a = 1\nb = 3\n", "exact", 1)


def test_exact_pass_is_case_and_character_exact() -> None:
    assert refused("A = 1\n", "a = 1", "a = 2").code == E_EDIT_NO_MATCH


def test_trimmed_boundary_pass_ignores_blank_lines_around_old_string() -> None:
    outcome = apply_edit("a = 1\n  x = 1\nb\n", "\n  x = 1\n\n", "\n  x = 2\n  y = 3\n\n")
    assert outcome.pass_name == "trimmed_boundary"
    assert outcome.text == "a = 1\n  x = 2\n  y = 3\nb\n"


def test_trimmed_boundary_pass_still_needs_the_inner_text_exactly() -> None:
    # The inner text differs in spacing: trimming the boundary is not enough, a looser pass has to match it.
    outcome = apply_edit("a = 1\n  x = 1\n", "\n  x =  1\n", "\n  x = 2\n")
    assert outcome.pass_name == "whitespace_normalized"
    assert outcome.text == "a = 1\n  x = 2\n"


def test_indentation_flexible_pass_shifts_the_replacement_to_the_files_indentation() -> None:
    text = "class A:\n    def f(self):\n        return 1\n"
    outcome = apply_edit(text, "def f(self):\n    return 1", "def f(self):\n    if x:\n        return 2")
    assert outcome.pass_name == "indentation_flexible"
    assert outcome.text == "class A:\n    def f(self):\n        if x:\n            return 2\n"


def test_indentation_flexible_pass_keeps_relative_indentation_significant() -> None:
    # Same lines, but old_string nests the second line deeper than the file does: not this pass.
    outcome = apply_edit("if a:\n    b()\n", "if a:\n        b()", "if a:\n        c()")
    assert outcome.pass_name == "line_trimmed"


def test_line_trimmed_pass_maps_each_indentation_level_onto_the_file() -> None:
    text = "if a:\n    b()\n    c()\n"
    outcome = apply_edit(text, "if a:\n  b()\n  c()", "if a:\n  b()\n  if d:\n    e()")
    assert outcome.pass_name == "line_trimmed"
    # Two-space levels in old_string become the file's four-space levels.
    assert outcome.text == "if a:\n    b()\n    if d:\n      e()\n"


def test_line_trimmed_pass_needs_every_line_to_match() -> None:
    error = refused("if a:\n    b()\n    c()\n", "if a:\n  b()\n  x()", "if a:\n  pass")
    assert error.code == E_EDIT_NO_MATCH


def test_escape_normalized_pass_reads_doubly_escaped_newlines_and_quotes() -> None:
    outcome = apply_edit('x = "a"\ny = 2\n', 'x = \\"a\\"\\ny = 2', 'x = \\"b\\"\\ny = 2')
    assert outcome.pass_name == "escape_normalized"
    assert outcome.text == 'x = "b"\ny = 2\n'


def test_escape_normalized_pass_does_not_invent_text() -> None:
    assert refused("x = 1\ny = 2\n", "x = 1\\ny = 3", "x = 0").code == E_EDIT_NO_MATCH


def test_whitespace_normalized_pass_ignores_runs_of_spaces() -> None:
    outcome = apply_edit("def f():\n    x  =  compute(1)\n", "x = compute(1)", "x = compute(2)")
    assert outcome.pass_name == "whitespace_normalized"
    assert outcome.text == "def f():\n    x = compute(2)\n"


def test_whitespace_normalized_pass_does_not_drop_whitespace_entirely() -> None:
    assert refused("x = 1\n", "x=1", "x=2").code == E_EDIT_NO_MATCH


def test_block_anchor_pass_accepts_a_similar_middle_between_exact_first_and_last_lines() -> None:
    text = "def f():\n    x = compute(1)\n    return x\n"
    outcome = apply_edit(
        text, "def f():\n    x = compute(2)\n    return x", "def f():\n    x = compute(3)\n    return x"
    )
    assert outcome.pass_name == "block_anchor"
    assert outcome.text == "def f():\n    x = compute(3)\n    return x\n"


def test_block_anchor_pass_refuses_a_dissimilar_middle() -> None:
    text = "def f():\n    x = compute(1)\n    return x\n"
    error = refused(
        text, "def f():\n    totally_unrelated_statement_here()\n    return x", "def f():\n    return 0"
    )
    assert error.code == E_EDIT_NO_MATCH


CONTEXT_FILE = (
    "def f():\n  a = 1\n  b = 2\n"
    "  c = completely_different_function_call(argument_one, argument_two)\n"
    "  d = another_very_different_thing(with_many, arguments_here)\n  return 0\n"
)


def test_context_aware_pass_accepts_anchors_with_most_middle_lines_equal() -> None:
    old = "def f():\n  a = 1\n  b = 2\n  c = 3\n  d = 4\n  return 0"
    outcome = apply_edit(CONTEXT_FILE, old, "def f():\n  pass\n  return 0")
    assert outcome.pass_name == "context_aware"
    assert outcome.text == "def f():\n  pass\n  return 0\n"


def test_context_aware_pass_needs_half_the_middle_lines() -> None:
    old = "def f():\n  a = 9\n  b = 9\n  c = 3\n  d = 4\n  return 0"
    assert refused(CONTEXT_FILE, old, "def f():\n  return 0").code == E_EDIT_NO_MATCH


def test_every_pass_is_covered_above() -> None:
    assert [name for name, _ in PASSES] == [
        "exact",
        "trimmed_boundary",
        "indentation_flexible",
        "line_trimmed",
        "escape_normalized",
        "whitespace_normalized",
        "block_anchor",
        "context_aware",
    ]


# -- uniqueness, proportion, errors --------------------------------------------------------------------------


def test_several_matches_are_refused_with_their_line_numbers() -> None:
    error = refused("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 3")
    assert error.code == E_EDIT_AMBIGUOUS
    assert "2 places" in error.message and "lines 1, 3" in error.message
    assert error.suggestion and "replace_all" in error.suggestion


def test_a_fuzzy_pass_is_refused_too_when_it_matches_several_places() -> None:
    error = refused("if a:\n    b()\nif a:\n    b()\n", "if a:\n  b()", "if a:\n  c()")
    assert error.code == E_EDIT_AMBIGUOUS and "lines 1, 3" in error.message


def test_replace_all_replaces_every_occurrence() -> None:
    outcome = apply_edit("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 3", replace_all=True)
    assert outcome.text == "x = 3\ny = 2\nx = 3\n" and outcome.count == 2
    assert outcome.old_line_ranges == [(1, 1), (3, 3)]


def test_disproportionate_match_is_refused() -> None:
    body = "".join(f"    x{index} = {index}\n" for index in range(38))
    text = "def f():\n" + body + "    return x\n"
    error = refused(text, "def f():\n    y = 0\n    return x", "def f():\n    return 0")
    assert error.code == E_EDIT_DISPROPORTIONATE
    assert "3 lines" in error.message and "lines 1-40" in error.message


def test_block_anchor_accepts_a_block_slightly_longer_than_old_string() -> None:
    text = "def f():\n    x = compute(1)\n    y = 2\n    return x\n"
    outcome = apply_edit(text, "def f():\n    x = compute(1)\n    return x", "def f():\n    return 0")
    assert outcome.pass_name == "block_anchor"
    assert outcome.text == "def f():\n    return 0\n"


def test_identical_old_and_new_are_refused() -> None:
    assert refused("a\n", "a", "a").code == E_EDIT_NO_CHANGE


def test_empty_old_string_is_refused() -> None:
    assert refused("a\n", "", "b").code == E_EDIT_EMPTY_OLD


def test_not_found_points_at_the_most_similar_line() -> None:
    error = refused(
        "import os\ndef load_config(path):\n    pass\n", "def load_confg(path):", "def load(path):"
    )
    assert error.code == E_EDIT_NO_MATCH
    assert error.suggestion and "line 2" in error.suggestion and "load_config" in error.suggestion


def test_whole_line_deletion_takes_its_line_break() -> None:
    outcome = apply_edit("a\n    b = 1\nc\n", "  b  =  1", "")  # whitespace_normalized, empty replacement
    assert outcome.text == "a\nc\n"


def test_new_line_ranges_follow_earlier_replacements() -> None:
    outcome = apply_edit("x\ny\nx\n", "x", "x1\nx2", replace_all=True)
    assert outcome.text == "x1\nx2\ny\nx1\nx2\n"
    assert outcome.new_line_ranges == [(1, 2), (4, 5)]


def test_reindent_leaves_text_alone_when_indentation_agrees() -> None:
    assert reindent(["  a", "    b"], (("  ", "  "),)) == ["  a", "    b"]


def test_reindent_maps_tabs_when_the_file_uses_tabs() -> None:
    assert reindent(["    a", "        b"], (("    ", "\t"), ("        ", "\t\t"))) == ["\ta", "\t\tb"]


def test_unescape_turns_two_character_escapes_into_characters() -> None:
    assert unescape('a\\nb\\t\\"c\\"\\\\') == 'a\nb\t"c"\\'


def test_a_near_block_with_a_different_middle_is_not_called_disproportionate() -> None:
    text = "".join(f"}}\nelse:\n    x{index} = compute({index})\n" for index in range(50))
    error = refused(text, "}\n    totally_different_line_here = 1\n    other = 2\nelse:", "pass")
    assert error.code == E_EDIT_NO_MATCH
