"""State that outlives one tool call, with one owner: built once by the server (or a CLI run) and passed in.

- ``files``: what each conversation read of which file (stale-edit refusal) and the file edits it can undo;
  shared by the file-reading and file-editing tools and read by turn undo.
- ``notebooks``: the notebook tools' conflict stamps, undo history and runs still going after their call.
- ``processes``: background processes started by run_terminal_command, stopped when their conversation goes.

Grants ("allow for this session") belong to the permission policy, which the same builder makes once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .builtin.edit.filestate import FileStateStore
from .builtin.processes import ProcessTracker
from .jupyter.notebook_runtime import NotebookRuntime


@dataclass
class ToolState:
    files: FileStateStore = field(default_factory=FileStateStore)
    notebooks: NotebookRuntime = field(default_factory=NotebookRuntime)
    processes: ProcessTracker = field(default_factory=ProcessTracker)
