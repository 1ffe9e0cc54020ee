"""Undoing turns exactly: checkpoints, an undo planned before anything is applied, and redo.

The file tools and the notebook tools each record the prior state before they change anything (per agent
session; ``FileStateStore`` and ``NotebookUndoStore``). Every turn takes a mark of both histories when it
starts: that mark is the turn's checkpoint. Restoring a checkpoint undoes that turn and every later one.

An undo is planned first and applied all or nothing. Every inverse step of the turns, newest first, is checked
against a simulation of the documents as the steps before it would leave them: a file must still have the
bytes the agent wrote (by SHA-256) and no unsaved changes in an open editor, a notebook file the
``last_modified`` the agent's save left, a cell in an open notebook the source (and execution count) the agent
left. When any step conflicts nothing is applied, and ``UndoConflicts`` names each cell or file concerned.
Applying is not a transaction: if a step fails after the plan passed (the JupyterLab tab holding the notebook
disconnects mid-undo, the disk is full), the steps before it stay applied and the error is reported.

Every applied step gives back the step that re-does it: an undo can be redone (all or nothing too) until the
next turn starts. A redo re-records its changes in the tools' histories, so the redone turns are checkpoints
again.

A redo writes what the agent wrote without asking again, so it refuses (a conflict, nothing applied) when
one of its files or notebooks is a protected path now (``permissions/protected.py``: a module that shadows an
import next to a notebook that appeared since, an instruction file, a virtualenv, …) — the user asks the
agent to make that change again, and the tool asks. An undo writes back what was there before the agent's
change, where the agent changed it: the user's own click, which protection does not stop.

Paths in results and events are Jupyter contents paths (relative to the server root, ``/``-separated): the
form the frontend finds open editors and notebooks by.

The histories, the checkpoints and what can be redone are written through to the conversation store as they
change (``agent/undo_records.py``) and loaded when the server starts: a restart keeps them. The store is
bounded (``undo_history_mb``): the oldest checkpoints go first (``drop_oldest_checkpoint``).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..documents.edits import apply_edit, cell_index, cell_source, cell_words
from ..documents.history import UndoEntry
from ..documents.inverse import InverseEdit, inverse_of
from ..permissions.protected import write_protection
from ..tools.base import ToolContext, ToolError
from ..tools.builtin.edit.filestate import (
    FileStateStore,
    UndoRecord,
    atomic_write,
    ensure_unmoved,
    moved_reason,
)
from ..tools.jupyter.notebook_runtime import NotebookRuntime
from ..tools.state import ToolState
from ..user_text import join_texts, user_text


@dataclass
class TurnMark:
    """A turn's checkpoint: where the file and notebook histories stood when it started."""

    turn_id: str
    file_records: int
    notebook_entries: int
    # When the turn started: the bound on the stored history drops the oldest checkpoints first.
    created: float = field(default_factory=time.time)


@dataclass(frozen=True)
class UndoConflict:
    """One step an undo cannot apply without losing what the user did since."""

    path: str
    cell_id: str | None
    reason: str
    # The cell as the user knows it ("cell 4 (df.head())"): its id is for the model and the wire only.
    cell_label: str | None = None

    def line(self) -> str:
        if self.cell_label:
            return user_text("%1 of %2: %3", self.cell_label, self.path, self.reason)
        return user_text("%1: %2", self.path, self.reason)


class NothingToUndo(Exception):
    pass


class NothingToRedo(Exception):
    pass


class UndoConflicts(Exception):
    """Nothing was applied: these steps conflict with what the user changed since."""

    def __init__(self, conflicts: list[UndoConflict]) -> None:
        self.conflicts = conflicts
        lines = [conflict.line() for conflict in conflicts]
        super().__init__(user_text("some of it changed since: %1", join_texts("; ", lines)))


@dataclass
class UndoResult:
    """What an undo, a restore or a redo did."""

    turn_ids: list[str]
    restored: list[str]
    # Every document it touched, as contents paths: the frontend reloads each open view of them.
    paths: list[str]


def _sha256(content: bytes | None) -> str | None:
    return None if content is None else hashlib.sha256(content).hexdigest()


@dataclass
class Simulation:
    """The documents as the steps planned so far would leave them; filled from the real ones on first use."""

    unsaved: frozenset[str] = frozenset()
    conflicts: list[UndoConflict] = field(default_factory=list)
    files: dict[Path, str | None] = field(default_factory=dict)
    notebooks: dict[str, Any] = field(default_factory=dict)
    stamps: dict[str, Any] = field(default_factory=dict)

    def conflict(
        self, path: str, reason: str, cell_id: str | None = None, cell_label: str | None = None
    ) -> None:
        self.conflicts.append(UndoConflict(path, cell_id, reason, cell_label))

    def file_hash(self, path: Path) -> str | None:
        if path not in self.files:
            try:
                self.files[path] = _sha256(path.read_bytes())
            except FileNotFoundError:
                self.files[path] = None
        return self.files[path]


class Step(Protocol):
    """One change to take back (or to re-do): checked against the simulation, then applied."""

    @property
    def path(self) -> str:
        """The document it changes, as a contents path."""
        ...

    @property
    def description(self) -> str: ...

    async def check(self, simulation: Simulation) -> None:
        """Record a conflict in ``simulation``, or move the simulation past this step."""
        ...

    async def apply(self) -> Step | None:
        """Apply it (after every step of the plan checked); returns the step that takes it back."""
        ...


@dataclass
class FileStep:
    """Put a file's bytes back (``content`` None: delete it) while it has the bytes it is expected to."""

    store: FileStateStore
    session_id: str
    file: Path
    path: str
    content: bytes | None
    # SHA-256 the file must have now (None: it must not exist); ``checked`` False: unknown, not checked.
    expected_sha256: str | None
    checked: bool
    description: str
    # An undo's step: the history record it takes back (dropped when applied). A redo's step has none and
    # records its change as a new one, so it can be undone again.
    record: UndoRecord | None = None

    async def check(self, simulation: Simulation) -> None:
        # Re-resolved now: a folder swapped for a link since the change was recorded is not followed.
        moved = moved_reason(self.file)
        if moved is not None:
            simulation.conflict(self.path, moved)
        elif self.checked and simulation.file_hash(self.file) != self.expected_sha256:
            simulation.conflict(self.path, "the file changed after the agent wrote it")
        elif self.path in simulation.unsaved:
            simulation.conflict(
                self.path, "the file has unsaved changes in JupyterLab; save or revert them first"
            )
        simulation.files[self.file] = _sha256(self.content)

    async def apply(self) -> Step | None:
        ensure_unmoved(self.file, self.path)  # again: the plan was checked a moment ago
        try:
            current: bytes | None = self.file.read_bytes()
        except FileNotFoundError:
            current = None
        if self.record is not None:
            self.store.restore(self.record)
        else:
            if self.content is None:
                self.file.unlink(missing_ok=True)
            else:
                self.file.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(self.file, self.content)
            self.store.record_prior(
                self.session_id,
                self.file,
                current,
                after_sha256=_sha256(self.content),
                shown_as=self.path,
                after_absent=self.content is None,
            )
            self.store.forget_read(self.session_id, self.file)
        return FileStep(
            self.store,
            self.session_id,
            self.file,
            self.path,
            current,
            _sha256(self.content),
            True,
            (
                user_text("%1: deleted", self.path)
                if current is None
                else user_text("%1: written again", self.path)
            ),
        )


@dataclass
class NotebookCellStep:
    """Apply one cell edit to a notebook (the open tab's model, else its file), while the cell is as the
    agent left it (``InverseEdit.plan``)."""

    notebooks: NotebookRuntime
    ctx: ToolContext
    path: str
    inverse: InverseEdit
    description: str
    # An undo's step: the history entry it takes back. A redo's step records its change as a new one.
    entry: UndoEntry | None = None
    _skip: bool = False
    _forward: InverseEdit | None = None

    async def check(self, simulation: Simulation) -> None:
        notebook = simulation.notebooks.get(self.path)
        if notebook is None:
            try:
                notebook = await self.notebooks.undo_view(self.ctx, self.path)
            except ToolError as error:
                simulation.conflict(self.path, error.message)
                return
            simulation.notebooks[self.path] = notebook
        verdict = self.inverse.plan(notebook)
        if verdict == "skip":
            self._skip = True
        elif verdict == "apply":
            self._skip = False
            self._forward = inverse_of(notebook, self.inverse.edit)
            apply_edit(notebook, self.inverse.edit)
        else:
            index = cell_index(notebook, self.inverse.cell_id)
            source = cell_source(notebook.cells[index]) if index is not None else ""
            simulation.conflict(self.path, verdict, self.inverse.cell_id, cell_words(index, source))

    async def apply(self) -> Step | None:
        if self.entry is not None:
            self.notebooks.undo.remove(self.entry)
            if not self._skip:
                await self.notebooks.apply_planned(self.ctx, self.path, self.inverse.edit)
        elif not self._skip:
            await self.notebooks.change(self.ctx, self.path, self.inverse.edit, self.description)
        if self._skip or self._forward is None:
            return None
        return NotebookCellStep(self.notebooks, self.ctx, self.path, self._forward, self.description)


@dataclass
class NotebookFileStep:
    """Put a notebook file's content back (``content`` None: delete it), while the file is as the agent's
    save left it (by ``last_modified``)."""

    notebooks: NotebookRuntime
    ctx: ToolContext
    path: str
    content: str | None
    expected_stamp: Any
    # The ``last_modified`` of the state it puts back, for the steps after it in the plan.
    restores_stamp: Any
    description: str
    entry: UndoEntry | None = None

    async def check(self, simulation: Simulation) -> None:
        if self.path not in simulation.stamps:
            simulation.stamps[self.path] = await self.notebooks.file_stamp(self.ctx, self.path)
        if simulation.stamps[self.path] != self.expected_stamp:
            simulation.conflict(self.path, "the notebook file changed after the agent saved it")
        elif self.path in simulation.unsaved:
            simulation.conflict(
                self.path, "the notebook has unsaved changes in JupyterLab; save or revert them first"
            )
        simulation.stamps[self.path] = self.restores_stamp

    async def apply(self) -> Step | None:
        before, after = await self.notebooks.replace_file(self.ctx, self.path, self.content)
        if self.entry is not None:
            self.notebooks.undo.remove(self.entry)
            self.notebooks.undo.restamp(self.ctx.session_id, self.path, self.restores_stamp, after)
        else:
            self.notebooks.record_file_replacement(self.ctx, self.path, before, after, self.description)
        return NotebookFileStep(
            self.notebooks,
            self.ctx,
            self.path,
            before.content,
            after,
            before.last_modified,
            self.description,
        )


def file_step(store: FileStateStore, record: UndoRecord) -> FileStep:
    """The step that takes back one recorded file change."""
    path = record.shown_as or str(record.path)
    what = (
        user_text("%1: deleted (the turn created it)", path)
        if record.prior is None
        else user_text("%1: restored", path)
    )
    return FileStep(
        store,
        record.session_id,
        record.path,
        path,
        record.prior,
        record.after_sha256,
        record.after_sha256 is not None or record.after_absent,
        what,
        record=record,
    )


def notebook_step(notebooks: NotebookRuntime, entry: UndoEntry) -> Step:
    """The step that takes back one recorded notebook change."""
    description = user_text("%1: %2", entry.path, entry.description)
    if entry.ctx is not None and entry.inverse is not None:
        return NotebookCellStep(notebooks, entry.ctx, entry.path, entry.inverse, description, entry=entry)
    if entry.ctx is not None and entry.snapshot is not None:
        return NotebookFileStep(
            notebooks,
            entry.ctx,
            entry.path,
            entry.snapshot.content,
            entry.after_stamp,
            entry.snapshot.last_modified,
            description,
            entry=entry,
        )
    return _OpaqueStep(notebooks, entry, description)


@dataclass
class _OpaqueStep:
    """A notebook change recorded without what a plan needs (only its restore): applied as it is."""

    notebooks: NotebookRuntime
    entry: UndoEntry
    description: str

    @property
    def path(self) -> str:
        return self.entry.path

    async def check(self, simulation: Simulation) -> None:
        return None

    async def apply(self) -> Step | None:
        await self.entry.restore()
        self.notebooks.undo.remove(self.entry)
        return None


@dataclass
class _Redo:
    """An undo that can be redone: per undone turn (oldest first), the steps that re-do it, in order."""

    turns: list[tuple[str, list[Step]]]


Redo = _Redo


class UndoStateSink(Protocol):
    """Where a session's checkpoints and redo stack are kept beyond the server's memory."""

    def undo_state_changed(self, session_id: str, marks: list[TurnMark], redo: list[_Redo]) -> None: ...

    def turn_started(self, undo: TurnUndo, session_id: str, turn_id: str) -> None:
        """A new checkpoint was taken: the moment to keep the stored history under its bound."""
        ...

    def session_forgotten(self, session_id: str) -> None: ...


def protected_redo(step: Step) -> UndoConflict | None:
    """A conflict when ``step`` (of a redo) would write or delete a path that is protected now."""
    if isinstance(step, FileStep):
        root = _server_root(step.file, step.path)
        target, deleting = step.file, step.content is None
    elif isinstance(step, (NotebookCellStep, NotebookFileStep)):
        root = Path(os.path.realpath(step.ctx.root_dir))
        target = root / step.path
        deleting = isinstance(step, NotebookFileStep) and step.content is None
    else:
        return None
    protection = write_protection(Path(os.path.realpath(target)), root, step.path, delete=deleting)
    if protection is None:
        return None
    return UndoConflict(
        step.path,
        None,
        f"it is a protected path now ({protection.reason}): a redo does not change it without asking; "
        "ask the agent to make this change again",
    )


def _server_root(file: Path, contents_path: str) -> Path:
    """The root ``contents_path`` (relative to the server root, as the file tools record it) is relative to;
    ``/`` for a path recorded absolute (outside the root: every name then counts)."""
    depth = len(Path(contents_path).parts)
    if Path(contents_path).is_absolute() or depth == 0 or depth >= len(file.parts):
        return Path("/")
    return Path(os.path.realpath(file.parents[depth - 1]))


async def plan(steps: list[Step], unsaved: frozenset[str] = frozenset()) -> list[UndoConflict]:
    """Check every step in order against the simulated documents; returns the conflicts (none: it applies)."""
    simulation = Simulation(unsaved=unsaved)
    for step in steps:
        await step.check(simulation)
    return simulation.conflicts


class TurnUndo:
    """Checkpoints, planned undo and redo over the histories in ``state`` (the ``ToolState`` the file and
    notebook tools were built with), per agent session."""

    def __init__(self, state: ToolState) -> None:
        self.file_state = state.files
        self.notebooks = state.notebooks
        self._checkpoints: dict[str, list[TurnMark]] = {}
        self._redo: dict[str, list[_Redo]] = {}
        # One undo, restore or redo at a time per session: two clicks must not both plan on the same state
        # and then both apply.
        self._locks: dict[str, asyncio.Lock] = {}
        self.sink: UndoStateSink | None = None

    # -- persistence -----------------------------------------------------------------------------------------

    def _changed(self, session_id: str) -> None:
        if self.sink is not None:
            self.sink.undo_state_changed(
                session_id, list(self._checkpoints.get(session_id, [])), list(self._redo.get(session_id, []))
            )

    def load(self, session_id: str, marks: list[TurnMark], redo: list[_Redo]) -> None:
        """Put back a session's checkpoints and redo stack as a restarted server found them in the store."""
        if marks:
            self._checkpoints[session_id] = list(marks)
        if redo:
            self._redo[session_id] = list(redo)

    def sessions(self) -> list[str]:
        """The sessions with checkpoints or something to redo."""
        return list(dict.fromkeys([*self._checkpoints, *self._redo]))

    def marks(self, session_id: str) -> list[TurnMark]:
        return list(self._checkpoints.get(session_id, []))

    def redo_stack(self, session_id: str) -> list[_Redo]:
        return list(self._redo.get(session_id, []))

    def drop_oldest_checkpoint(self, session_id: str) -> str | None:
        """Forget the session's oldest checkpoint and the changes recorded before the next one (the stored
        history grew past its bound): that turn can no longer be undone or restored to. Returns its turn id.

        Not while an undo or a redo of the session is running (its plan holds those records)."""
        lock = self._locks.get(session_id)
        marks = self._checkpoints.get(session_id)
        if not marks or (lock is not None and lock.locked()):
            return None
        oldest = marks.pop(0)
        if marks:
            files, notebooks = marks[0].file_records, marks[0].notebook_entries
        else:
            files = len(self.file_state.records(session_id))
            notebooks = self.notebooks.undo.mark(session_id)
        self.file_state.drop_oldest(session_id, files)
        self.notebooks.undo.drop_oldest(session_id, notebooks)
        for mark in marks:
            mark.file_records -= files
            mark.notebook_entries -= notebooks
        if not marks:
            self._checkpoints.pop(session_id, None)
        self._changed(session_id)
        return oldest.turn_id

    # -- checkpoints -----------------------------------------------------------------------------------------

    def mark(self, session_id: str, turn_id: str) -> TurnMark:
        """A turn starts: its checkpoint. A new turn ends what could be redone."""
        mark = TurnMark(
            turn_id=turn_id,
            file_records=len(self.file_state.records(session_id)),
            notebook_entries=self.notebooks.undo.mark(session_id),
        )
        self._checkpoints.setdefault(session_id, []).append(mark)
        self._redo.pop(session_id, None)
        self._changed(session_id)
        if self.sink is not None:
            self.sink.turn_started(self, session_id, turn_id)
        return mark

    def checkpoints(self, session_id: str) -> list[str]:
        """The turns that can be restored to, oldest first."""
        return [mark.turn_id for mark in self._checkpoints.get(session_id, [])]

    def can_redo(self, session_id: str) -> bool:
        return bool(self._redo.get(session_id))

    def last_turn(self, session_id: str) -> str | None:
        marks = self._checkpoints.get(session_id)
        return marks[-1].turn_id if marks else None

    # -- undo ------------------------------------------------------------------------------------------------

    def turn_steps(self, session_id: str, mark: TurnMark, until: TurnMark | None = None) -> list[Step]:
        """The steps that take back what was recorded from ``mark`` up to ``until`` (else to now), newest
        first."""
        notebook_entries = self.notebooks.undo.entries(session_id)[
            mark.notebook_entries : until.notebook_entries if until is not None else None
        ]
        file_records = self.file_state.records(session_id)[
            mark.file_records : until.file_records if until is not None else None
        ]
        # A change the user kept (or undid alone) is final: no whole-turn undo or restore takes it back.
        steps: list[Step] = [
            notebook_step(self.notebooks, entry) for entry in reversed(notebook_entries) if not entry.reviewed
        ]
        steps += [file_step(self.file_state, record) for record in reversed(file_records)]
        return steps

    async def restore(
        self, session_id: str, turn_id: str, unsaved: frozenset[str] = frozenset()
    ) -> UndoResult:
        """Undo turn ``turn_id`` and every turn after it, all or nothing.

        ``unsaved``: contents paths open with unsaved changes in JupyterLab; a file the undo would write on
        disk under them conflicts (the editor's next save would bring the agent's change back).
        Raises ``NothingToUndo`` (unknown turn, or nothing changed since) or ``UndoConflicts``.
        """
        async with self._locks.setdefault(session_id, asyncio.Lock()):
            return await self._restore(session_id, turn_id, unsaved)

    async def _restore(self, session_id: str, turn_id: str, unsaved: frozenset[str]) -> UndoResult:
        marks = self._checkpoints.get(session_id, [])
        position = next((i for i, mark in enumerate(marks) if mark.turn_id == turn_id), None)
        if position is None:
            raise NothingToUndo(
                f"turn {turn_id} cannot be restored (it was undone, or its checkpoint was removed to keep "
                "the undo history under its size limit)"
            )
        undone = marks[position:]
        # Per turn, newest first: a turn's steps run from its mark to the next turn's mark.
        per_turn: list[tuple[str, list[Step]]] = []
        for index in range(len(undone) - 1, -1, -1):
            following = undone[index + 1] if index + 1 < len(undone) else None
            per_turn.append((undone[index].turn_id, self.turn_steps(session_id, undone[index], following)))
        ordered = [step for _, steps in per_turn for step in steps]
        if not ordered:
            raise NothingToUndo(f"turn {turn_id} and the turns after it changed no file or notebook")
        conflicts = await plan(ordered, unsaved)
        if conflicts:
            raise UndoConflicts(conflicts)
        redo_turns: list[tuple[str, list[Step]]] = []
        for undone_turn, steps in per_turn:
            redo_steps = [redo for step in steps if (redo := await step.apply()) is not None]
            redo_turns.insert(0, (undone_turn, list(reversed(redo_steps))))
        del marks[position:]
        self._redo.setdefault(session_id, []).append(_Redo(redo_turns))
        self._changed(session_id)
        return UndoResult(
            turn_ids=[mark.turn_id for mark in undone],
            restored=[step.description for step in ordered],
            paths=_unique(step.path for step in ordered),
        )

    async def undo_last(self, session_id: str, unsaved: frozenset[str] = frozenset()) -> UndoResult:
        """Undo the last turn (the composer's Undo), all or nothing."""
        last = self.last_turn(session_id)
        if last is None:
            raise NothingToUndo("no turn to undo in this session")
        return await self.restore(session_id, last, unsaved)

    async def redo(self, session_id: str, unsaved: frozenset[str] = frozenset()) -> UndoResult:
        """Re-do the last undo or restore, all or nothing; its turns become checkpoints again."""
        async with self._locks.setdefault(session_id, asyncio.Lock()):
            return await self._redo_last(session_id, unsaved)

    async def _redo_last(self, session_id: str, unsaved: frozenset[str]) -> UndoResult:
        stack = self._redo.get(session_id)
        if not stack:
            raise NothingToRedo("nothing to redo: no undo since the last turn")
        redo = stack[-1]
        ordered = [step for _, steps in redo.turns for step in steps]
        conflicts = [conflict for step in ordered if (conflict := protected_redo(step)) is not None]
        conflicts += await plan(ordered, unsaved)
        if conflicts:
            raise UndoConflicts(conflicts)
        stack.pop()
        for turn_id, steps in redo.turns:
            self._checkpoints.setdefault(session_id, []).append(
                TurnMark(
                    turn_id=turn_id,
                    file_records=len(self.file_state.records(session_id)),
                    notebook_entries=self.notebooks.undo.mark(session_id),
                )
            )
            for step in steps:
                await step.apply()
        self._changed(session_id)
        return UndoResult(
            turn_ids=[turn_id for turn_id, _ in redo.turns],
            restored=[step.description for step in ordered],
            paths=_unique(step.path for step in ordered),
        )

    async def undo_cell(self, session_id: str, mark: TurnMark, path: str, cell_id: str) -> list[str]:
        """Undo what the turn did to one cell of a notebook open in JupyterLab; its other changes stay."""
        entries = await self.notebooks.undo.undo_cell_since(session_id, mark.notebook_entries, path, cell_id)
        restored: list[str] = [user_text("%1: %2", entry.path, entry.description) for entry in entries]
        if not restored:
            raise NothingToUndo(f"turn {mark.turn_id} left nothing to undo in cell {cell_id} of {path}")
        return restored

    def keep_cell(self, session_id: str, path: str, cell_id: str) -> int:
        """The user keeps what the turns since the first checkpoint did to one cell of an open notebook:
        undo, undo-all and restore leave it from now on. Returns how many changes that was."""
        mark = self.first_mark(session_id)
        if mark is None:
            return 0
        return self.notebooks.undo.keep_cell_since(session_id, mark.notebook_entries, path, cell_id)

    def first_mark(self, session_id: str) -> TurnMark | None:
        """The oldest checkpoint: a cell's change stays reviewable from then on, until kept or undone."""
        marks = self._checkpoints.get(session_id)
        return marks[0] if marks else None

    def last_mark(self, session_id: str) -> TurnMark | None:
        marks = self._checkpoints.get(session_id)
        return marks[-1] if marks else None

    async def forget_session(self, session_id: str) -> None:
        """The conversation was deleted: its checkpoints and redo (the records are the tools' state's, which
        the runtime asks to forget too)."""
        self._checkpoints.pop(session_id, None)
        self._redo.pop(session_id, None)
        self._locks.pop(session_id, None)
        if self.sink is not None:
            self.sink.session_forgotten(session_id)


def _unique(paths: Any) -> list[str]:
    return list(dict.fromkeys(paths))
