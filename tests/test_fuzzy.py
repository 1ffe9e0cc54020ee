"""The matcher behind the edit tools: each pass finds what it should, uniquely and in proportion."""

from __future__ import annotations

import pytest

from hdsp_agent.tools.base import ToolError
from hdsp_agent.tools.builtin.edit.comments import code_of_lines, comment_syntax_for
from hdsp_agent.tools.builtin.edit.fuzzy import (
    E_EDIT_AMBIGUOUS,
    E_EDIT_DISPROPORTIONATE,
    E_EDIT_EMPTY_OLD,
    E_EDIT_NO_CHANGE,
    E_EDIT_NO_MATCH,
    PASS_NOTES,
    PASSES,
    apply_edit,
    rebase,
    unescape,
)
from hdsp_agent.tools.builtin.edit.indentation import IndentStyle, detect_style


def refused(text: str, old: str, new: str, *, replace_all: bool = False) -> ToolError:
    with pytest.raises(ToolError) as caught:
        apply_edit(text, old, new, replace_all=replace_all)
    return caught.value


# The passes one by one, each with must-match and must-refuse cases, are in the case table
# (tests/edit_cases.py, run by tests/test_edit_cases.py).


def test_passes_run_from_strict_to_loose_in_seed_004_order() -> None:
    assert [name for name, _ in PASSES] == [
        "exact",
        "trimmed",
        "line_whitespace",
        "tabs_spaces",
        "line_endings",
        "escapes",
        "collapsed_spaces",
        "comments_ignored",
        "block_anchor_fuzzy",
        "tokens_only",
    ]
    assert set(PASS_NOTES) == {name for name, _ in PASSES} | {"empty_file"}


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
    assert outcome.pass_name == "block_anchor_fuzzy"
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


SPACES4 = IndentStyle(" ", 4)
SPACES2 = IndentStyle(" ", 2)
TABS = IndentStyle("\t", 4)


def test_rebase_leaves_text_alone_when_indentation_agrees() -> None:
    assert rebase(["  a", "    b"], "  ", "  ", SPACES2, SPACES2) == ["  a", "    b"]


def test_rebase_writes_levels_as_tabs_when_the_file_uses_tabs() -> None:
    assert rebase(["    a", "        b", "    c"], "    ", "\t", SPACES4, TABS) == ["\ta", "\t\tb", "\tc"]


def test_rebase_turns_two_space_levels_into_four_space_levels() -> None:
    assert rebase(["a", "  b", "    c"], "", "    ", SPACES2, SPACES4) == [
        "    a",
        "        b",
        "            c",
    ]


def test_rebase_moves_lines_shallower_than_the_reference_out_by_whole_levels() -> None:
    assert rebase(["        a", "    b"], "        ", "\t\t", SPACES4, TABS) == ["\t\ta", "\tb"]


def test_rebase_keeps_alignment_spaces_in_a_space_file() -> None:
    assert rebase(["x(a,", "  b)"], "", "  ", SPACES4, SPACES2) == ["  x(a,", "    b)"]


def test_rebase_into_tabs_rounds_alignment_to_whole_levels_never_mixing() -> None:
    assert rebase(["x(a,", "  b)", " c)"], "", "\t", SPACES4, TABS) == ["\tx(a,", "\t\tb)", "\tc)"]


def test_detect_style_prefers_tabs_and_reads_the_common_step() -> None:
    assert detect_style(["if a:", "\tb", "\t\tc"]) == TABS
    assert detect_style(["if a:", "  b", "    c", "  d", "      (aligned)"]) == SPACES2
    assert detect_style(["a", "b"]) is None


def test_unescape_turns_two_character_escapes_into_characters() -> None:
    assert unescape('a\\nb\\t\\"c\\"\\\\') == 'a\nb\t"c"\\'


def test_a_near_block_with_a_different_middle_is_not_called_disproportionate() -> None:
    text = "".join(f"}}\nelse:\n    x{index} = compute({index})\n" for index in range(50))
    error = refused(text, "}\n    totally_different_line_here = 1\n    other = 2\nelse:", "pass")
    assert error.code == E_EDIT_NO_MATCH


def test_code_of_lines_skips_strings_and_follows_block_comments_across_lines() -> None:
    js = comment_syntax_for("a.js")
    lines = [
        'const a = "http://x"; // c',
        "x = 1 /* start",
        "still",
        "end */ y = 2",
        "s = 'it\\'s // no' // yes",
    ]
    assert code_of_lines(lines, js) == ['const a = "http://x";', "x = 1", "", "y = 2", "s = 'it\\'s // no'"]
    assert code_of_lines(['x = "# no"  # yes', "# all"], comment_syntax_for("a.py")) == ['x = "# no"', ""]
    assert code_of_lines(["a { color: #fff; } /* c */"], comment_syntax_for("s.css")) == [
        "a { color: #fff; }"
    ]
