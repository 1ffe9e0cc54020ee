"""The edit tools through the real executor, on real files: what each one writes, refuses and reports."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from file_tools_harness import Harness, error_code

from hdsp_agent.tools.builtin.edit.tools import (
    CreateNewFileTool,
    EditExistingFileTool,
    MultiEditTool,
    SearchAndReplaceInFileTool,
    SingleFindAndReplaceTool,
)
from hdsp_agent.tools.definitions import parameters_schema


@pytest.mark.asyncio
async def test_replace_writes_the_file_and_reports_diff_and_prior_content(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def main():\n    print('hi')\n")
    harness = Harness(tmp_path)
    result = await harness.replace("app.py", "print('hi')", "print('hello')")
    assert result.status == "ok"
    assert (tmp_path / "app.py").read_text() == "def main():\n    print('hello')\n"
    assert result.content == (
        "Replaced 1 occurrence at line 2 (exact match).\n"
        "The changed lines now read:\n     1\tdef main():\n     2\t    print('hello')"
    )
    assert result.details["diff"] == (
        "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    print('hi')\n+    print('hello')\n"
    )
    assert result.details["prior_content"] == "def main():\n    print('hi')\n"
    assert result.details["prior_exists"] is True and result.details["path"] == "app.py"


@pytest.mark.asyncio
async def test_fuzzy_match_is_named_and_the_replacement_reindented(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("class A:\n    def f(self):\n        return 1\n")
    harness = Harness(tmp_path)
    result = await harness.replace("m.py", "def f(self):\n    return 1", "def f(self):\n    return 2\n")
    assert "indentation" in result.content and "re-indented" in result.content
    assert (tmp_path / "m.py").read_text() == "class A:\n    def f(self):\n        return 2\n"


@pytest.mark.asyncio
async def test_ambiguous_old_string_is_refused_with_line_numbers_and_replace_all_works(
    tmp_path: Path,
) -> None:
    (tmp_path / "x.py").write_text("n = 0\nprint(n)\nn = 0\n")
    harness = Harness(tmp_path)
    refused = await harness.replace("x.py", "n = 0", "n = 1")
    assert error_code(refused) == "E_EDIT_AMBIGUOUS" and "lines 1, 3" in (
        refused.error.message if refused.error else ""
    )
    result = await harness.replace("x.py", "n = 0", "n = 1", replace_all=True)
    assert result.content.startswith("Replaced 2 occurrences at lines 1, 3 (exact match).")
    assert (tmp_path / "x.py").read_text() == "n = 1\nprint(n)\nn = 1\n"


@pytest.mark.asyncio
async def test_identical_strings_and_missing_text_are_errors_with_suggestions(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("def load_config(path):\n    pass\n")
    harness = Harness(tmp_path)
    same = await harness.replace("x.py", "pass", "pass")
    assert error_code(same) == "E_EDIT_NO_CHANGE"
    missing = await harness.replace("x.py", "def load_confg(path):", "def load(path):")
    assert error_code(missing) == "E_EDIT_NO_MATCH"
    assert missing.error and missing.error.suggestion and "line 1" in missing.error.suggestion


@pytest.mark.asyncio
async def test_multi_edit_applies_edits_in_sequence(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("a = 1\nb = 2\n")
    result = await Harness(tmp_path).call(
        "multi_edit",
        {
            "filepath": "x.py",
            "edits": [
                {"old_string": "a = 1", "new_string": "a = 10"},
                {"old_string": "a = 10\nb", "new_string": "a = 10\nc"},
            ],
        },
    )
    assert result.status == "ok" and result.content.startswith(
        "Applied 2 edits: 1: line 1 (exact match); 2: lines 1-2"
    )
    assert (tmp_path / "x.py").read_text() == "a = 10\nc = 2\n"


@pytest.mark.asyncio
async def test_multi_edit_is_all_or_nothing(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("a = 1\nb = 2\n")
    result = await Harness(tmp_path).call(
        "multi_edit",
        {
            "filepath": "x.py",
            "edits": [
                {"old_string": "a = 1", "new_string": "a = 10"},
                {"old_string": "zzz", "new_string": "y"},
            ],
        },
    )
    assert error_code(result) == "E_EDIT_NO_MATCH"
    assert result.error and result.error.message.startswith("edit 2 of 2: edits[1].old_string was not found")
    assert "no edit was applied" in result.error.message
    assert (tmp_path / "x.py").read_text() == "a = 1\nb = 2\n"


@pytest.mark.asyncio
async def test_search_and_replace_blocks_apply_in_order_and_empty_replace_deletes(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("import os\nimport sys\n\nprint(os.name)\n")
    diffs = [
        "------- SEARCH\nimport sys\n=======\n+++++++ REPLACE\n\n"
        "------- SEARCH\nprint(os.name)\n=======\nprint(os.sep)\n+++++++ REPLACE"
    ]
    result = await Harness(tmp_path).call("search_and_replace_in_file", {"filepath": "x.py", "diffs": diffs})
    assert result.status == "ok" and result.content.startswith("Applied 2 blocks")
    assert (tmp_path / "x.py").read_text() == "import os\n\nprint(os.sep)\n"


@pytest.mark.asyncio
async def test_search_and_replace_refuses_malformed_or_unmatched_blocks_changing_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "x.py").write_text("a = 1\nb = 2\n")
    harness = Harness(tmp_path)
    malformed = await harness.call(
        "search_and_replace_in_file",
        {"filepath": "x.py", "diffs": ["------- SEARCH\na = 1\n+++++++ REPLACE"]},
    )
    assert error_code(malformed) == "E_EDIT_MALFORMED"
    good = "------- SEARCH\na = 1\n=======\na = 5\n+++++++ REPLACE"
    unmatched = await harness.call(
        "search_and_replace_in_file",
        {"filepath": "x.py", "diffs": [good, "------- SEARCH\nc = 3\n=======\nc = 4\n+++++++ REPLACE"]},
    )
    assert error_code(unmatched) == "E_EDIT_NO_MATCH"
    assert (
        unmatched.error
        and "SEARCH block 2" in unmatched.error.message
        and "no block was applied" in unmatched.error.message
    )
    assert (tmp_path / "x.py").read_text() == "a = 1\nb = 2\n"


SOURCE = "import os\n\ndef add(a, b):\n    return a + b\n\ndef main():\n    print(add(1, 2))\n"


@pytest.mark.asyncio
async def test_edit_existing_file_with_full_content(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(SOURCE)
    result = await Harness(tmp_path).call(
        "edit_existing_file", {"filepath": "calc.py", "changes": "print('replaced')"}
    )
    assert result.status == "ok" and "replaced the whole content" in result.content
    assert (tmp_path / "calc.py").read_text() == "print('replaced')\n"


@pytest.mark.asyncio
async def test_edit_existing_file_merges_existing_code_markers(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(SOURCE)
    changes = "# ... existing code ...\ndef main():\n    print(add(1, 2))\n    print(add(3, 4))\n"
    result = await Harness(tmp_path).call("edit_existing_file", {"filepath": "calc.py", "changes": changes})
    assert result.status == "ok" and "markers" in result.content
    assert (tmp_path / "calc.py").read_text() == SOURCE + "    print(add(3, 4))\n"
    assert "+    print(add(3, 4))" in result.details["diff"]


@pytest.mark.asyncio
async def test_edit_existing_file_refuses_an_ambiguous_merge(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(SOURCE + "\ndef add2(a, b):\n    return a + b\n")
    changes = "// ... existing code ...\n    return a + b\n    # done\n// ... existing code ...\n"
    result = await Harness(tmp_path).call("edit_existing_file", {"filepath": "calc.py", "changes": changes})
    assert error_code(result) == "E_EDIT_AMBIGUOUS_MERGE"
    assert result.error and result.error.suggestion and "single_find_and_replace" in result.error.suggestion


@pytest.mark.asyncio
async def test_edit_existing_file_refuses_a_fragment_without_markers(tmp_path: Path) -> None:
    source = "".join(f"line_{n} = {n}\n" for n in range(40))
    (tmp_path / "big.py").write_text(source)
    result = await Harness(tmp_path).call(
        "edit_existing_file", {"filepath": "big.py", "changes": "line_3 = 3\nline_4 = 44\n"}
    )
    assert error_code(result) == "E_EDIT_LOOKS_LIKE_FRAGMENT"
    assert (tmp_path / "big.py").read_text() == source


@pytest.mark.asyncio
async def test_create_new_file_makes_parent_directories_and_shows_the_content_as_a_diff(
    tmp_path: Path,
) -> None:
    harness = Harness(tmp_path)
    result = await harness.call(
        "create_new_file", {"filepath": "pkg/sub/mod.py", "contents": "x = 1\ny = 2\n"}
    )
    assert result.status == "ok" and result.content.startswith("Created pkg/sub/mod.py (2 lines).")
    assert (tmp_path / "pkg" / "sub" / "mod.py").read_text() == "x = 1\ny = 2\n"
    assert (
        harness.approver.requests[0].preview
        == "--- /dev/null\n+++ b/pkg/sub/mod.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
    )
    assert result.details["prior_exists"] is False and result.details["prior_content"] is None


@pytest.mark.asyncio
async def test_create_new_file_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep")
    harness = Harness(tmp_path)
    result = await harness.call("create_new_file", {"filepath": "a.txt", "contents": "new"})
    assert error_code(result) == "E_FILE_EXISTS" and (tmp_path / "a.txt").read_text() == "keep"
    assert result.error and result.error.suggestion and "single_find_and_replace" in result.error.suggestion
    assert harness.approver.requests == []


@pytest.mark.asyncio
async def test_create_new_file_accepts_only_valid_notebooks(tmp_path: Path) -> None:
    harness = Harness(tmp_path)
    empty = await harness.call("create_new_file", {"filepath": "new.ipynb", "contents": ""})
    assert empty.status == "ok"
    assert nbformat.read(tmp_path / "new.ipynb", as_version=4).cells == []
    invalid = await harness.call("create_new_file", {"filepath": "bad.ipynb", "contents": '{"cells": 3}'})
    assert error_code(invalid) == "E_NOTEBOOK_AS_TEXT" and not (tmp_path / "bad.ipynb").exists()


MODIFY_PATH = {"description": "Path relative to the project root.", "type": "string"}


def test_create_new_file_schema_snapshot() -> None:
    assert parameters_schema(CreateNewFileTool()) == {
        "additionalProperties": False,
        "properties": {
            "filepath": MODIFY_PATH,
            "contents": {"description": "The file's content.", "type": "string"},
        },
        "required": ["filepath", "contents"],
        "type": "object",
    }


def test_single_find_and_replace_schema_snapshot() -> None:
    assert parameters_schema(SingleFindAndReplaceTool()) == {
        "additionalProperties": False,
        "properties": {
            "filepath": MODIFY_PATH,
            "old_string": {
                "description": "Exact text from the file, with enough context to be unique.",
                "type": "string",
            },
            "new_string": {"description": "The replacement.", "type": "string"},
            "replace_all": {"default": False, "description": "Replace every occurrence.", "type": "boolean"},
        },
        "required": ["filepath", "old_string", "new_string"],
        "type": "object",
    }


def test_multi_edit_schema_snapshot() -> None:
    assert parameters_schema(MultiEditTool()) == {
        "additionalProperties": False,
        "properties": {
            "filepath": MODIFY_PATH,
            "edits": {
                "description": "Applied in order; each sees the result of the ones before.",
                "items": {
                    "additionalProperties": False,
                    "properties": {
                        "old_string": {"description": "Exact text from the file.", "type": "string"},
                        "new_string": {"description": "The replacement.", "type": "string"},
                        "replace_all": {
                            "default": False,
                            "description": "Replace every occurrence.",
                            "type": "boolean",
                        },
                    },
                    "required": ["old_string", "new_string"],
                    "type": "object",
                },
                "minItems": 1,
                "type": "array",
            },
        },
        "required": ["filepath", "edits"],
        "type": "object",
    }


def test_search_and_replace_in_file_schema_snapshot() -> None:
    assert parameters_schema(SearchAndReplaceInFileTool()) == {
        "additionalProperties": False,
        "properties": {
            "filepath": MODIFY_PATH,
            "diffs": {
                "description": "SEARCH/REPLACE "
                "blocks, "
                "each:\n"
                "------- "
                "SEARCH\n"
                "[exact "
                "lines]\n"
                "=======\n"
                "[new "
                "lines]\n"
                "+++++++ "
                "REPLACE",
                "items": {"type": "string"},
                "minItems": 1,
                "type": "array",
            },
        },
        "required": ["filepath", "diffs"],
        "type": "object",
    }


def test_edit_existing_file_schema_snapshot() -> None:
    assert parameters_schema(EditExistingFileTool()) == {
        "additionalProperties": False,
        "properties": {
            "filepath": MODIFY_PATH,
            "changes": {
                "description": "The "
                "whole "
                "new "
                "file, "
                "or "
                "the "
                "changed "
                "parts "
                "with "
                "unchanged "
                "runs "
                "replaced "
                "by "
                "a "
                "comment "
                "line "
                "'... "
                "existing "
                "code "
                "...' "
                "(e.g. "
                "'# "
                "... "
                "existing "
                "code "
                "...').",
                "type": "string",
            },
        },
        "required": ["filepath", "changes"],
        "type": "object",
    }
