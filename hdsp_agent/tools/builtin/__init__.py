"""Built-in tools outside the notebook: files, search, shell, web and rules (Continue's names and parameters)."""

from __future__ import annotations

from typing import Any

from ..base import Tool
from .codebase import CodebaseTool
from .edit import (
    CreateNewFileTool,
    EditExistingFileTool,
    MultiEditTool,
    SearchAndReplaceInFileTool,
    SingleFindAndReplaceTool,
)
from .files import ReadCurrentlyOpenFileTool, ReadFileRangeTool, ReadFileTool
from .git import ViewDiffTool
from .ls import ListDirectoryTool
from .repo_map import ViewRepoMapTool, ViewSubdirectoryTool
from .rules import CreateRuleBlockTool, RequestRuleTool
from .search import FileGlobSearchTool, GrepSearchTool
from .terminal import RunTerminalCommandTool
from .web import FetchUrlTool, SearchWebTool


def builtin_tools() -> list[Tool[Any]]:
    return [
        ReadFileTool(),
        ReadFileRangeTool(),
        ReadCurrentlyOpenFileTool(),
        CreateNewFileTool(),
        SingleFindAndReplaceTool(),
        MultiEditTool(),
        SearchAndReplaceInFileTool(),
        EditExistingFileTool(),
        ListDirectoryTool(),
        GrepSearchTool(),
        FileGlobSearchTool(),
        ViewSubdirectoryTool(),
        ViewRepoMapTool(),
        ViewDiffTool(),
        CodebaseTool(),
        RunTerminalCommandTool(),
        FetchUrlTool(),
        SearchWebTool(),
        CreateRuleBlockTool(),
        RequestRuleTool(),
    ]
