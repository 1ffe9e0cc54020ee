"""What every edit tool does around its own logic: checks, the approval preview, the atomic write, undo.

A tool subclasses ``FileEditTool`` and implements ``plan`` (old text → new text and a sentence for the
model). The base refuses notebooks and paths outside the root, refuses a file that changed since the model
read it (or while the user was approving), computes the diff for the approval dialog, writes atomically,
records undo and the new read state, and builds the result with its diff and prior content.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import Field

from ....documents.contract import LiveTextGateway, TextEdit
from ....documents.history import NotebookUndoStore, TextChange, UndoEntry
from ....documents.merge import MergeConflict, merge_texts
from ....permissions.paths import display_path, resolve_in_root
from ....user_text import user_text
from ...base import PermissionAction, PermissionKind, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from ..files import E_PATH_NOT_FOUND, similar_paths
from .filestate import E_FILE_CHANGED, FileStateStore, atomic_write, fingerprint_of
from .fuzzy import E_EDIT_NO_CHANGE
from .textfile import TextFile, decode_text_file, numbered_excerpt, preview, unified_diff

E_NOTEBOOK_AS_TEXT = "E_NOTEBOOK_AS_TEXT"
E_FILE_TOO_LARGE = "E_FILE_TOO_LARGE"
E_WRITE_FAILED = "E_WRITE_FAILED"

# Above this the approval dialog gets a description instead of a diff (computing it would stall the server).
PREVIEW_MAX_BYTES = 512 * 1024
MAX_EDIT_BYTES = 10 * 1024 * 1024
# Prior content travels in the result's details (for the UI's undo and diff views) up to this size.
PRIOR_CONTENT_MAX_BYTES = 256 * 1024
# The diff in the details (for the UI) stops here; a rewrite of a huge file should not flood the event log.
DETAILS_DIFF_MAX_CHARS = 1_000_000
_REMEMBERED_PREVIEWS = 256
# Below this, starting a thread to hash the new content costs more than the overlap saves.
BACKGROUND_HASH_MIN_BYTES = 256 * 1024


@dataclass
class PlannedEdit:
    """What an edit tool decided: the new text (``\\n`` endings), a sentence for the model, changed lines."""

    text: str
    summary: str
    changed: list[tuple[int, int]]


class FileEditArgs(ToolArgs):
    """Arguments every edit tool has."""

    filepath: str = Field(description="Path relative to the project root.")


ArgsT = TypeVar("ArgsT", bound=FileEditArgs)


class FileEditTool(Tool[ArgsT], Generic[ArgsT]):
    """The pipeline the edit tools share; a tool only says how its arguments turn old text into new."""

    read_only = False

    def __init__(
        self, state: FileStateStore | None = None, notebook_undo: NotebookUndoStore | None = None
    ) -> None:
        self.state = state if state is not None else FileStateStore()
        # Where an edit made in an open editor (not on disk) records its undo: with the notebook changes,
        # which are undone the same way (a callable that takes the change back out of the open document).
        self.notebook_undo = notebook_undo if notebook_undo is not None else NotebookUndoStore()
        # call id → hash of the content the approval preview was computed on (the user approved that diff).
        self._previewed: OrderedDict[str, str] = OrderedDict()

    def plan(self, args: ArgsT, text: str) -> PlannedEdit:
        raise NotImplementedError

    def _target(self, filepath: str, ctx: ToolContext) -> tuple[Path, str]:
        # Writes never leave the root, whatever the policy or the user said. The run writes where the
        # permission check resolved the path to (the target the user approved).
        path = resolve_in_root(ctx.root_dir, filepath, memo=ctx.resolved_paths)
        if path.suffix.lower() == ".ipynb":
            raise ToolError(
                E_NOTEBOOK_AS_TEXT,
                user_text("%1 is a notebook; its JSON is not edited as text", filepath),
                user_text("Use the notebook cell tools: edit_cell to change a cell, insert_cell to add one."),
            )
        return path, display_path(path, ctx.root_dir)

    def permission(self, args: ArgsT, ctx: ToolContext) -> PermissionAction | None:
        filepath = args.filepath
        path, shown_as = self._target(filepath, ctx)
        if not path.is_file():
            raise ToolError(
                E_PATH_NOT_FOUND,
                user_text("%1 does not exist", repr(filepath)),
                user_text(
                    "Check the path with ls or file_glob_search; to make a new file use create_new_file."
                ),
            )
        self.state.check_fresh(ctx.session_id, path, shown_as)
        size = path.stat().st_size
        if size > PREVIEW_MAX_BYTES:
            return PermissionAction(PermissionKind.FILE_WRITE, filepath, f"edit {shown_as} ({size:,} bytes)")
        # Small file: compute the edit now; a failing edit is reported without bothering the user.
        raw = path.read_bytes()
        before = _as_the_agent_knows_it(ctx, shown_as, decode_text_file(raw, shown_as))
        planned = self._planned(args, before, shown_as)
        self._remember_preview(ctx.call_id, raw)
        return PermissionAction(
            PermissionKind.FILE_WRITE, filepath, preview(unified_diff(before.text, planned.text, shown_as))
        )

    def _remember_preview(self, call_id: str, raw: bytes) -> None:
        if not call_id:
            return
        self._previewed[call_id] = hashlib.sha256(raw).hexdigest()
        while len(self._previewed) > _REMEMBERED_PREVIEWS:
            self._previewed.popitem(last=False)

    def _planned(self, args: ArgsT, before: TextFile, shown_as: str) -> PlannedEdit:
        planned = self.plan(args, before.text)
        if planned.text == before.text:
            raise ToolError(
                E_EDIT_NO_CHANGE,
                user_text("the edit leaves %1 unchanged", shown_as),
                user_text("Check what you meant to change."),
            )
        return planned

    async def run(self, args: ArgsT, ctx: ToolContext) -> ToolOutput:
        editors = live_editors(ctx)
        if editors is None:
            return await asyncio.to_thread(self._apply, args, ctx)
        path, shown_as = self._target(args.filepath, ctx)
        if not await self._held_by_an_editor(editors, ctx, path, shown_as):
            return await asyncio.to_thread(self._apply, args, ctx)
        state = await editors.state(shown_as)
        if state is not None and not state[1] and editors.agent_text(shown_as) is None:
            # The editor holds the file as saved: the edit is written (undo and redo as for any file) and the
            # editor reloaded at once, so it shows the change and knows the file it holds. That is the save
            # the end of the turn would make; an editor with unsaved typing goes the other way.
            output = await asyncio.to_thread(self._apply, args, ctx)
            if not await editors.reload(shown_as, expected=state[0]):
                output.content += (
                    "\n(The user started typing in the open editor meanwhile: it was not reloaded, and they "
                    "will be asked on saving whether to keep the file on disk.)"
                )
            return output
        return await self._apply_live(args, ctx, editors, path, shown_as)

    async def _held_by_an_editor(
        self, editors: LiveTextGateway, ctx: ToolContext, path: Path, shown_as: str
    ) -> bool:
        """Whether ``path`` is open in a JupyterLab editor. An editor that held the agent's unsaved change and
        is gone (a reload takes a moment to announce it again) gets its change written to the file first."""
        if editors.is_open(shown_as):
            return True
        if ctx.contents_manager is None or editors.agent_text(shown_as) is None:
            return False
        if await editors.reclaim(shown_as, ctx.contents_manager):
            return True
        if self.state.has_read(ctx.session_id, path):
            self.state.record_read(ctx.session_id, path)  # it now holds what the agent made of it
        return False

    async def _apply_live(
        self, args: ArgsT, ctx: ToolContext, editors: LiveTextGateway, path: Path, shown_as: str
    ) -> ToolOutput:
        """The file is open in a JupyterLab editor with unsaved changes: the edit goes into the editor,
        merged with the user's unsaved typing, not to the disk behind the editor's back (the end of the turn
        saves it when the user's typing is gone, else leaves it to the user; see ``LiveNotebooks.settle``)."""
        raw = await asyncio.to_thread(self._checked_bytes, ctx, args.filepath, path, shown_as)
        on_disk = decode_text_file(raw, shown_as)
        before = _as_the_agent_knows_it(ctx, shown_as, on_disk)
        planned = self._planned(args, before, shown_as)
        await editors.edit_text(shown_as, before.text, planned.text, on_disk.text)

        change = TextChange(path, planned.text, before.text)
        undo_id = f"undo-{uuid.uuid4().hex[:12]}"
        self.notebook_undo.record(
            UndoEntry(
                ctx.session_id,
                ctx.call_id,
                shown_as,
                f"{self.name} in the open editor",
                text_take_back(editors, shown_as, change),
                text_change=change,
            )
        )
        output = describe_edit(shown_as, before.text, planned, undo_id, before.text, self.name)
        output.content += (
            "\n(Applied in the editor where the file is open in JupyterLab, with the user's unsaved typing "
            "kept; saved at the end of your turn unless the user has unsaved edits there.)"
        )
        output.details["live"] = True
        return output

    def _checked_bytes(self, ctx: ToolContext, filepath: str, path: Path, shown_as: str) -> bytes:
        """The file's bytes, after the checks every edit passes (exists, fresh, not too large, approved)."""
        if not path.is_file():
            suggestions = similar_paths(ctx.root_dir, filepath)
            hint = f"Did you mean: {', '.join(suggestions)}? " if suggestions else ""
            raise ToolError(
                E_PATH_NOT_FOUND,
                user_text("%1 does not exist", repr(filepath)),
                hint + "New files: create_new_file.",
            )
        self.state.check_fresh(ctx.session_id, path, shown_as)
        if path.stat().st_size > MAX_EDIT_BYTES:
            raise ToolError(
                E_FILE_TOO_LARGE,
                user_text(
                    "%1 is larger than %2 MB; the edit tools do not change it",
                    shown_as,
                    MAX_EDIT_BYTES // (1024 * 1024),
                ),
                user_text("Change it with run_terminal_command (e.g. sed) instead."),
            )
        raw = path.read_bytes()
        approved_hash = self._previewed.pop(ctx.call_id, None)
        if approved_hash is not None and approved_hash != hashlib.sha256(raw).hexdigest():
            raise ToolError(
                E_FILE_CHANGED,
                user_text(
                    ("%1 changed while the edit waited for approval; the approved diff no longer applies"),
                    shown_as,
                ),
                user_text("Read %1 again and redo the edit.", shown_as),
            )
        return raw

    def _apply(self, args: ArgsT, ctx: ToolContext) -> ToolOutput:
        path, shown_as = self._target(args.filepath, ctx)
        raw = self._checked_bytes(ctx, args.filepath, path, shown_as)
        before = _as_the_agent_knows_it(ctx, shown_as, decode_text_file(raw, shown_as))
        planned = self._planned(args, before, shown_as)
        return write_edit(self.state, ctx, path, shown_as, before, planned, self.name)


def write_edit(
    state: FileStateStore,
    ctx: ToolContext,
    path: Path,
    shown_as: str,
    before: TextFile | None,
    planned: PlannedEdit,
    tool_name: str,
) -> ToolOutput:
    """Write the edit atomically, record undo and the new read state, and describe it (``before`` None:
    the file is created)."""
    new_raw = before.encode(planned.text) if before is not None else planned.text.encode("utf-8")
    status_before = path.stat() if before is not None else None
    new_hash = _Sha256(new_raw)  # hashing overlaps the write and its fsync: both release the GIL
    try:
        atomic_write(path, new_raw)
    except OSError as error:
        raise ToolError(
            E_WRITE_FAILED, user_text("could not write %1: %2; the file is unchanged", shown_as, error)
        ) from None
    finally:
        content_hash = new_hash.result()
    prior = before.raw if before is not None else None
    record = state.record_prior(ctx.session_id, path, prior, after_sha256=content_hash, shown_as=shown_as)
    state.record_read(ctx.session_id, path, fingerprint_of(path.stat(), content_hash))
    prior_content = None
    if prior is not None and len(prior) <= PRIOR_CONTENT_MAX_BYTES:
        prior_content = prior.decode("utf-8")
    output = describe_edit(
        shown_as, before.text if before else None, planned, record.record_id, prior_content, tool_name
    )
    output.details["prior_size"] = status_before.st_size if status_before else 0
    return output


def describe_edit(
    shown_as: str,
    before: str | None,
    planned: PlannedEdit,
    undo_id: str,
    prior_content: str | None,
    tool_name: str,
) -> ToolOutput:
    """The result of an edit: the summary and changed lines for the model, the diff and prior for the UI
    (``before`` None: the file was created)."""
    diff = unified_diff(before or "", planned.text, shown_as, created=before is None)
    if len(diff) > DETAILS_DIFF_MAX_CHARS:
        diff = diff[:DETAILS_DIFF_MAX_CHARS] + f"\n... (diff cut at {DETAILS_DIFF_MAX_CHARS:,} characters)\n"
    excerpt = numbered_excerpt(planned.text, planned.changed)
    content = f"{planned.summary}\n" + (f"The changed lines now read:\n{excerpt}" if excerpt else "")
    details: dict[str, Any] = {
        "path": shown_as,
        "diff": diff,
        "undo_id": undo_id,
        "prior_exists": before is not None,
        "prior_content": prior_content,
        "prior_size": len(before.encode("utf-8")) if before is not None else 0,
        "tool": tool_name,
    }
    return ToolOutput(content.rstrip("\n"), details)


def live_editors(ctx: ToolContext) -> LiveTextGateway | None:
    """The text files open in JupyterLab's editors (``documents/live_texts.py``), if this context has them."""
    return ctx.text_editors


def _as_the_agent_knows_it(ctx: ToolContext, shown_as: str, on_disk: TextFile) -> TextFile:
    """The file as the agent made it while its change waits unsaved in an open editor, else as on disk:
    what the agent's next edit is computed on."""
    editors = live_editors(ctx)
    agent_text = editors.agent_text(shown_as) if editors is not None else None
    return on_disk if agent_text is None else dataclasses.replace(on_disk, text=agent_text)


def text_take_back(
    editors: LiveTextGateway | None, shown_as: str, change: TextChange
) -> Callable[[], Awaitable[None]]:
    """The undo of an agent edit made in an open editor: merged back out of the editor, else (the editor is
    gone, or no tab can hold one: a CLI) out of the file. Also what a restarted server rebuilds from the
    stored ``TextChange``."""

    async def take_back() -> None:
        step = TextEdit(before=change.before, after=change.planned)
        if editors is None or not await editors.revert(shown_as, step):
            await asyncio.to_thread(
                _take_back_from_file, change.file, shown_as, change.planned, change.before
            )

    return take_back


def _take_back_from_file(path: Path, shown_as: str, agent_made: str, before: str) -> None:
    """Undo of an editor change that has reached the file since (saved, or written when the editor went)."""
    on_disk = decode_text_file(path.read_bytes(), shown_as)
    restored = merge_texts(agent_made, on_disk.text, before)
    if isinstance(restored, MergeConflict):
        raise ToolError(
            E_FILE_CHANGED,
            f"{shown_as}: the lines the agent changed were edited since; they were left as they are",
            "Change them back by hand if you want the agent's change undone.",
        )
    atomic_write(path, on_disk.encode(restored))


class _Sha256:
    """The SHA-256 of ``content``, computed on a thread of its own when the content is large."""

    def __init__(self, content: bytes) -> None:
        self._digest: str | None = None
        self._thread: threading.Thread | None = None
        if len(content) < BACKGROUND_HASH_MIN_BYTES:
            self._digest = hashlib.sha256(content).hexdigest()
        else:
            self._thread = threading.Thread(target=self._hash, args=(content,), daemon=True)
            self._thread.start()

    def _hash(self, content: bytes) -> None:
        self._digest = hashlib.sha256(content).hexdigest()

    def result(self) -> str:
        if self._thread is not None:
            self._thread.join()
        assert self._digest is not None
        return self._digest
