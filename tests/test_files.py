"""read_file, read_file_range and read_currently_open_file through the real executor, on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from file_tools_harness import read_call, write_notebook

from hdsp_agent.tools.builtin.edit.filestate import FileStateStore
from hdsp_agent.tools.builtin.files import (
    ReadCurrentlyOpenFileTool,
    ReadFileRangeTool,
    ReadFileTool,
    ReadLimits,
)
from hdsp_agent.tools.definitions import parameters_schema

REPO_ROOT = Path(__file__).resolve().parent.parent


# -- text ----------------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_reads_numbered_lines_like_cat_n(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("import os\n\nprint(os.getcwd())\n")
    result = await read_call(tmp_path, "read_file", {"filepath": "x.py"})
    assert result.status == "ok"
    assert result.content == "     1\timport os\n     2\t\n     3\tprint(os.getcwd())"
    assert result.details["total_lines"] == 3


@pytest.mark.asyncio
async def test_stops_at_2000_lines_and_says_how_to_read_on(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x\n" * 2500)
    result = await read_call(tmp_path, "read_file", {"filepath": "big.txt"})
    lines = result.content.split("\n")
    assert lines[1999] == "  2000\tx" and len(lines) == 2001
    assert lines[-1] == (
        "[Showing lines 1-2000 of 2500 (2000 lines at a time). Read on with read_file_range "
        '{"filepath": "big.txt", "startLine": 2001, "endLine": 2500}.]'
    )
    assert result.details["truncated"] is True


@pytest.mark.asyncio
async def test_cuts_long_lines_at_2000_characters(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("a" * 2500 + "\nshort\n")
    result = await read_call(tmp_path, "read_file", {"filepath": "min.js"})
    first, second, note = result.content.split("\n")
    assert first == "     1\t" + "a" * 2000 + " [... line cut: 500 more chars]"
    assert second == "     2\tshort"
    assert note.startswith("[1 line(s) longer than 2,000 characters were cut")


@pytest.mark.asyncio
async def test_stops_before_the_output_budget_with_a_read_on_note(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 100 + "\n") * 400)
    result = await read_call(tmp_path, "read_file", {"filepath": "wide.txt"})
    assert "(the output limit)" in result.content
    assert len(result.content) < 26_000 and "output_cut" not in result.details
    last_shown = result.details["end_line"]
    assert f'"startLine": {last_shown + 1}' in result.content


@pytest.mark.asyncio
async def test_read_file_range_returns_the_requested_lines(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = await read_call(tmp_path, "read_file_range", {"filepath": "x.txt", "startLine": 3, "endLine": 5})
    assert result.content == "     3\tline 3\n     4\tline 4\n     5\tline 5"


@pytest.mark.asyncio
async def test_read_file_range_past_the_end_is_clamped_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("a\nb\nc\n")
    result = await read_call(
        tmp_path, "read_file_range", {"filepath": "x.txt", "startLine": 2, "endLine": 50}
    )
    assert result.content == "     2\tb\n     3\tc\n[x.txt has 3 lines; showing 2-3.]"


@pytest.mark.asyncio
async def test_read_file_range_caps_a_window_larger_than_the_limit(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("z\n" * 30)
    limits = ReadLimits(max_lines=10)
    result = await read_call(
        tmp_path, "read_file_range", {"filepath": "x.txt", "startLine": 5, "endLine": 30}, limits=limits
    )
    assert result.content.endswith('{"filepath": "x.txt", "startLine": 15, "endLine": 24}.]')


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (9, 12, "startLine 9 is past the end of x.txt, which has 3 lines"),
        (3, 2, "endLine 2 is before startLine 3"),
    ],
)
@pytest.mark.asyncio
async def test_read_file_range_rejects_impossible_ranges(
    tmp_path: Path, start: int, end: int, message: str
) -> None:
    (tmp_path / "x.txt").write_text("a\nb\nc\n")
    result = await read_call(
        tmp_path, "read_file_range", {"filepath": "x.txt", "startLine": start, "endLine": end}
    )
    assert (
        result.error is not None and result.error.code == "E_LINE_RANGE" and message in result.error.message
    )


@pytest.mark.asyncio
async def test_read_file_range_rejects_line_zero_at_validation(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("a\n")
    result = await read_call(tmp_path, "read_file_range", {"filepath": "x.txt", "startLine": 0, "endLine": 1})
    assert result.error is not None and result.error.code == "E_TOOL_INVALID_ARGS"


@pytest.mark.asyncio
async def test_bom_and_crlf_are_not_shown(tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    result = await read_call(tmp_path, "read_file", {"filepath": "win.txt"})
    assert result.content == "     1\tone\n     2\ttwo"


@pytest.mark.asyncio
async def test_invalid_utf8_is_shown_with_replacement_characters_and_a_note(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("café\n".encode("latin-1"))
    result = await read_call(tmp_path, "read_file", {"filepath": "latin.txt"})
    assert "caf\ufffd" in result.content and "not valid UTF-8" in result.content


@pytest.mark.asyncio
async def test_empty_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("")
    result = await read_call(tmp_path, "read_file", {"filepath": "empty.py"})
    assert result.content == "(empty.py is empty)"


# -- what is not plain text ----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_binary_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "model.bin").write_bytes(b"\x00\x01\x02binary" * 100)
    result = await read_call(tmp_path, "read_file", {"filepath": "model.bin"})
    assert result.error is not None and result.error.code == "E_BINARY_FILE"
    assert "binary file (900 bytes)" in result.error.message


@pytest.mark.asyncio
async def test_mostly_control_bytes_count_as_binary(tmp_path: Path) -> None:
    (tmp_path / "blob.dat").write_bytes(bytes([1, 2, 3, 4, 5, 6, 65]) * 200)
    result = await read_call(tmp_path, "read_file", {"filepath": "blob.dat"})
    assert result.error is not None and result.error.code == "E_BINARY_FILE"


# -- paths ---------------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_missing_file_suggests_similar_paths_respecting_gitignore(tmp_path: Path) -> None:
    (tmp_path / "src" / "utils").mkdir(parents=True)
    (tmp_path / "src" / "utils" / "helper.py").write_text("")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "helper.py").write_text("")
    (tmp_path / ".gitignore").write_text("build/\n")
    result = await read_call(tmp_path, "read_file", {"filepath": "src/utils/helpr.py"})
    assert result.error is not None and result.error.code == "E_PATH_NOT_FOUND"
    assert result.error.suggestion is not None
    assert "src/utils/helper.py" in result.error.suggestion and "build/" not in result.error.suggestion


@pytest.mark.asyncio
async def test_missing_file_without_anything_similar_points_at_search(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("")
    result = await read_call(tmp_path, "read_file", {"filepath": "zzzzqqqq/wholly_unrelated_name.cfg"})
    assert result.error is not None and result.error.suggestion == "Use ls or file_glob_search to find it."


@pytest.mark.asyncio
async def test_a_directory_is_refused_with_advice(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    result = await read_call(tmp_path, "read_file", {"filepath": "pkg"})
    assert result.error is not None and result.error.code == "E_IS_A_DIRECTORY"


@pytest.mark.asyncio
async def test_reading_outside_the_root_needs_approval(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("secret-ish\n")
    declined = await read_call(root, "read_file", {"filepath": "../outside.txt"}, approve=False)
    assert declined.status == "denied"
    approved = await read_call(root, "read_file", {"filepath": "../outside.txt"}, approve=True)
    assert approved.content == "     1\tsecret-ish"


@pytest.mark.asyncio
async def test_a_read_is_remembered_for_the_session(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("a\n")
    state = FileStateStore()
    await read_call(
        tmp_path, "read_file_range", {"filepath": "x.py", "startLine": 1, "endLine": 1}, state=state
    )
    assert state.has_read("s1", (tmp_path / "x.py").resolve())


# -- the active document -------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_read_currently_open_file_is_absent_without_an_active_document(tmp_path: Path) -> None:
    result = await read_call(tmp_path, "read_currently_open_file", {})
    assert result.error is not None and result.error.code == "E_TOOL_NOT_IN_CATALOG"


@pytest.mark.asyncio
async def test_read_currently_open_file_reads_the_active_document(tmp_path: Path) -> None:
    write_notebook(tmp_path / "work.ipynb")
    context = {"active_document": {"path": "work.ipynb"}}
    result = await read_call(tmp_path, "read_currently_open_file", {}, client_context=context)
    assert result.status == "ok"
    assert result.content.startswith("Currently open: work.ipynb\n")
    assert "Notebook work.ipynb · 3 cells" in result.content


# -- schemas and the command line ----------------------------------------------------------------------------

FILEPATH = {"description": "Path relative to the project root.", "type": "string"}


def test_read_file_schema_snapshot() -> None:
    assert parameters_schema(ReadFileTool()) == {
        "additionalProperties": False,
        "properties": {"filepath": {"description": "Path relative to the project root.", "type": "string"}},
        "required": ["filepath"],
        "type": "object",
    }


def test_read_file_range_schema_snapshot() -> None:
    assert parameters_schema(ReadFileRangeTool()) == {
        "additionalProperties": False,
        "properties": {
            "filepath": FILEPATH,
            "startLine": {"description": "First line (1-based).", "minimum": 1, "type": "integer"},
            "endLine": {"description": "Last line (inclusive).", "minimum": 1, "type": "integer"},
        },
        "required": ["filepath", "startLine", "endLine"],
        "type": "object",
    }


def test_read_currently_open_file_schema_snapshot() -> None:
    assert parameters_schema(ReadCurrentlyOpenFileTool()) == {
        "additionalProperties": False,
        "properties": {},
        "type": "object",
    }


def test_cli_reads_a_file(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("print('hi')\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "hdsp_agent.cli",
            "tools",
            "call",
            "read_file",
            '{"filepath": "x.py"}',
            "--root",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["status"] == "ok" and result["content"] == "     1\tprint('hi')"
