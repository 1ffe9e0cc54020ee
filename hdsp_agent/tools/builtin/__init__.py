"""Built-in tools outside the notebook: files, search, shell, web, rules (Continue's names and parameters)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...documents.history import NotebookUndoStore
from ...sandbox import Sandbox
from ..base import Tool
from .edit.filestate import FileStateStore
from .edit.tools import (
    CreateNewFileTool,
    EditExistingFileTool,
    MultiEditTool,
    SearchAndReplaceInFileTool,
    SingleFindAndReplaceTool,
)
from .files import ReadCurrentlyOpenFileTool, ReadFileRangeTool, ReadFileTool
from .git import ViewDiffTool
from .ls import ListDirectoryTool
from .plan import TodoTool
from .processes import ProcessTracker
from .rules import CreateRuleBlockTool, RequestRuleTool
from .search.codebase import CodebaseTool
from .search.repo_map import ViewRepoMapTool, ViewSubdirectoryTool
from .search.tools import FileGlobSearchTool, GrepSearchTool
from .skills import UseSkillTool
from .terminal import RunTerminalCommandTool
from .web import FetchUrlTool, SearchWebTool


def builtin_tools(
    *,
    url_allowlist: Sequence[str] = (),
    search_backend_url: str | None = None,
    process_tracker: ProcessTracker | None = None,
    extra_secret_names: Sequence[str] = (),
    sandbox: Sandbox | None = None,
    file_state: FileStateStore | None = None,
    notebook_undo: NotebookUndoStore | None = None,
) -> list[Tool[Any]]:
    """Every built-in tool; the keyword arguments carry the administrator's settings for those that take any,
    and the state they keep across calls (``tools.state.ToolState``). The file tools share one file state;
    edits made in a file's open editor record their undo in ``notebook_undo`` (the notebook changes' history).
    """
    files = file_state if file_state is not None else FileStateStore()
    undo = notebook_undo if notebook_undo is not None else NotebookUndoStore()
    return [
        ReadFileTool(files),
        ReadFileRangeTool(files),
        ReadCurrentlyOpenFileTool(files),
        CreateNewFileTool(files),
        SingleFindAndReplaceTool(files, undo),
        MultiEditTool(files, undo),
        SearchAndReplaceInFileTool(files, undo),
        EditExistingFileTool(files, undo),
        ListDirectoryTool(),
        GrepSearchTool(),
        FileGlobSearchTool(),
        ViewSubdirectoryTool(),
        ViewRepoMapTool(),
        ViewDiffTool(sandbox=sandbox),
        CodebaseTool(),
        RunTerminalCommandTool(
            tracker=process_tracker, extra_secret_names=extra_secret_names, sandbox=sandbox, file_state=files
        ),
        FetchUrlTool(allowlist=url_allowlist),
        SearchWebTool(search_backend_url),
        CreateRuleBlockTool(),
        RequestRuleTool(),
        TodoTool(),
        UseSkillTool(),
    ]
