from __future__ import annotations

import json
from pathlib import Path

import pytest

from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.ls import MAX_ENTRIES, ListDirectoryTool
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio


async def call_ls(root: Path, arguments: dict[str, object], approve: bool = False) -> ToolResult:
    executor = ToolExecutor(ToolRegistry([ListDirectoryTool()]), approver=FixedApprover(approve))
    call = ToolCall(id="c1", name="ls", arguments=json.dumps(arguments))
    return await executor.execute(call, ToolContext(root_dir=root))


def make_tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "src" / "main.py").write_text("")
    (root / "build").mkdir()
    (root / "build" / "out.bin").write_text("")
    (root / "debug.log").write_text("")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "src" / ".gitignore").write_text("!keep.log\n")
    (root / "src" / "keep.log").write_text("")


async def test_lists_one_level_with_directories_marked(tmp_path: Path) -> None:
    make_tree(tmp_path)
    result = await call_ls(tmp_path, {"dirPath": "."})
    assert result.status == "ok"
    assert result.content.splitlines() == [".git/", ".gitignore", "build/", "debug.log", "src/"]


async def test_recursive_respects_nested_gitignore_and_skips_git(tmp_path: Path) -> None:
    make_tree(tmp_path)
    result = await call_ls(tmp_path, {"recursive": True})
    assert result.content.splitlines() == [
        ".gitignore",
        "src/",
        "src/.gitignore",
        "src/keep.log",
        "src/main.py",
        "src/pkg/",
        "src/pkg/mod.py",
    ]


async def test_recursive_from_a_subdirectory_applies_the_parents_gitignore(tmp_path: Path) -> None:
    make_tree(tmp_path)
    (tmp_path / "src" / "pkg" / "trace.log").write_text("")
    result = await call_ls(tmp_path, {"dirPath": "src/pkg", "recursive": True})
    assert result.content.splitlines() == ["src/pkg/mod.py"]


async def test_caps_entries_and_says_how_many_more(tmp_path: Path) -> None:
    for index in range(MAX_ENTRIES + 25):
        (tmp_path / f"f{index:04d}.txt").write_text("")
    result = await call_ls(tmp_path, {})
    lines = result.content.splitlines()
    assert len(lines) == MAX_ENTRIES + 1
    assert lines[-1] == "[... 25 more entries not shown; list a subdirectory to see them]"


async def test_missing_directory_and_file_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("")
    missing = await call_ls(tmp_path, {"dirPath": "nope"})
    assert missing.error is not None and missing.error.code == "E_PATH_NOT_FOUND"
    not_dir = await call_ls(tmp_path, {"dirPath": "a.txt"})
    assert not_dir.error is not None and not_dir.error.code == "E_NOT_A_DIRECTORY"


async def test_outside_the_root_needs_approval(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret-sibling").mkdir()
    declined = await call_ls(root, {"dirPath": ".."}, approve=False)
    assert declined.status == "denied"
    approved = await call_ls(root, {"dirPath": ".."}, approve=True)
    assert approved.status == "ok" and "secret-sibling" in approved.content


async def test_symlink_escaping_the_root_counts_as_outside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")
    result = await call_ls(root, {"dirPath": "link"}, approve=False)
    assert result.status == "denied"


def test_schema_snapshot() -> None:
    assert parameters_schema(ListDirectoryTool()) == {
        "additionalProperties": False,
        "properties": {
            "dirPath": {
                "default": ".",
                "description": "Directory relative to the project root.",
                "type": "string",
            },
            "recursive": {"default": False, "description": "List the whole subtree.", "type": "boolean"},
        },
        "type": "object",
    }
