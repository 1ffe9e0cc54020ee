"""SEARCH/REPLACE block parsing and the deterministic '... existing code ...' merge."""

from __future__ import annotations

import pytest

from hdsp_agent.tools.base import ToolError
from hdsp_agent.tools.builtin.edit.formats import (
    E_EDIT_AMBIGUOUS_MERGE,
    E_EDIT_MALFORMED,
    SearchReplaceBlock,
    has_markers,
    merge_with_markers,
    parse_search_replace,
)

# -- SEARCH/REPLACE ------------------------------------------------------------------------------------------


def test_parses_several_blocks_in_one_string_and_across_strings() -> None:
    first = "------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n\n------- SEARCH\nc\n=======\n+++++++ REPLACE\n"
    second = "```\n------- SEARCH\nd\ne\n=======\nf\n+++++++ REPLACE\n```"
    assert parse_search_replace([first, second]) == [
        SearchReplaceBlock("a\n", "b\n", 1),
        SearchReplaceBlock("c\n", "", 2),
        SearchReplaceBlock("d\ne\n", "f\n", 3),
    ]


def test_accepts_git_conflict_style_markers_and_crlf() -> None:
    diff = "<<<<<<< SEARCH\r\nold\r\n=======\r\nnew\r\n>>>>>>> REPLACE"
    assert parse_search_replace([diff]) == [SearchReplaceBlock("old\n", "new\n", 1)]


@pytest.mark.parametrize(
    ("diff", "problem"),
    [
        (
            "------- SEARCH\na\n+++++++ REPLACE",
            "block 1 (diffs[0] line 3): the SEARCH part has no '=======' line",
        ),
        ("------- SEARCH\na\n=======\nb", "block 1 in diffs[0] ends without '+++++++ REPLACE'"),
        ("------- SEARCH\na", "ends without '=======' and '+++++++ REPLACE'"),
        ("------- SEARCH\na\n=======\nb\n------- SEARCH", "the REPLACE part is not closed"),
        (
            "note: fixing\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE",
            "text outside a block ('note: fixing')",
        ),
        ("=======\nb\n+++++++ REPLACE", "'=======' without a '------- SEARCH' line before it"),
        ("", "no SEARCH/REPLACE blocks found"),
    ],
)
def test_malformed_blocks_are_a_clear_error(diff: str, problem: str) -> None:
    with pytest.raises(ToolError) as caught:
        parse_search_replace([diff])
    assert caught.value.code == E_EDIT_MALFORMED
    assert problem in caught.value.message
    assert caught.value.suggestion and "------- SEARCH" in caught.value.suggestion


def test_second_block_is_numbered_across_strings_in_errors() -> None:
    good = "------- SEARCH\na\n=======\nb\n+++++++ REPLACE"
    with pytest.raises(ToolError) as caught:
        parse_search_replace([good, "------- SEARCH\nx\n+++++++ REPLACE"])
    assert "block 2 (diffs[1] line 3)" in caught.value.message


# -- '... existing code ...' ---------------------------------------------------------------------------------

MARKER = "# ... existing code ...\n"
ORIGINAL = """import os

def add(a, b):
    return a + b

def subtract(a, b):
    return a + b

def main():
    print(add(1, 2))
"""


@pytest.mark.parametrize(
    "marker",
    [
        "# ... existing code ...",
        "// ... existing code ...",
        "/* ... existing code ... */",
        "<!-- ... rest of code -->",
        "    # ... rest of the file ...",
        "-- ... unchanged code ...",
    ],
)
def test_markers_in_any_comment_style_are_recognized(marker: str) -> None:
    assert has_markers(f"x = 1\n{marker}\ny = 2")


def test_plain_ellipses_are_not_markers() -> None:
    assert not has_markers("print('...')\nx = [...]\n# ...\n")


def test_merge_replaces_a_middle_section_between_markers() -> None:
    changes = "# ... existing code ...\ndef subtract(a, b):\n    return a - b\n\ndef main():\n" + MARKER
    assert merge_with_markers(ORIGINAL, changes) == ORIGINAL.replace(
        "return a + b\n\ndef main", "return a - b\n\ndef main"
    )


def test_merge_with_a_leading_chunk_and_a_trailing_marker() -> None:
    changes = "import os\nimport sys\n\ndef add(a, b):\n// ... rest of code ..."
    assert merge_with_markers(ORIGINAL, changes) == ORIGINAL.replace("import os\n", "import os\nimport sys\n")


def test_merge_with_a_leading_marker_and_a_trailing_chunk() -> None:
    changes = "# ... existing code ...\ndef main():\n    print(add(1, 2))\n    print('done')\n"
    assert merge_with_markers(ORIGINAL, changes) == ORIGINAL + "    print('done')\n"


def test_merge_keeps_the_files_final_newline_state() -> None:
    original = "a\nb\nc"
    assert merge_with_markers(original, "first\na\n# ... existing code ...\n") == "first\na\nb\nc"


def test_merge_refuses_a_boundary_line_that_fits_several_places() -> None:
    changes = "# ... existing code ...\n    return a + b\n    # checked\n    return a + b\n" + MARKER
    with pytest.raises(ToolError) as caught:
        merge_with_markers(ORIGINAL, changes)
    assert caught.value.code == E_EDIT_AMBIGUOUS_MERGE
    assert "fit several places (lines 4, 7)" in caught.value.message
    assert caught.value.suggestion and "single_find_and_replace" in caught.value.suggestion


def test_merge_refuses_a_changed_line_next_to_a_marker() -> None:
    changes = "# ... existing code ...\ndef subtract(a, b):\n    return a - b\n# ... existing code ...\n"
    with pytest.raises(ToolError) as caught:
        merge_with_markers(ORIGINAL, changes)
    assert caught.value.code == E_EDIT_AMBIGUOUS_MERGE
    assert "'return a - b', is not a line of the file" in caught.value.message


def test_merge_refuses_to_replace_far_more_lines_than_it_was_given() -> None:
    original = (
        "def f():\n" + "".join(f"    x{index} = {index}\n" for index in range(30)) + "    return 0\nrest\n"
    )
    changes = "def f():\n    return 0\n# ... existing code ...\n"
    with pytest.raises(ToolError) as caught:
        merge_with_markers(original, changes)
    assert "would replace lines 1-32 (32 lines) with 2 lines" in caught.value.message
