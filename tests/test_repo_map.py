"""view_repo_map and view_subdirectory on small real trees."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.search.repo_map import (
    ViewRepoMapTool,
    ViewSubdirectoryTool,
    build_map,
    pattern_outline,
)
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

PYTHON_MODULE = '''"""A module."""
import os

LIMIT = 10
name: str = "x"


class Store(Base, metaclass=Meta):
    def get(self, key: str, default: int = 0) -> int:
        return 1

    async def close(self) -> None: ...


async def fetch(url, *, timeout=5):
    pass


def _helper(*args, **kwargs):
    def inner():
        pass
'''
TYPESCRIPT_MODULE = """import x from 'y';
export function render(model: Model): void {
  const local = 1;
}
export default class Panel extends Widget {
  protected onAfterAttach(): void {}
}
export const VERSION = '1.0';
interface IOptions { a: number }
type Id = string;
"""
NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "source": ["# Analysis"]},
        {"cell_type": "code", "source": ["import pandas as pd\n", "df = pd.read_csv('x.csv')\n"]},
        {"cell_type": "code", "source": "%matplotlib inline\n"},
        {"cell_type": "code", "source": ["def clean(frame):\n", "    return frame\n"]},
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


async def call(root: Path, name: str, arguments: dict[str, Any]) -> ToolResult:
    executor = ToolExecutor(
        ToolRegistry([ViewRepoMapTool(), ViewSubdirectoryTool()]), approver=FixedApprover(True)
    )
    return await executor.execute(
        ToolCall(id="c1", name=name, arguments=json.dumps(arguments)), ToolContext(root)
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "store.py").write_text(PYTHON_MODULE)
    (tmp_path / "pkg" / "broken.py").write_text("def oops(:\n")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "panel.ts").write_text(TYPESCRIPT_MODULE)
    (tmp_path / "analysis.ipynb").write_text(json.dumps(NOTEBOOK))
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text("def generated(): pass\n")
    return tmp_path


@pytest.mark.asyncio
async def test_repo_map_lists_files_with_their_definitions(project: Path) -> None:
    result = await call(project, "view_repo_map", {})
    assert result.status == "ok"
    assert result.content.split("\n") == [
        ".gitignore",
        "analysis.ipynb",
        "  df",
        "  def clean(frame)",
        "data.csv",
        "pkg/broken.py",
        "  (could not be parsed)",
        "pkg/store.py",
        "  LIMIT",
        "  name: str",
        "  class Store(Base)",
        "    def get(self, key: str, default: int=0) -> int",
        "    async def close(self) -> None",
        "  async def fetch(url, *, timeout=5)",
        "  def _helper(*args, **kwargs)",
        "web/panel.ts",
        "  export function render(model: Model): void",
        "  export default class Panel extends Widget",
        "    protected onAfterAttach(): void",
        "  export const VERSION = '1.0';",
        "  interface IOptions",
        "  type Id = string;",
    ]


def test_pattern_outline_for_other_languages() -> None:
    source = "package main\n\nfunc (s *Server) Start() error {\n}\n\ntype Server struct {\n}\n"
    assert pattern_outline(source) == ["func (s *Server) Start() error", "type Server struct"]
    rust = "pub struct S {}\nimpl S {\n    pub fn new() -> Self { S {} }\n    let x = 1;\n}\n"
    assert pattern_outline(rust) == ["pub struct S", "impl S", "  pub fn new() -> Self"]
    r_source = "clean_data <- function(df) {\n  df\n}\n"
    assert pattern_outline(r_source) == ["clean_data <- function(df)"]
    javascript = "class A {\n  render() {\n    if (ready) {\n    }\n  }\n}\n"
    assert pattern_outline(javascript) == ["class A", "  render()"]


@pytest.mark.asyncio
async def test_view_subdirectory_maps_one_directory(project: Path) -> None:
    result = await call(project, "view_subdirectory", {"directory_path": "pkg"})
    assert result.content.splitlines()[0] == "pkg/broken.py"
    assert "pkg/store.py" in result.content and "web/panel.ts" not in result.content


@pytest.mark.asyncio
async def test_view_subdirectory_errors(project: Path) -> None:
    missing = await call(project, "view_subdirectory", {"directory_path": "nope"})
    assert missing.error is not None and missing.error.code == "E_PATH_NOT_FOUND"
    file = await call(project, "view_subdirectory", {"directory_path": "data.csv"})
    assert file.error is not None and file.error.code == "E_NOT_A_DIRECTORY"


def test_map_stays_within_its_budget_and_says_what_it_left_out(tmp_path: Path) -> None:
    for index in range(50):
        body = "".join(f"def function_{i}(a, b):\n    pass\n" for i in range(20))
        (tmp_path / f"mod{index:02}.py").write_text(body)
    text = build_map(tmp_path, tmp_path, budget=2_000)
    assert len(text) < 2_200
    assert text.endswith("more files not shown; use view_subdirectory on a subdirectory to see them]")
    shown = sum(1 for line in text.splitlines() if line.endswith(".py"))
    assert f"[... {50 - shown} more files" in text


def test_view_repo_map_schema_snapshot() -> None:
    assert parameters_schema(ViewRepoMapTool()) == {
        "additionalProperties": False,
        "properties": {},
        "type": "object",
    }


def test_view_subdirectory_schema_snapshot() -> None:
    assert parameters_schema(ViewSubdirectoryTool()) == {
        "additionalProperties": False,
        "properties": {
            "directory_path": {"description": "Directory relative to the project root.", "type": "string"}
        },
        "required": ["directory_path"],
        "type": "object",
    }
