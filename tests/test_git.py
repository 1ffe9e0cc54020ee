"""view_diff in real repositories made with ``git init``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.git import ViewDiffTool
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.org",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


async def view_diff(root: Path) -> ToolResult:
    executor = ToolExecutor(ToolRegistry([ViewDiffTool()]), approver=FixedApprover(True))
    return await executor.execute(ToolCall(id="c1", name="view_diff", arguments="{}"), ToolContext(root))


@pytest.fixture(autouse=True)
def isolated_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """No user or system git configuration leaks into the tool's git calls."""
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    (tmp_path / "app.py").write_text("print('v1')\n")
    (tmp_path / "lib.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("*.log\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


async def test_not_a_git_repository_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    result = await view_diff(tmp_path)
    assert result.status == "error" and result.error is not None
    assert result.error.code == "E_NOT_A_GIT_REPO" and "not inside a git repository" in result.error.message


async def test_clean_repository_says_so(repo: Path) -> None:
    result = await view_diff(repo)
    assert (
        result.status == "ok" and result.content == "No uncommitted changes: the working tree matches HEAD."
    )


async def test_staged_unstaged_and_untracked_changes(repo: Path) -> None:
    (repo / "app.py").write_text("print('v2')\n")
    (repo / "lib.py").write_text("x = 2\n")
    git(repo, "add", "lib.py")
    (repo / "new_notes.md").write_text("draft\n")
    (repo / "debug.log").write_text("ignored\n")
    result = await view_diff(repo)
    staged, unstaged, untracked = result.content.split("\n\n## ")
    assert staged.startswith("## Staged changes\n lib.py | 2 +-")
    assert "-x = 1\n+x = 2" in staged and "app.py" not in staged
    assert unstaged.startswith("Unstaged changes\n app.py | 2 +-") and "+print('v2')" in unstaged
    assert untracked == "Untracked files\nnew_notes.md"
    assert result.details == {"staged": True, "unstaged": True, "untracked": 1}


async def test_before_the_first_commit_staged_files_show_as_new(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "first.py").write_text("a = 1\n")
    git(tmp_path, "add", "first.py")
    result = await view_diff(tmp_path)
    assert result.content.startswith("## Staged changes\n first.py | 1 +")
    assert "new file mode" in result.content and "+a = 1" in result.content


async def test_root_in_a_subdirectory_shows_its_own_changes_with_relative_paths(repo: Path) -> None:
    (repo / "pkg").mkdir()
    (repo / "pkg" / "mod.py").write_text("y = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "pkg")
    (repo / "pkg" / "mod.py").write_text("y = 2\n")
    (repo / "app.py").write_text("changed outside the root\n")
    result = await view_diff(repo / "pkg")
    assert "diff --git a/mod.py b/mod.py" in result.content
    assert "app.py" not in result.content


async def test_view_diff_schema_snapshot() -> None:
    assert parameters_schema(ViewDiffTool()) == {
        "additionalProperties": False,
        "properties": {},
        "type": "object",
    }
