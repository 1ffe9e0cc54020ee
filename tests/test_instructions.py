"""Project instructions where people already keep them: AGENTS.md, CLAUDE.md and .cursorrules are read like
``.hdsp/rules`` (in the system prompt, listed for the sidebar's chips), never through a link to a secret."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.agent.prompts import build_system_prompt, project_rules
from hdsp_agent.tools.builtin.rules import MAX_INSTRUCTIONS_CHARS, load_rules


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_instruction_files_go_into_the_system_prompt_before_rules(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "Use polars, not pandas.")
    write(tmp_path / "CLAUDE.md", "Answer in Korean.")
    write(tmp_path / ".cursorrules", "Never print secrets.")
    write(tmp_path / ".hdsp" / "rules" / "style.md", "---\nalwaysApply: true\n---\nPlots use seaborn.")
    prompt = build_system_prompt(tmp_path, {}, project_rules)
    order = [prompt.index(text) for text in ("polars", "Korean", "Never print", "seaborn")]
    assert order == sorted(order)
    assert [rule.name for rule in load_rules(tmp_path)] == ["AGENTS.md", "CLAUDE.md", ".cursorrules", "style"]


def test_a_huge_instruction_file_is_cut(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "x" * (MAX_INSTRUCTIONS_CHARS * 3))
    (rule,) = load_rules(tmp_path)
    assert len(rule.rule) < MAX_INSTRUCTIONS_CHARS + 200 and "is cut here" in rule.rule


@pytest.mark.parametrize("name", ["AGENTS.md", ".cursorrules", ".hdsp/rules/r.md"])
@pytest.mark.parametrize("target", ["outside-secret", "outside-file", "inside-secret"])
def test_a_link_to_a_secret_or_outside_is_not_read(tmp_path: Path, name: str, target: str) -> None:
    project, outside = tmp_path / "project", tmp_path / "home"
    targets = {
        "outside-secret": write(outside / ".ssh" / "id_rsa", "FAKE-PRIVATE-KEY-MATERIAL"),
        "outside-file": write(outside / "notes.md", "FAKE-OUTSIDE-NOTES"),
        "inside-secret": write(project / ".env", "FAKE_TOKEN=abc"),
    }
    link = project / name
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(targets[target], link)
    prompt = build_system_prompt(project, {}, project_rules)
    for leaked in ("FAKE-PRIVATE-KEY", "FAKE-OUTSIDE", "FAKE_TOKEN"):
        assert leaked not in prompt
    # The same file, not linked, is read: the refusal is about the link.
    link.unlink()
    write(link, "Plain instructions.")
    assert "Plain instructions." in build_system_prompt(project, {}, project_rules)


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return {"ServerApp": {**jp_server_config["ServerApp"], "allow_unauthenticated_access": False}}


async def test_the_sidebar_gets_the_instructions_that_apply(jp_fetch: Any, jp_root_dir: Path) -> None:
    write(jp_root_dir / "AGENTS.md", "Use polars.")
    write(jp_root_dir / ".hdsp" / "rules" / "sql.md", "---\nglobs: ['**/*.sql']\n---\nUppercase keywords.")
    response = await jp_fetch("hdsp-agent", "instructions", params={"path": "q/report.sql"})
    listed = json.loads(response.body)["instructions"]
    assert listed == [
        {"name": "AGENTS.md", "path": "AGENTS.md", "kind": "instructions"},
        {"name": "sql", "path": ".hdsp/rules/sql.md", "kind": "rule"},
    ]
    response = await jp_fetch("hdsp-agent", "instructions")
    assert [item["name"] for item in json.loads(response.body)["instructions"]] == ["AGENTS.md"]
