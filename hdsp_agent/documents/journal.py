"""The server's record of the agent's changes to open documents that are not saved yet (one journal per path).

A change the agent makes to a notebook open in JupyterLab lives in that tab's notebook model until the
document is saved. A reload or a closed tab would drop it while the chat says "Done", and the turn's later
steps would land in a notebook without it. So every change applied through the NotebookBridge is also written
here, and stays until the document is saved (any save of the path through the contents manager: the user's,
autosave's, or the agent's own at the end of a turn). From the journal a reopened notebook gets the changes
back (``replayable``), and a notebook no tab holds any more gets them written to its file (``replay_onto``).

Entries are edits from ``edits.py`` (cells addressed by id), so replaying them onto the file's content gives
the agent's changes without touching anything else. An edit whose cell is gone is skipped, never forced.

The same for a text file open in an editor: ``TextJournal`` keeps the agent's unsaved text per path.

Both are written through to a ``JournalSink`` (the conversation store, when the server attached one) as they
change, and loaded from it when the server starts: a restarted server replays the agent's unsaved changes into
the reopened tab as a reloaded page would get them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Protocol

import nbformat
from pydantic import BaseModel

from ..tools.base import ToolError
from .edits import DeleteCell, InsertCell, apply_edit, cell_index, cell_source, parse_edit


class JournalSink(Protocol):
    """Where journals are kept beyond the server's memory: each path's whole journal, on every change."""

    def notebook_journal_changed(self, path: str, edits: list[dict[str, Any]]) -> None:
        """``path``'s journaled edits now (none: the path has no journal any more)."""
        ...

    def text_journal_changed(self, path: str, base: str | None, agent: str | None) -> None:
        """``path``'s unsaved agent text now (None: none any more)."""
        ...


@dataclass
class AgentText:
    """The agent's unsaved change to a text file open in an editor (cleared when the file is saved)."""

    # The file's text when the agent first changed the open editor.
    base: str
    # The text as the agent made it: what it believes the file is, and what its next edit is computed on.
    agent: str


class TextJournal(dict[str, AgentText]):
    """The agent's unsaved text per path, written through to ``sink`` on every change (replace a record to
    change it: one changed in place is not written)."""

    sink: JournalSink | None = None

    def __setitem__(self, path: str, record: AgentText) -> None:
        super().__setitem__(path, record)
        if self.sink is not None:
            self.sink.text_journal_changed(path, record.base, record.agent)

    def __delitem__(self, path: str) -> None:
        super().__delitem__(path)
        if self.sink is not None:
            self.sink.text_journal_changed(path, None, None)

    def pop(self, path: str, *default: Any) -> Any:  # type: ignore[override]
        had = path in self
        value = super().pop(path, *default)
        if had and self.sink is not None:
            self.sink.text_journal_changed(path, None, None)
        return value

    def load(self, path: str, base: str, agent: str) -> None:
        super().__setitem__(path, AgentText(base, agent))


@dataclass
class JournalEntry:
    edit: BaseModel
    # The tab confirmed it applied the edit. A save can only contain acknowledged edits: one still on its way
    # to the tab when the document is saved stays in the journal.
    acknowledged: bool = False


@dataclass
class DocumentJournal:
    _entries: dict[str, list[JournalEntry]] = field(default_factory=dict)
    sink: JournalSink | None = None

    def _write(self, *paths: str) -> None:
        if self.sink is not None:
            for path in paths:
                edits = [entry.edit.model_dump() for entry in self._entries.get(path, [])]
                self.sink.notebook_journal_changed(path, edits)

    def load(self, path: str, edits: list[dict[str, Any]]) -> None:
        """A restarted server's journal for ``path``, from the store. Every edit counts as acknowledged: the
        tab that held it is gone, and replaying skips what the reopened notebook already has."""
        entries = [JournalEntry(parse_edit(edit), acknowledged=True) for edit in edits]
        if entries:
            self._entries[path] = entries

    def record(self, path: str, edit: BaseModel) -> JournalEntry:
        entry = JournalEntry(edit)
        self._entries.setdefault(path, []).append(entry)
        self._write(path)
        return entry

    def discard(self, path: str, entry: JournalEntry) -> None:
        """The edit was not applied (the tab refused it or went away before answering)."""
        entries = self._entries.get(path, [])
        if entry in entries:
            entries.remove(entry)
        if not entries:
            self._entries.pop(path, None)
        self._write(path)

    def entries(self, path: str) -> list[JournalEntry]:
        return list(self._entries.get(path, []))

    def has(self, path: str) -> bool:
        return bool(self._entries.get(path))

    def paths(self) -> list[str]:
        return [path for path, entries in self._entries.items() if entries]

    def saved(self, path: str) -> None:
        """``path`` was saved: the edits the tab had applied are in the file now."""
        if path not in self._entries:
            return  # most saves: nothing journaled, nothing to write
        left = [entry for entry in self._entries.get(path, []) if not entry.acknowledged]
        if left:
            self._entries[path] = left
        else:
            self._entries.pop(path, None)
        self._write(path)

    def forget(self, path: str) -> None:
        """The journal's edits were written to the file (no tab held it)."""
        if self._entries.pop(path, None) is not None:
            self._write(path)

    def renamed(self, old: str, new: str) -> None:
        if old in self._entries:
            self._entries[new] = self._entries.pop(old)
            self._write(old, new)


def replayable(notebook: nbformat.NotebookNode, edits: list[BaseModel]) -> list[BaseModel]:
    """The edits of ``edits`` that still apply to ``notebook``, in order, as they would be replayed.

    A notebook that already has an edit's effect (the inserted cell is there, the deleted cell is gone) or
    lost the cell an edit addresses skips that edit; the others apply in order, each seeing the ones before.
    """
    working = copy.deepcopy(notebook)
    kept: list[BaseModel] = []
    for edit in edits:
        if isinstance(edit, InsertCell) and cell_index(working, str(edit.cell.get("id"))) is not None:
            continue
        if isinstance(edit, DeleteCell) and cell_index(working, edit.cell_id) is None:
            continue
        try:
            apply_edit(working, edit)
        except ToolError:
            continue  # the cell the edit addresses is gone
        kept.append(edit)
    return kept


def replay_onto(notebook: nbformat.NotebookNode, edits: list[BaseModel]) -> nbformat.NotebookNode:
    """A copy of ``notebook`` with the edits that still apply replayed onto it."""
    working = copy.deepcopy(notebook)
    for edit in replayable(working, edits):
        apply_edit(working, edit)
    return working


def cell_texts(notebook: nbformat.NotebookNode | dict[str, Any]) -> list[tuple[str, str]]:
    """Each cell's type and source: what the user typed, to tell whether a notebook holds edits of theirs.

    Outputs, execution counts, metadata and ids are left out: a kernel starting or a cell run changes them
    without the user typing anything, and ids of old notebooks are derived, not stored.
    """
    return [(str(cell.get("cell_type")), cell_source(cell)) for cell in notebook.get("cells", [])]
