"""What the agent knows about files in one session, and how file changes are written and undone.

- Read tracking: when a tool shows the model a file, the file's fingerprint (mtime_ns, size, SHA-256) is
  recorded per session. An edit to a file that changed on disk since then is refused until the model reads it
  again: the model's idea of the file is stale and its edit could undo the user's work. A file never read in
  the session is edited as it is on disk.
- Atomic writes: a temp file in the same directory, then ``os.replace``; the file's mode is kept and no temp
  file is left behind when anything fails.
- Undo records: the bytes a file had before a change (None when the change created it), restorable later.

One ``FileStateStore`` is shared by the file tools of a server or CLI run: ``tools.state.ToolState`` owns it
and the tool builder passes it in. A tool built without one keeps its own (tests, schema listings).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
import stat
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ....user_text import user_text
from ...base import ToolError

E_FILE_CHANGED = "E_FILE_CHANGED_SINCE_READ"
E_PATH_MOVED = "E_PATH_MOVED"


@dataclass(frozen=True)
class FileFingerprint:
    mtime_ns: int
    size: int
    sha256: str


@dataclass(frozen=True)
class UndoRecord:
    """A file's content before one change; ``prior`` is None when the change created the file."""

    record_id: str
    session_id: str
    path: Path
    prior: bytes | None
    created_at: float
    # The SHA-256 of what the change wrote (None: not known), so an undo can tell whether the file is still as
    # the agent left it, and the path as Jupyter's contents API names it (relative to the server root), the
    # one path form the frontend finds open editors by.
    after_sha256: str | None = None
    shown_as: str | None = None
    # The change deleted the file (a shell command's ``rm``): an undo checks that it is still absent.
    after_absent: bool = False


def fingerprint(path: Path) -> FileFingerprint:
    """The file's fingerprint now.

    The stat comes first: if the file changes while it is hashed, the fingerprint records the older stat, so
    the next check sees a difference and compares content instead of trusting it.
    """
    status = path.stat()
    return FileFingerprint(status.st_mtime_ns, status.st_size, hashlib.sha256(path.read_bytes()).hexdigest())


def fingerprint_of(status: os.stat_result, content_hash: str) -> FileFingerprint:
    """A fingerprint from a stat taken before reading and the hash of what was read."""
    return FileFingerprint(status.st_mtime_ns, status.st_size, content_hash)


class UndoRecordSink(Protocol):
    """Where undo records are kept beyond the server's memory (the conversation store): told of every
    change, in order, so a restarted server loads the same history."""

    def record_added(self, record: UndoRecord) -> None: ...

    def record_replaced(self, old: UndoRecord, new: UndoRecord) -> None: ...

    def record_removed(self, record: UndoRecord) -> None: ...

    def session_forgotten(self, session_id: str) -> None: ...


@dataclass
class FileStateStore:
    """Per-session read fingerprints and undo records, keyed by the resolved path.

    The undo records are written through to ``sink`` (when one is attached) as they change; read
    fingerprints are not: after a restart the model reads a file again before editing it.
    """

    _reads: dict[tuple[str, Path], FileFingerprint] = field(default_factory=dict)
    _undo: dict[str, list[UndoRecord]] = field(default_factory=dict)
    sink: UndoRecordSink | None = None

    # -- read tracking ---------------------------------------------------------------------------------------

    def record_read(self, session_id: str, path: Path, seen: FileFingerprint | None = None) -> None:
        """Remember the file as the model has now seen it (after a read, or after the agent wrote it)."""
        self._reads[(session_id, path)] = seen or fingerprint(path)

    def forget_read(self, session_id: str, path: Path) -> None:
        self._reads.pop((session_id, path), None)

    def has_read(self, session_id: str, path: Path) -> bool:
        return (session_id, path) in self._reads

    def check_fresh(self, session_id: str, path: Path, shown_as: str) -> None:
        """Raise ``E_FILE_CHANGED_SINCE_READ`` if ``path`` changed since this session last read it.

        Only content counts: a file touched (new mtime) with the same bytes is still fresh.
        """
        known = self._reads.get((session_id, path))
        if known is None:
            return
        try:
            status = path.stat()
        except FileNotFoundError:
            raise ToolError(
                E_FILE_CHANGED,
                user_text("%1 was deleted since you last read it", shown_as),
                user_text(
                    "Check with ls whether it moved; create it again only if that is what the user wants."
                ),
            ) from None
        if status.st_mtime_ns == known.mtime_ns and status.st_size == known.size:
            return
        if status.st_size == known.size and fingerprint(path).sha256 == known.sha256:
            return
        raise ToolError(
            E_FILE_CHANGED,
            user_text(
                ("%1 changed on disk since you last read it (the user or another program edited it)"),
                shown_as,
            ),
            user_text(
                ("Read %1 again with read_file, then redo your edit on its current content."), shown_as
            ),
        )

    # -- undo ------------------------------------------------------------------------------------------------

    def record_prior(
        self,
        session_id: str,
        path: Path,
        prior: bytes | None,
        *,
        after_sha256: str | None = None,
        shown_as: str | None = None,
        after_absent: bool = False,
    ) -> UndoRecord:
        """Record ``path``'s content before a change (None: the file did not exist) and, when known, the hash
        of what the change wrote (``after_absent``: the change deleted it) and the path's contents-API
        form."""
        record = UndoRecord(
            f"undo-{uuid.uuid4().hex[:12]}",
            session_id,
            path,
            prior,
            time.time(),
            after_sha256=after_sha256,
            shown_as=shown_as,
            after_absent=after_absent,
        )
        self._undo.setdefault(session_id, []).append(record)
        if self.sink is not None:
            self.sink.record_added(record)
        return record

    def amend_after(self, record: UndoRecord, after_sha256: str) -> UndoRecord:
        """The file now holds other bytes that still count as the agent's change (e.g. the user undid some of
        its hunks and kept the rest): a later turn undo checks against these and still restores ``prior``.
        Returns the record that replaces ``record`` in its place in the history."""
        amended = dataclasses.replace(record, after_sha256=after_sha256)
        history = self._undo.get(record.session_id, [])
        history[history.index(record)] = amended
        if self.sink is not None:
            self.sink.record_replaced(record, amended)
        return amended

    def records(self, session_id: str) -> list[UndoRecord]:
        """This session's undo records, oldest first."""
        return list(self._undo.get(session_id, []))

    def find_record(self, session_id: str, record_id: str) -> UndoRecord | None:
        return next(
            (record for record in self._undo.get(session_id, []) if record.record_id == record_id), None
        )

    async def forget_session(self, session_id: str) -> None:
        """Drop everything recorded for a session that has ended (its reads and its undo records)."""
        for key in [key for key in self._reads if key[0] == session_id]:
            del self._reads[key]
        self._undo.pop(session_id, None)
        if self.sink is not None:
            self.sink.session_forgotten(session_id)

    def load(self, session_id: str, records: list[UndoRecord]) -> None:
        """Put back a session's undo records as a restarted server found them in the store (oldest first)."""
        self._undo[session_id] = list(records)

    def drop_oldest(self, session_id: str, count: int) -> list[UndoRecord]:
        """Forget the session's ``count`` oldest undo records (the history grew past its bound).

        Returns them."""
        history = self._undo.get(session_id, [])
        dropped, history[:count] = history[:count], []
        for record in dropped:
            if self.sink is not None:
                self.sink.record_removed(record)
        return dropped

    def restore(self, record: UndoRecord) -> None:
        """Put the file back as it was before the recorded change, and drop the record.

        Restoring a created file deletes it. The session's read fingerprint is dropped so that the model must
        read the file again before editing it: what it last saw is gone.
        """
        ensure_unmoved(record.path, record.shown_as or str(record.path))
        if record.prior is None:
            record.path.unlink(missing_ok=True)
        else:
            # A shell command may have deleted the file's folder with it (``rm -r``): it comes back too.
            record.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(record.path, record.prior)
        history = self._undo.get(record.session_id, [])
        if record in history:
            history.remove(record)
            if self.sink is not None:
                self.sink.record_removed(record)
        self.forget_read(record.session_id, record.path)


def moved_reason(path: Path) -> str | None:
    """Why ``path`` (recorded resolved, when a tool checked it) no longer names the same place, or None.

    A change recorded for ``src/app.py`` is applied later (undo, restore, redo, a hunk's undo): by then a
    folder on the way may have been swapped for a link to a place outside the root or a protected one.
    Resolving again now and finding another path means writing there would follow that link.
    """
    given = os.path.abspath(path)
    try:
        now = os.path.realpath(given)
    except (OSError, ValueError) as error:
        return f"it cannot be resolved ({error})"
    if now == given:
        return None
    return f"a folder or the file on its path is now a link (to {now}); it is not followed"


def ensure_unmoved(path: Path, shown_as: str) -> None:
    """Raise ``E_PATH_MOVED`` when ``path`` leads elsewhere than where it was recorded (``moved_reason``)."""
    reason = moved_reason(path)
    if reason is not None:
        raise ToolError(
            E_PATH_MOVED,
            user_text("%1 was not written: %2", shown_as, reason),
            user_text("Check the folder; nothing outside it was changed."),
        )


def atomic_write(path: Path, content: bytes) -> None:
    """Replace ``path``'s content all at once: readers see the old file or the new one, never half of it.

    An existing file keeps its permission bits; a new file gets the usual ``0o666 & ~umask`` (the OS applies
    the umask when the temp file is created, as it would for the file itself). A path that no longer
    resolves to itself (a folder on it became a link since it was checked) is refused (``ensure_unmoved``).
    """
    ensure_unmoved(path, str(path))
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    temp_path = path.with_name(f".{path.name}.{secrets.token_hex(6)}.hdsp-tmp")
    handle = os.open(temp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as temp_file:
            temp_file.write(content)
            temp_file.flush()
            os.fsync(temp_file.fileno())
        if mode is not None:
            os.chmod(temp_path, mode)
        os.replace(temp_path, path)
    except BaseException:
        temp_path.unlink(missing_ok=True)
        raise
