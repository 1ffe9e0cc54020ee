"""State that outlives one tool call, with one owner: built once by the server (or a CLI run) and passed in.

- ``files``: what each conversation read of which file (stale-edit refusal) and the file edits it can undo;
  shared by the file-reading and file-editing tools and read by turn undo.
- ``notebooks``: the notebook tools' conflict stamps, undo history and runs still going after their call.
- ``processes``: background processes started by run_terminal_command, stopped when their conversation goes.

Grants ("allow for this session") belong to the permission policy, which the same builder makes once.

Every store that keeps something per conversation is a ``ConversationState``: deleting the conversation
(``AgentRuntime.forget_session``) asks each one to forget it, so nothing of a deleted conversation stays in
memory (whole notebooks among it) or running.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .builtin.edit.filestate import FileStateStore
from .builtin.processes import ProcessTracker
from .jupyter.notebook_runtime import NotebookRuntime


class ConversationState(Protocol):
    """A store keeping something per conversation (by session id)."""

    async def forget_session(self, session_id: str) -> None:
        """The conversation was deleted: drop what is kept for it, stop what it left running."""
        ...


@dataclass
class ToolState:
    files: FileStateStore = field(default_factory=FileStateStore)
    notebooks: NotebookRuntime = field(default_factory=NotebookRuntime)
    processes: ProcessTracker = field(default_factory=ProcessTracker)

    def per_conversation(self) -> Sequence[ConversationState]:
        return (self.files, self.notebooks, self.processes)
