"""The sharded newest-first listing behind file_glob_search: what one sorted rg lists, in its order."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hdsp_agent.tools.builtin.search.newest_files import _shard_excludes, newest_files
from hdsp_agent.tools.builtin.search.ripgrep import BASE_ARGS, find_rg, strip_dot_slash

pytestmark = pytest.mark.asyncio


def make(root: Path, relative: str, when: int) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    os.utime(path, (when, when))


def one_sorted_rg(root: Path, target: str, globs: list[str]) -> list[str]:
    argv = [find_rg(), *BASE_ARGS, "--files", "--sortr", "modified"]
    for glob in globs:
        argv += ["-g", glob]
    listing = subprocess.run([*argv, "--", target], cwd=root, capture_output=True, text=True, check=False)
    return [strip_dot_slash(line) for line in listing.stdout.splitlines()]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    # .gitignore rules anchored at the root, unanchored, and nested: every shard must apply all of them.
    (tmp_path / ".gitignore").write_text("/pkg3/skipped.py\n*.log\nbuild/\n")
    when = 1_000_000
    for package in range(8):
        for module in range(5):
            when += 100
            make(tmp_path, f"pkg{package}/sub/m{module}.py", when)
    make(tmp_path, "pkg3/skipped.py", when + 10_000)
    make(tmp_path, "pkg5/deep/skipped.py", when + 10_000)
    (tmp_path / "pkg5" / ".gitignore").write_text("deep/\n")
    make(tmp_path, "build/out.py", when + 10_000)
    make(tmp_path, "pkg1/debug.log", when + 10_000)
    make(tmp_path, "top.py", when + 50)
    return tmp_path


async def test_sharded_listing_matches_one_sorted_rg(tree: Path) -> None:
    assert len(_shard_excludes(tree, ".")) == min(os.cpu_count() or 1, 4)
    expected = one_sorted_rg(tree, ".", ["**/*.py"])
    listing = await newest_files(tree, ".", ["**/*.py"], limit=7)
    assert listing.newest == expected[:7]
    # rg lets a matching -g glob override a file-level .gitignore rule (pkg3/skipped.py), not an ignored
    # directory: 40 modules, top.py and pkg3/skipped.py.
    assert listing.total == len(expected) == 42
    assert "build/out.py" not in expected and "pkg5/deep/skipped.py" not in expected


async def test_sharded_listing_of_a_subdirectory(tree: Path) -> None:
    expected = one_sorted_rg(tree, "pkg5", ["**/*.py"])
    listing = await newest_files(tree, "pkg5", ["**/*.py"], limit=100)
    assert listing.newest == expected and listing.total == 5


async def test_names_a_glob_cannot_carry_fall_back_to_one_rg(tmp_path: Path) -> None:
    for index, name in enumerate(["a[1]", "b{2}", "c,3", "d"]):
        make(tmp_path, f"{name}/f.py", 1_000_000 + index)
    assert _shard_excludes(tmp_path, ".") == [[]]
    listing = await newest_files(tmp_path, ".", ["*.py"], limit=10)
    assert listing.newest == ["d/f.py", "c,3/f.py", "b{2}/f.py", "a[1]/f.py"]


async def test_a_bad_glob_is_reported_once(tree: Path) -> None:
    listing = await newest_files(tree, ".", ["{unclosed"], limit=10)
    assert listing.returncode == 2 and listing.total == 0
    assert listing.stderr.count("{unclosed") == 1
