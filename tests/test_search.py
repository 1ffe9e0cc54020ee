"""grep_search and file_glob_search through the real executor, with the real rg binary on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.search.ripgrep import find_rg
from hdsp_agent.tools.builtin.search.tools import FileGlobSearchTool, GrepSearchTool
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio


async def call(root: Path, name: str, arguments: dict[str, Any]) -> ToolResult:
    executor = ToolExecutor(
        ToolRegistry([GrepSearchTool(), FileGlobSearchTool()]), approver=FixedApprover(True)
    )
    return await executor.execute(
        ToolCall(id="c1", name=name, arguments=json.dumps(arguments)), ToolContext(root)
    )


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


async def test_grep_reports_matching_lines_by_file_relative_to_root(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py", "import os\ndef handler():\n    return 'needle'\n")
    write(tmp_path, "README.md", "no match here\n")
    result = await call(tmp_path, "grep_search", {"query": "needle"})
    assert result.status == "ok"
    assert result.content.splitlines()[:2] == ["src/app.py", "3:    return 'needle'"]
    assert "[1 matching lines in 1 file]" in result.content
    assert str(tmp_path) not in result.content


async def test_grep_respects_gitignore_outside_a_git_repository(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "build/\n*.log\n")
    write(tmp_path, "build/out.py", "needle\n")
    write(tmp_path, "debug.log", "needle\n")
    write(tmp_path, "kept.py", "needle\n")
    result = await call(tmp_path, "grep_search", {"query": "needle", "outputMode": "files_with_matches"})
    assert result.content.splitlines()[0] == "kept.py"
    assert "build/out.py" not in result.content and "debug.log" not in result.content


async def test_grep_searches_dotfiles_but_never_secret_files(tmp_path: Path) -> None:
    write(tmp_path, ".github/workflows/ci.yml", "token: needle\n")
    write(tmp_path, ".env", "API_KEY=needle\n")
    write(tmp_path, "server.pem", "needle\n")
    write(tmp_path, ".ssh/config", "needle\n")
    write(tmp_path, ".git/config", "needle\n")
    result = await call(tmp_path, "grep_search", {"query": "needle", "outputMode": "files_with_matches"})
    assert result.content.splitlines()[0] == ".github/workflows/ci.yml"
    for secret in (".env", "server.pem", ".ssh/config", ".git/config"):
        assert secret not in result.content


async def test_grep_caps_at_100_matches_with_totals_and_a_note(tmp_path: Path) -> None:
    write(tmp_path, "many.txt", "".join(f"hit {i}\n" for i in range(250)))
    result = await call(tmp_path, "grep_search", {"query": "hit"})
    shown = [line for line in result.content.splitlines() if line.split(":", 1)[0].isdigit()]
    assert len(shown) == 100
    assert "Showing 100 of 250 matching lines in 1 file" in result.content
    assert result.details["total_matches"] == 250 and result.details["cut"] is True


async def test_grep_caps_output_characters(tmp_path: Path) -> None:
    for index in range(40):
        write(tmp_path, f"f{index:02}.txt", ("needle " + "x" * 300 + "\n") * 2)
    result = await call(tmp_path, "grep_search", {"query": "needle"})
    assert len(result.content) < 7_500 + 300
    assert "Showing" in result.content and "of 80 matching lines in 40 files" in result.content


async def test_grep_bad_regex_is_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "text\n")
    result = await call(tmp_path, "grep_search", {"query": "foo(bar"})
    assert result.status == "error" and result.error is not None
    assert result.error.code == "E_INVALID_REGEX"
    assert "regex parse error" in result.error.message and "unclosed group" in result.error.message


async def test_grep_context_lines_and_case_sensitivity(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "one\nTwo Needle\nthree\nfour\nfive\nsix\nneedle seven\n")
    result = await call(
        tmp_path, "grep_search", {"query": "needle", "contextLines": 1, "caseSensitive": True}
    )
    assert result.content.splitlines()[:4] == ["a.txt", "6-six", "7:needle seven", ""]
    insensitive = await call(tmp_path, "grep_search", {"query": "needle", "contextLines": 1})
    assert insensitive.content.splitlines()[:7] == [
        "a.txt",
        "1-one",
        "2:Two Needle",
        "3-three",
        "--",
        "6-six",
        "7:needle seven",
    ]


async def test_grep_count_mode_and_file_pattern(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "x = 1\nx = 2\n")
    write(tmp_path, "b.py", "x = 3\n")
    write(tmp_path, "c.txt", "x = 4\n")
    result = await call(
        tmp_path, "grep_search", {"query": "x =", "outputMode": "count", "filePattern": "*.py"}
    )
    assert result.content.splitlines()[:2] == ["a.py: 2", "b.py: 1"]
    assert "[3 matches in 2 files]" in result.content


async def test_grep_files_mode_caps_at_100_files(tmp_path: Path) -> None:
    for index in range(120):
        write(tmp_path, f"f{index:03}.txt", "needle\n")
    result = await call(tmp_path, "grep_search", {"query": "needle", "outputMode": "files_with_matches"})
    assert len([line for line in result.content.splitlines() if line.endswith(".txt")]) == 100
    assert "[Showing 100 of 120 files with matches;" in result.content


async def test_grep_in_a_subdirectory_and_no_match(tmp_path: Path) -> None:
    write(tmp_path, "src/deep/a.py", "target\n")
    write(tmp_path, "other/b.py", "target\n")
    result = await call(tmp_path, "grep_search", {"query": "target", "path": "src"})
    assert result.content.splitlines()[0] == "src/deep/a.py" and "other/b.py" not in result.content
    none = await call(tmp_path, "grep_search", {"query": "absent_word", "path": "src"})
    assert none.status == "ok" and none.content == "No matches for /absent_word/ in src."
    missing = await call(tmp_path, "grep_search", {"query": "x", "path": "nope"})
    assert missing.error is not None and missing.error.code == "E_PATH_NOT_FOUND"


async def test_glob_lists_double_star_matches_newest_first(tmp_path: Path) -> None:
    for index, relative in enumerate(["a/old.py", "b/c/middle.py", "new.py"]):
        path = write(tmp_path, relative, "")
        os.utime(path, (1_000_000 + index * 1000, 1_000_000 + index * 1000))
    write(tmp_path, "notes.md", "")
    result = await call(tmp_path, "file_glob_search", {"pattern": "**/*.py"})
    assert result.content.splitlines() == ["new.py", "b/c/middle.py", "a/old.py"]


async def test_glob_respects_gitignore_and_path(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "node_modules/\n")
    write(tmp_path, "node_modules/lib/index.js", "")
    write(tmp_path, "src/index.js", "")
    write(tmp_path, "test/index.js", "")
    result = await call(tmp_path, "file_glob_search", {"pattern": "**/index.js"})
    assert sorted(result.content.splitlines()) == ["src/index.js", "test/index.js"]
    scoped = await call(tmp_path, "file_glob_search", {"pattern": "*.js", "path": "src"})
    assert scoped.content.splitlines() == ["src/index.js"]


async def test_glob_caps_at_100_with_the_total(tmp_path: Path) -> None:
    for index in range(130):
        write(tmp_path, f"data/f{index:03}.csv", "")
    result = await call(tmp_path, "file_glob_search", {"pattern": "data/*.csv"})
    lines = result.content.splitlines()
    assert len([line for line in lines if line.endswith(".csv")]) == 100
    assert "Showing the 100 newest of 130 matching files" in result.content
    assert result.details == {"total_files": 130, "cut": True}
    empty = await call(tmp_path, "file_glob_search", {"pattern": "**/*.parquet"})
    assert empty.content == "No files match '**/*.parquet'."


async def test_rg_is_the_binary_beside_the_python() -> None:
    assert Path(find_rg()).resolve() == (Path(sys.executable).parent / "rg").resolve()


async def test_grep_search_schema_snapshot() -> None:
    assert parameters_schema(GrepSearchTool()) == {
        "additionalProperties": False,
        "properties": {
            "query": {"description": "A ripgrep regular expression.", "type": "string"},
            "path": {"default": ".", "description": "Directory or file to search.", "type": "string"},
            "filePattern": {"type": "string", "description": "Only files matching this glob, e.g. '*.py'."},
            "caseSensitive": {"type": "boolean", "description": "Default: smart case."},
            "contextLines": {
                "default": 0,
                "description": "Lines shown around each match.",
                "maximum": 10,
                "minimum": 0,
                "type": "integer",
            },
            "outputMode": {
                "default": "content",
                "description": "Lines, file paths only, or counts per file.",
                "enum": ["content", "files_with_matches", "count"],
                "type": "string",
            },
        },
        "required": ["query"],
        "type": "object",
    }


async def test_file_glob_search_schema_snapshot() -> None:
    assert parameters_schema(FileGlobSearchTool()) == {
        "additionalProperties": False,
        "properties": {
            "pattern": {"description": "Glob, e.g. '**/*.py' ('**' is any depth).", "type": "string"},
            "path": {"default": ".", "description": "Directory to search in.", "type": "string"},
        },
        "required": ["pattern"],
        "type": "object",
    }


async def test_cli_calls_grep_search(tmp_path: Path) -> None:
    write(tmp_path, "notes.txt", "find x here\n")
    command = [
        sys.executable,
        "-m",
        "hdsp_agent.cli",
        "tools",
        "call",
        "grep_search",
        '{"query": "x"}',
        "--root",
        str(tmp_path),
        "--approve",
        "all",
    ]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    completed = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["status"] == "ok" and result["content"].startswith("notes.txt\n1:find x here")


def tree_in_tricky_order(root: Path) -> None:
    """Many files (rg's threads finish them out of order) and names where byte-wise whole-path order differs
    from rg's directory-by-directory order ('a-b/…' against 'a/…', 'a/…' against 'a.py')."""
    for number in range(300):
        write(root, f"pkg{number % 13}/mod{number}.py", f"x = 1\nneedle_{number} = 2\n" * (number % 3 + 1))
    for name in ("a/x.py", "a-b/x.py", "a.py", "a b/x.py", "A/x.py", "_/x.py", "é/x.py"):
        write(root, name, "needle = 3\n")


def rg_sorted(root: Path, *flags: str) -> str:
    """What the single-threaded ``rg --sort path`` prints for the same search."""
    found = subprocess.run(
        [find_rg(), "--no-require-git", "--hidden", "--no-config", "--sort", "path", *flags, "needle", "."],
        cwd=root,
        capture_output=True,
        check=True,
    )
    return found.stdout.decode()


@pytest.mark.parametrize("buffer_limit", [None, 64], ids=["parallel", "overflow-rerun-sorted"])
async def test_grep_results_come_in_the_order_of_rg_sort_path_in_every_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, buffer_limit: int | None
) -> None:
    from hdsp_agent.tools.builtin.search import path_order

    if buffer_limit is not None:  # past this much output the search runs again with --sort path
        monkeypatch.setattr(path_order, "MAX_BUFFERED_BYTES", buffer_limit)
    tree_in_tricky_order(tmp_path)
    files = await call(tmp_path, "grep_search", {"query": "needle", "outputMode": "files_with_matches"})
    expected_files = [line.removeprefix("./") for line in rg_sorted(tmp_path, "-l").splitlines()]
    assert files.content.split("\n\n")[0].splitlines() == expected_files[:100]
    assert files.details["total_files"] == len(expected_files) == 307

    counts = await call(tmp_path, "grep_search", {"query": "needle", "outputMode": "count"})
    expected_counts = [line.removeprefix("./") for line in rg_sorted(tmp_path, "-c").splitlines()]
    assert counts.content.split("\n\n")[0].splitlines() == [
        f"{path}: {count}" for path, count in (line.rsplit(":", 1) for line in expected_counts[:100])
    ]

    content = await call(tmp_path, "grep_search", {"query": "needle", "path": "."})
    shown_files = [line for line in content.content.splitlines() if line.endswith(".py")]
    assert shown_files == expected_files[: len(shown_files)] and len(shown_files) > 10
    assert content.details["total_matches"] == sum(int(line.rsplit(":", 1)[1]) for line in expected_counts)
