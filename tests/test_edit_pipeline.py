"""What every edit tool gets from the shared pipeline, on real files: line endings and BOM kept, atomic
writes, refusal of stale files and notebooks, writes only inside the root, the approval preview, undo."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import nbformat
import pytest
from file_tools_harness import Harness, RecordingApprover, error_code


@pytest.mark.asyncio
async def test_approval_dialog_shows_the_diff_the_edit_will_make(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    harness = Harness(tmp_path)
    result = await harness.replace("a.txt", "two", "2")
    [request] = harness.approver.requests
    assert request.action_kind == "FileWrite" and request.action_target == "a.txt"
    assert request.preview == result.details["diff"]


@pytest.mark.asyncio
async def test_large_file_gets_a_short_approval_description_instead_of_a_diff(tmp_path: Path) -> None:
    (tmp_path / "big.csv").write_text("a,b\n" + "1,2\n" * 200_000)
    harness = Harness(tmp_path)
    result = await harness.replace("big.csv", "a,b", "x,y")
    assert result.status == "ok"
    assert harness.approver.requests[0].preview == "edit big.csv (800,004 bytes)"
    assert result.details["prior_content"] is None and result.details["prior_exists"] is True


@pytest.mark.asyncio
async def test_crlf_line_endings_and_bom_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfalpha\r\nbeta\r\ngamma\r\n")
    harness = Harness(tmp_path)
    result = await harness.replace("win.txt", "beta\n", "BETA\nbeta2\n")
    assert result.status == "ok"
    assert path.read_bytes() == b"\xef\xbb\xbfalpha\r\nBETA\r\nbeta2\r\ngamma\r\n"


@pytest.mark.asyncio
async def test_lf_file_gets_no_crlf_from_crlf_arguments(tmp_path: Path) -> None:
    path = tmp_path / "unix.txt"
    path.write_bytes(b"a\nb\nc\n")
    await Harness(tmp_path).replace("unix.txt", "a\r\nb", "a\r\nB")
    assert path.read_bytes() == b"a\nB\nc\n"


@pytest.mark.asyncio
async def test_file_mode_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("echo a\n")
    path.chmod(0o754)
    await Harness(tmp_path).replace("run.sh", "echo a", "echo b")
    assert stat.S_IMODE(path.stat().st_mode) == 0o754 and path.read_text() == "echo b\n"


@pytest.mark.asyncio
@pytest.mark.fault
async def test_failed_write_leaves_the_original_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keep.txt"
    path.write_text("original\n")

    def failing_replace(source: object, destination: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    harness = Harness(tmp_path)
    result = await harness.replace("keep.txt", "original", "changed")
    assert error_code(result) == "E_WRITE_FAILED" and "the file is unchanged" in (
        result.error.message if result.error else ""
    )
    assert path.read_text() == "original\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
    assert harness.state.records("s1") == []


@pytest.mark.asyncio
async def test_edit_of_a_file_changed_since_it_was_read_is_refused_until_read_again(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\ndraft\n")
    harness = Harness(tmp_path)
    assert (await harness.call("read_file", {"filepath": "notes.md"})).status == "ok"
    path.write_text("# Notes\ndraft\nthe user's new line\n")
    refused = await harness.replace("notes.md", "draft", "final")
    assert error_code(refused) == "E_FILE_CHANGED_SINCE_READ"
    assert refused.error and refused.error.suggestion and "read_file" in refused.error.suggestion
    assert harness.approver.requests == []  # refused before the user was asked
    assert path.read_text() == "# Notes\ndraft\nthe user's new line\n"
    await harness.call("read_file", {"filepath": "notes.md"})
    allowed = await harness.replace("notes.md", "draft", "final")
    assert allowed.status == "ok" and path.read_text() == "# Notes\nfinal\nthe user's new line\n"


@pytest.mark.asyncio
async def test_a_file_never_read_is_edited_as_it_is_on_disk(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("a\n")
    harness = Harness(tmp_path)
    (tmp_path / "x.txt").write_text("b\n")
    assert (await harness.replace("x.txt", "b", "c")).status == "ok"


@pytest.mark.asyncio
async def test_the_agents_own_edit_does_not_make_the_file_stale(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("a\nb\n")
    harness = Harness(tmp_path)
    await harness.call("read_file", {"filepath": "x.txt"})
    assert (await harness.replace("x.txt", "a", "A")).status == "ok"
    assert (await harness.replace("x.txt", "b", "B")).status == "ok"
    assert (tmp_path / "x.txt").read_text() == "A\nB\n"


@pytest.mark.asyncio
async def test_file_changed_while_waiting_for_approval_is_not_written(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("value = 1\n")

    def user_edits_meanwhile() -> None:
        path.write_text("value = 1\nother = 2\n")

    approver = RecordingApprover(before_answer=user_edits_meanwhile)
    result = await Harness(tmp_path, approver).replace("x.txt", "value = 1", "value = 3")
    assert error_code(result) == "E_FILE_CHANGED_SINCE_READ" and "waited for approval" in (
        result.error.message if result.error else ""
    )
    assert path.read_text() == "value = 1\nother = 2\n"


@pytest.mark.asyncio
async def test_a_declined_edit_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("a\n")
    result = await Harness(tmp_path, RecordingApprover(approve=False)).replace("x.txt", "a", "b")
    assert result.status == "denied" and (tmp_path / "x.txt").read_text() == "a\n"


@pytest.mark.asyncio
async def test_missing_file_is_an_error_pointing_at_create_new_file(tmp_path: Path) -> None:
    result = await Harness(tmp_path).replace("nope.py", "a", "b")
    assert error_code(result) == "E_PATH_NOT_FOUND"
    assert result.error and result.error.suggestion and "create_new_file" in result.error.suggestion


@pytest.mark.asyncio
async def test_notebooks_are_never_edited_as_text(tmp_path: Path) -> None:
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), tmp_path / "nb.ipynb"
    )
    before = (tmp_path / "nb.ipynb").read_bytes()
    harness = Harness(tmp_path)
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("single_find_and_replace", {"old_string": "x = 1", "new_string": "x = 2"}),
        ("multi_edit", {"edits": [{"old_string": "x = 1", "new_string": "x = 2"}]}),
        ("search_and_replace_in_file", {"diffs": ["------- SEARCH\nx\n=======\ny\n+++++++ REPLACE"]}),
        ("edit_existing_file", {"changes": "{}"}),
    ]
    for name, arguments in attempts:
        result = await harness.call(name, {"filepath": "nb.ipynb", **arguments})
        assert error_code(result) == "E_NOTEBOOK_AS_TEXT", name
        assert result.error and result.error.suggestion and "edit_cell" in result.error.suggestion
    assert (tmp_path / "nb.ipynb").read_bytes() == before and harness.approver.requests == []


@pytest.mark.asyncio
async def test_writes_outside_the_root_are_refused_even_when_approved(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("a\n")
    (root / "link").symlink_to(tmp_path)
    harness = Harness(root)
    for path in ("../outside.txt", "link/outside.txt"):
        result = await harness.replace(path, "a", "b")
        assert error_code(result) == "E_PATH_OUTSIDE_ROOT", path
    created = await harness.call("create_new_file", {"filepath": "../new.txt", "contents": "x"})
    assert error_code(created) == "E_PATH_OUTSIDE_ROOT"
    assert (tmp_path / "outside.txt").read_text() == "a\n" and not (tmp_path / "new.txt").exists()


@pytest.mark.asyncio
async def test_each_edit_is_recorded_and_can_be_undone(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    harness = Harness(tmp_path)
    edited = await harness.replace("x.txt", "two", "TWO")
    created = await harness.call("create_new_file", {"filepath": "new.txt", "contents": "fresh\n"})
    records = harness.state.records("s1")
    assert [record.record_id for record in records] == [edited.details["undo_id"], created.details["undo_id"]]
    for record in reversed(records):
        harness.state.restore(record)
    assert path.read_bytes() == b"one\r\ntwo\r\n" and not (tmp_path / "new.txt").exists()
