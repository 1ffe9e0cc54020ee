"""What a shell command leaves behind: read, filtered, applied to the project and recorded like an edit.

With an overlay (``sandbox/overlay.py``), a sandboxed command wrote into a scratch ``upper`` directory and the
project is untouched when it ends. ``ShellChanges.apply_overlay`` walks the upper directory — regular files
are created or changed files, whiteouts (character devices 0:0) deleted ones, opaque folders (the
``overlay.opaque`` xattr) folders replaced as a whole, links links — and for each change asks the permission
policy's ``write_protection``. In the sandboxed run modes a protected change (one that would run or instruct
later, outside the sandbox) is not applied: it is dropped and named in the result. Everything else is applied
(a rename when the upper dir shares the project's filesystem, else a copy and an atomic replace) and recorded
in the session's ``FileStateStore`` exactly as an edit tool records its write: the review bar lists the file,
turn undo, checkpoints, redo and per-hunk undo restore it.

Without an overlay (``apply_snapshot_diff``): the project's stat walk before and after (``tree_snapshot``).
Created files are recorded (their undo deletes them); in the sandboxed modes a created protected file is
removed again. Changed and deleted files are listed, without undo: their earlier content was not kept.

Recording is bounded: a file whose earlier content is larger than ``PRIOR_FILE_MAX_BYTES``, content past
``PRIOR_TOTAL_MAX_BYTES`` for one command, or changes past ``MAX_RECORDED`` are applied but have no undo; the
result says so for each.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...permissions.paths import display_path
from ...permissions.protected import Protection, write_protection
from ...user_text import UserText, user_text
from .edit.filestate import FileStateStore
from .tree_snapshot import TreeDiff

PRIOR_FILE_MAX_BYTES = 8 * 1024 * 1024
PRIOR_TOTAL_MAX_BYTES = 64 * 1024 * 1024
MAX_RECORDED = 2_000
# How many paths of each kind the text for the model names (the details carry them all, up to MAX_RECORDED).
_NAMED = 20
# Applied without being listed: git keeps its own history of what is inside (``git reflog``), and its
# protected parts (hooks, config) are checked like any other path before this applies.
_UNLISTED_PREFIXES = (".git/",)
# The overlay was mounted by the same user as this server: by root with overlayfs's own ``trusted.*`` marks,
# else with ``userxattr``. Only that one counts: under root, ``user.overlay.opaque`` is an ordinary xattr a
# command can set through the overlay (and it would make a folder look replaced, its other files deleted).
_OPAQUE_XATTR = "trusted.overlay.opaque" if os.geteuid() == 0 else "user.overlay.opaque"
_HASH_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class AppliedChange:
    path: str  # as Jupyter's contents API names it (relative to the root)
    change: str  # "created", "changed", "deleted"
    undo_id: str | None  # None: applied without undo (``why_no_undo``)
    why_no_undo: str | None = None


@dataclass
class ChangeReport:
    """What became of a command's changes: applied (with or without undo), dropped, or not captured."""

    applied: list[AppliedChange] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (path, why it was protected)
    unlisted: int = 0
    # Why the changes could not be captured at all (None: they were).
    not_captured: str | None = None

    def text(self) -> str:
        """The lines the model (and the user, in the tool's result) reads; empty when nothing changed."""
        lines: list[str] = []
        if self.not_captured:
            lines.append(
                user_text(
                    "[The command's changes to the project could not be captured (%1): they are not in the "
                    "review bar and have no undo.]",
                    self.not_captured,
                )
            )
        listed = self.applied
        if listed:
            parts = []
            for kind in ("created", "changed", "deleted"):
                names = [change.path for change in listed if change.change == kind]
                if names:
                    parts.append(_kind_words(kind, _names(names)))
            joined = parts[0]
            for part in parts[1:]:  # each part stays a UserText, translated by the sidebar
                joined = user_text("%1; %2", joined, part)
            lines.append(
                user_text("[Files the command changed (listed for review, undone with the turn): %1]", joined)
            )
        no_undo = [change for change in listed if change.undo_id is None]
        if no_undo:
            lines.append(
                user_text(
                    "[Undo is not available for: %1]",
                    _names([f"{change.path} ({change.why_no_undo})" for change in no_undo]),
                )
            )
        if self.unlisted:
            lines.append(
                user_text("[%1 change(s) inside .git were applied (git keeps their history).]", self.unlisted)
            )
        if self.dropped:
            lines.append(
                user_text(
                    "[Not written: %1. These run or instruct later, outside the sandbox, so a command that "
                    "ran without asking cannot change them; to change one, use an edit tool, which asks the "
                    "user.]",
                    "; ".join(f"{path} — {why}" for path, why in self.dropped[:_NAMED])
                    + (f"; and {len(self.dropped) - _NAMED} more" if len(self.dropped) > _NAMED else ""),
                )
            )
        return "\n".join(lines)

    def details(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.applied:
            found["changed_files"] = [
                {"path": c.path, "change": c.change, "undo_id": c.undo_id, "no_undo": c.why_no_undo}
                for c in self.applied[:MAX_RECORDED]
            ]
        if self.dropped:
            found["not_written"] = [
                {"path": path, "reason": why} for path, why in self.dropped[:MAX_RECORDED]
            ]
        if self.not_captured:
            found["changes_not_captured"] = self.not_captured
        return found


def _kind_words(kind: str, names: str) -> UserText:
    if kind == "created":
        return user_text("created %1", names)
    if kind == "changed":
        return user_text("changed %1", names)
    return user_text("deleted %1", names)


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _plain_mode(status: os.stat_result) -> int:
    """The permission bits to apply, without set-user-ID and set-group-ID: a file the command made (as the
    server's user, root included) does not become a program that runs as that user for anyone else."""
    return stat.S_IMODE(status.st_mode) & ~(stat.S_ISUID | stat.S_ISGID)


def _is_whiteout(status: os.stat_result) -> bool:
    return stat.S_ISCHR(status.st_mode) and status.st_rdev == 0


def _is_opaque(path: str) -> bool:
    try:
        return os.getxattr(path, _OPAQUE_XATTR, follow_symlinks=False) == b"y"
    except OSError:
        return False


class ShellChanges:
    """Applies and records one command's changes to the project at ``root`` for ``session_id``.

    ``filter_protected``: the command ran without the user approving it outside the sandbox; protected
    changes are dropped. ``ignore``: absolute paths bubblewrap created as mount points (an empty folder or
    file in the upper dir that is not the command's doing).
    """

    def __init__(
        self,
        root: Path,
        session_id: str,
        store: FileStateStore,
        *,
        filter_protected: bool,
        ignore: tuple[str, ...] = (),
        ignore_under: tuple[str, ...] = (),
        protection: Callable[..., Protection | None] = write_protection,
    ) -> None:
        self.root = root.resolve()
        self.session_id = session_id
        self.store = store
        self.filter_protected = filter_protected
        self.ignore = frozenset(ignore)
        # Folders the server itself writes while the command runs (the command's log, when a session keeps
        # its logs inside the project): not the command's changes.
        self.ignore_under = tuple(path.rstrip("/") + "/" for path in ignore_under)
        self.protection = protection
        self.report = ChangeReport()
        self._prior_bytes = 0
        self._recorded = 0

    # -- the overlay ---------------------------------------------------------------------------------------

    def apply_overlay(self, upper: Path) -> ChangeReport:
        """Apply (or drop) everything in the overlay's ``upper`` dir; returns the report."""
        self._apply_dir(str(upper), self.root, "")
        return self.report

    def _apply_dir(self, upper_dir: str, real_dir: Path, prefix: str) -> None:
        try:
            entries = sorted(os.scandir(upper_dir), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            rel = prefix + entry.name
            real = real_dir / entry.name
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if str(real) in self.ignore and self._empty(entry.path, status):
                continue
            if _is_whiteout(status):
                self._delete(real, rel)
            elif stat.S_ISDIR(status.st_mode):
                self._apply_folder(entry.path, real, rel, status)
            elif stat.S_ISREG(status.st_mode):
                self._apply_file(entry.path, real, rel, status)
            elif stat.S_ISLNK(status.st_mode):
                self._apply_link(entry.path, real, rel)
            else:
                self.report.dropped.append((rel, user_text("not a file, folder or link")))

    @staticmethod
    def _empty(path: str, status: os.stat_result) -> bool:
        if stat.S_ISDIR(status.st_mode):
            return not os.listdir(path)
        return stat.S_ISREG(status.st_mode) and status.st_size == 0

    def _apply_folder(self, upper_path: str, real: Path, rel: str, status: os.stat_result) -> None:
        real_is_dir = real.is_dir() and not real.is_symlink()
        if not real_is_dir:
            if self._refused(real, rel + "/"):
                return
            if (real.exists() or real.is_symlink()) and not self._delete(real, rel):
                return  # what is there could not go: nothing can be put in its place
            if not self._parent_is_real(real, rel):
                return
            real.mkdir(mode=_plain_mode(status))
        elif _is_opaque(upper_path):  # the command replaced the folder: what it did not put back is gone
            kept = set(os.listdir(upper_path))
            for child in sorted(os.listdir(real)):
                if child not in kept:
                    self._delete(real / child, f"{rel}/{child}")
        self._apply_dir(upper_path, real, rel + "/")

    def _apply_file(self, upper_path: str, real: Path, rel: str, status: os.stat_result) -> None:
        if self._refused(real, rel):
            return
        if real.is_dir() and not real.is_symlink() and not self._delete(real, rel):
            return
        if not self._parent_is_real(real, rel):
            return
        prior, why_no_undo = self._prior(real)
        if prior is not None and len(prior) == status.st_size and Path(upper_path).read_bytes() == prior:
            os.chmod(real, _plain_mode(status))  # a copy-up by touch or chmod: same content
            return
        self._move_in(upper_path, real, status)
        existed = prior is not None or why_no_undo is not None
        change = "changed" if existed else "created"
        if why_no_undo is not None:
            self._listed(rel, change, None, why_no_undo)
        else:
            self._record(real, rel, change, prior, after_sha256=_sha256_of(real))

    def _apply_link(self, upper_path: str, real: Path, rel: str) -> None:
        target = os.readlink(upper_path)
        pointed = Path(os.path.normpath(os.path.join(os.path.dirname(real), target)))
        if self._refused(real, rel):
            return
        if self.filter_protected:
            protection = self.protection(Path(os.path.realpath(pointed)), self.root, target)
            if protection is not None:
                reason = user_text("a link to %1, %2", target, protection.reason)
                self.report.dropped.append((rel, reason))
                return
        if real.is_dir() and not real.is_symlink() and not self._delete(real, rel):
            return
        if not self._parent_is_real(real, rel):
            return
        temp = real.with_name(f".{real.name}.{secrets.token_hex(6)}.hdsp-tmp")
        os.symlink(target, temp)
        os.replace(temp, real)
        self._listed(rel, "created", None, user_text("a link"))

    def _move_in(self, upper_path: str, real: Path, status: os.stat_result) -> None:
        """Put the upper file at ``real`` at once: a rename on the same filesystem, else copy and replace."""
        try:
            if status.st_mode & (stat.S_ISUID | stat.S_ISGID):
                os.chmod(upper_path, _plain_mode(status))
            os.replace(upper_path, real)
            return
        except OSError:
            pass
        temp = real.with_name(f".{real.name}.{secrets.token_hex(6)}.hdsp-tmp")
        try:
            shutil.copyfile(upper_path, temp)
            os.chmod(temp, _plain_mode(status))
            os.replace(temp, real)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise

    # -- deleting --------------------------------------------------------------------------------------------

    def _delete(self, real: Path, rel: str) -> bool:
        """Delete ``real`` (a folder file by file); False when any of it was protected and stays."""
        try:
            status = real.lstat()
        except FileNotFoundError:
            return True
        if self._refused(real, rel, delete=True):
            return False
        if not stat.S_ISDIR(status.st_mode):
            return self._delete_file(real, rel, status)
        complete = True
        for child in sorted(os.listdir(real)):
            complete = self._delete(real / child, f"{rel}/{child}") and complete
        if complete:
            real.rmdir()
        return complete

    def _delete_file(self, real: Path, rel: str, status: os.stat_result) -> bool:
        if stat.S_ISLNK(status.st_mode):
            real.unlink()
            self._listed(rel, "deleted", None, user_text("a link"))
            return True
        prior, why_no_undo = self._prior(real)
        real.unlink()
        if why_no_undo is not None:
            self._listed(rel, "deleted", None, why_no_undo)
        else:
            self._record(real, rel, "deleted", prior, after_absent=True)
        return True

    # -- without an overlay ----------------------------------------------------------------------------------

    def apply_snapshot_diff(self, found: TreeDiff) -> ChangeReport:
        """Record what a command did to the project directly (no overlay); created protected files are
        removed again in the sandboxed modes."""
        found = TreeDiff(*([rel for rel in rels if not self._server_made(rel)] for rels in found))
        for rel in found.created:
            real = self.root / rel
            try:
                status = real.lstat()
            except FileNotFoundError:
                continue
            if self._refused(real, rel):
                real.unlink(missing_ok=True)
                continue
            if stat.S_ISREG(status.st_mode):
                self._record(real, rel, "created", None, after_sha256=_sha256_of(real))
            else:
                self._listed(rel, "created", None, user_text("not a regular file"))
        no_undo = user_text("its earlier content was not kept (no overlay)")
        for rel in found.changed:
            self._listed(rel, "changed", None, no_undo)
        for rel in found.deleted:
            self._listed(rel, "deleted", None, no_undo)
        return self.report

    def _server_made(self, rel: str) -> bool:
        real = str(self.root / rel)
        return real in self.ignore or real.startswith(self.ignore_under)

    # -- policy, bounds and recording ------------------------------------------------------------------------

    def _refused(self, real: Path, rel: str, *, delete: bool = False) -> bool:
        """In the sandboxed modes, whether the change to ``real`` is protected (then named as dropped)."""
        if not self.filter_protected:
            return False
        protection = self.protection(Path(os.path.abspath(real)), self.root, rel, delete=delete)
        if protection is None:
            return False
        self.report.dropped.append((rel.rstrip("/"), protection.reason))
        return True

    def _parent_is_real(self, real: Path, rel: str) -> bool:
        """The folder ``real`` goes into is that folder inside the root, not a link put there since."""
        if os.path.realpath(real.parent) == str(real.parent):
            return True
        self.report.dropped.append((rel, user_text("its folder is a link now")))
        return False

    def _prior(self, real: Path) -> tuple[bytes | None, str | None]:
        """What ``real`` holds now (None: nothing) and, when it is not kept for undo, why."""
        try:
            status = real.lstat()
        except FileNotFoundError:
            return None, None
        if stat.S_ISLNK(status.st_mode):  # its bytes would be the target's: a link is not restored as a file
            return None, user_text("it was a link")
        size = status.st_size
        if self._recorded >= MAX_RECORDED:
            return None, user_text("more than %1 changes in one command", MAX_RECORDED)
        if size > PRIOR_FILE_MAX_BYTES:
            return None, user_text("larger than %1 MiB", PRIOR_FILE_MAX_BYTES // (1024 * 1024))
        if self._prior_bytes + size > PRIOR_TOTAL_MAX_BYTES:
            return None, user_text(
                "the command changed more than %1 MiB", PRIOR_TOTAL_MAX_BYTES // (1024 * 1024)
            )
        self._prior_bytes += size
        return real.read_bytes(), None

    def _record(
        self,
        real: Path,
        rel: str,
        change: str,
        prior: bytes | None,
        *,
        after_sha256: str | None = None,
        after_absent: bool = False,
    ) -> None:
        if rel.startswith(_UNLISTED_PREFIXES):
            self.report.unlisted += 1
            return
        if self._recorded >= MAX_RECORDED:
            self._listed(rel, change, None, user_text("more than %1 changes in one command", MAX_RECORDED))
            return
        self._recorded += 1
        shown_as = display_path(real, self.root)
        record = self.store.record_prior(
            self.session_id,
            real,
            prior,
            after_sha256=after_sha256,
            shown_as=shown_as,
            after_absent=after_absent,
        )
        # The session's read of the file (if any) is kept: it is stale now, so an edit is refused until the
        # model reads the file again, as after any other program's change.
        self.report.applied.append(AppliedChange(shown_as, change, record.record_id))

    def _listed(self, rel: str, change: str, undo_id: str | None, why_no_undo: str) -> None:
        if rel.startswith(_UNLISTED_PREFIXES):
            self.report.unlisted += 1
            return
        self.report.applied.append(AppliedChange(rel, change, undo_id, why_no_undo))
