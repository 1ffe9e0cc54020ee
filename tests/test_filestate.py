"""Read tracking, atomic writes and undo records, on real files."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from hdsp_agent.tools.base import ToolError
from hdsp_agent.tools.builtin.edit.filestate import E_FILE_CHANGED, FileStateStore, atomic_write


def test_atomic_write_replaces_content_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("echo old\n")
    target.chmod(0o750)
    atomic_write(target, b"echo new\n")
    assert target.read_bytes() == b"echo new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]


def test_atomic_write_gives_a_new_file_the_umask_mode(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        atomic_write(tmp_path / "new.txt", b"x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


@pytest.mark.fault
def test_failed_rename_leaves_the_original_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "data.txt"
    target.write_bytes(b"original\n")

    def failing_replace(source: object, destination: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        atomic_write(target, b"new\n")
    assert target.read_bytes() == b"original\n"
    assert [p.name for p in tmp_path.iterdir()] == ["data.txt"]


def test_a_file_never_read_is_fresh(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    FileStateStore().check_fresh("s", tmp_path / "a.txt", "a.txt")


def test_a_changed_file_is_stale_and_a_new_read_makes_it_fresh(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    store = FileStateStore()
    store.record_read("s", path)
    path.write_text("two, longer\n")
    with pytest.raises(ToolError) as caught:
        store.check_fresh("s", path, "a.txt")
    assert caught.value.code == E_FILE_CHANGED and "read_file" in (caught.value.suggestion or "")
    store.record_read("s", path)
    store.check_fresh("s", path, "a.txt")


def test_same_size_change_with_a_new_mtime_is_caught_by_the_hash(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("aaaa")
    store = FileStateStore()
    store.record_read("s", path)
    path.write_text("bbbb")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000))
    with pytest.raises(ToolError):
        store.check_fresh("s", path, "a.txt")


def test_touching_a_file_without_changing_it_keeps_it_fresh(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("same")
    store = FileStateStore()
    store.record_read("s", path)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000))
    store.check_fresh("s", path, "a.txt")


def test_reads_are_tracked_per_session(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one")
    store = FileStateStore()
    store.record_read("first", path)
    path.write_text("changed")
    store.check_fresh("second", path, "a.txt")
    with pytest.raises(ToolError):
        store.check_fresh("first", path, "a.txt")


def test_a_deleted_file_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one")
    store = FileStateStore()
    store.record_read("s", path)
    path.unlink()
    with pytest.raises(ToolError) as caught:
        store.check_fresh("s", path, "a.txt")
    assert "deleted" in caught.value.message


def test_restore_puts_back_prior_bytes_and_forgets_the_read(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"before\r\n")
    store = FileStateStore()
    record = store.record_prior("s", path, path.read_bytes())
    atomic_write(path, b"after\n")
    store.record_read("s", path)
    assert store.records("s") == [record]
    store.restore(record)
    assert path.read_bytes() == b"before\r\n"
    assert store.records("s") == [] and not store.has_read("s", path)


def test_restore_of_a_created_file_deletes_it(tmp_path: Path) -> None:
    path = tmp_path / "new.txt"
    store = FileStateStore()
    record = store.record_prior("s", path, None)
    path.write_text("created")
    assert store.find_record("s", record.record_id) == record
    store.restore(record)
    assert not path.exists()


def test_forget_session_drops_its_reads_and_undo_records_only(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x")
    store = FileStateStore()
    store.record_read("ended", path)
    store.record_read("other", path)
    store.record_prior("ended", path, b"x")
    asyncio.run(store.forget_session("ended"))
    assert not store.has_read("ended", path) and store.records("ended") == []
    assert store.has_read("other", path)
