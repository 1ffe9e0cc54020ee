"""create_rule_block, request_rule and the loader the system prompt uses, on real rule files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest, FixedApprover
from hdsp_agent.permissions.policy import build_policy
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.rules import (
    CreateRuleBlockTool,
    RequestRuleTool,
    applicable_rules,
    expand_braces,
    load_rules,
)
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry


async def call(root: Path, name: str, arguments: dict[str, Any], policy: Any = None) -> ToolResult:
    executor = ToolExecutor(
        ToolRegistry([CreateRuleBlockTool(), RequestRuleTool()]), policy=policy, approver=FixedApprover(True)
    )
    return await executor.execute(
        ToolCall(id="c1", name=name, arguments=json.dumps(arguments)), ToolContext(root)
    )


def write_rule(root: Path, name: str, text: str, folder: str = ".hdsp/rules") -> None:
    path = root / folder / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.asyncio
async def test_create_rule_block_writes_markdown_with_front_matter(tmp_path: Path) -> None:
    arguments = {
        "name": "Type Hints!",
        "rule": "Add type hints to every function.",
        "globs": "**/*.py",
        "description": "Python style",
        "alwaysApply": False,
    }
    result = await call(tmp_path, "create_rule_block", arguments)
    assert (
        result.status == "ok" and result.content == "Created rule 'Type Hints!' in .hdsp/rules/type-hints.md."
    )
    _, front, body = (tmp_path / ".hdsp/rules/type-hints.md").read_text().split("---\n")
    assert yaml.safe_load(front) == {
        "name": "Type Hints!",
        "description": "Python style",
        "globs": "**/*.py",
        "alwaysApply": False,
    }
    assert body.strip() == "Add type hints to every function."
    [rule] = load_rules(tmp_path)
    assert rule.name == "Type Hints!" and rule.globs == ("**/*.py",) and rule.always_apply is False


@pytest.mark.asyncio
async def test_same_name_replaces_the_rule(tmp_path: Path) -> None:
    await call(tmp_path, "create_rule_block", {"name": "Tests", "rule": "Use pytest."})
    result = await call(tmp_path, "create_rule_block", {"name": "tests", "rule": "Use pytest with tmp_path."})
    assert result.content.startswith("Updated rule")
    [rule] = load_rules(tmp_path)
    assert rule.rule == "Use pytest with tmp_path."


@pytest.mark.asyncio
async def test_create_rule_block_is_a_file_write_for_the_policy(tmp_path: Path) -> None:
    requests: list[ApprovalRequest] = []

    class Recorder:
        async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
            requests.append(request)
            return ApprovalReply(approved=False)

    executor = ToolExecutor(ToolRegistry([CreateRuleBlockTool()]), approver=Recorder())
    tool_call = ToolCall(
        id="c", name="create_rule_block", arguments='{"name": "Docs", "rule": "Write docstrings."}'
    )
    result = await executor.execute(tool_call, ToolContext(tmp_path))
    assert result.status == "denied" and not (tmp_path / ".hdsp").exists()
    assert requests[0].action_kind == "FileWrite" and requests[0].action_target == ".hdsp/rules/docs.md"


@pytest.mark.asyncio
async def test_invalid_regex_is_refused(tmp_path: Path) -> None:
    result = await call(tmp_path, "create_rule_block", {"name": "R", "rule": "x", "regex": "("})
    assert result.error is not None and result.error.code == "E_INVALID_REGEX"


@pytest.mark.asyncio
async def test_request_rule_returns_a_rule_by_name(tmp_path: Path) -> None:
    text = "---\nname: SQL style\ndescription: for queries\nalwaysApply: false\n---\nUppercase keywords.\n"
    write_rule(tmp_path, "sql", text)
    # request_rule is disabled by default (its facts: level "deny"); an allow rule enables it.
    disabled = await call(tmp_path, "request_rule", {"name": "sql style"})
    assert disabled.error is not None and disabled.error.code == "E_TOOL_DENIED"
    config = HdspAgentConfig(allow_rules=["request_rule"])
    enabled = build_policy(config, tmp_path, permissions_file=tmp_path / "permissions.json")
    result = await call(tmp_path, "request_rule", {"name": "sql style"}, enabled)
    assert result.content == "Rule 'SQL style' (for queries):\nUppercase keywords."
    missing = await call(tmp_path, "request_rule", {"name": "nope"}, enabled)
    assert missing.error is not None and missing.error.code == "E_RULE_NOT_FOUND"
    assert "'SQL style'" in (missing.error.suggestion or "")


def test_applicable_rules_follow_always_apply_globs_and_regex(tmp_path: Path) -> None:
    write_rule(tmp_path, "a-always", "---\nname: always\nalwaysApply: true\nglobs: '*.never'\n---\nA\n")
    write_rule(tmp_path, "b-plain", "No front matter: applies everywhere.\n")
    write_rule(tmp_path, "c-python", "---\nname: python\nglobs: '**/*.py'\n---\nP\n")
    write_rule(tmp_path, "d-frontend", "---\nname: frontend\nglobs: ['src/**/*.{ts,tsx}']\n---\nF\n")
    write_rule(tmp_path, "e-on-demand", "---\nname: on demand\nalwaysApply: false\n---\nO\n")
    write_rule(tmp_path, "f-pandas", "---\nname: pandas\nglobs: '**/*.py'\nregex: '^import pandas'\n---\nD\n")
    (tmp_path / "analysis.py").write_text("import pandas as pd\n")
    (tmp_path / "plain.py").write_text("import os\n")

    def names(paths: list[Any]) -> list[str]:
        return [rule.name for rule in applicable_rules(tmp_path, paths)]

    assert names([]) == ["always", "b-plain"]
    assert names(["plain.py"]) == ["always", "b-plain", "python"]
    assert names([tmp_path / "analysis.py"]) == ["always", "b-plain", "python", "pandas"]
    assert names(["src/ui/App.tsx"]) == ["always", "b-plain", "frontend"]
    assert names(["/elsewhere/x.py"]) == ["always", "b-plain"]  # outside the root: not in play


def test_continue_rules_are_read_too(tmp_path: Path) -> None:
    write_rule(tmp_path, "style", "---\nname: continue style\n---\nC\n", folder=".continue/rules")
    assert [rule.name for rule in applicable_rules(tmp_path)] == ["continue style"]


def test_brace_expansion() -> None:
    assert expand_braces(["src/**/*.{ts,tsx}", "*.{a,b}.{c,d}"]) == [
        "src/**/*.ts",
        "src/**/*.tsx",
        "*.a.c",
        "*.a.d",
        "*.b.c",
        "*.b.d",
    ]


def test_create_rule_block_schema_snapshot() -> None:
    assert parameters_schema(CreateRuleBlockTool()) == {
        "additionalProperties": False,
        "properties": {
            "name": {"description": "Short name, e.g. 'Type hints'.", "type": "string"},
            "rule": {"description": "One imperative instruction.", "type": "string"},
            "description": {"type": "string", "description": "When the rule applies."},
            "globs": {"type": "string", "description": "Files it applies to, e.g. '**/*.py'."},
            "regex": {"type": "string", "description": "Applies to files whose content matches."},
            "alwaysApply": {
                "type": "boolean",
                "description": "Always in context (default: unless globs/regex are set).",
            },
        },
        "required": ["name", "rule"],
        "type": "object",
    }


def test_request_rule_schema_snapshot() -> None:
    assert parameters_schema(RequestRuleTool()) == {
        "additionalProperties": False,
        "properties": {"name": {"description": "The rule's name.", "type": "string"}},
        "required": ["name"],
        "type": "object",
    }
