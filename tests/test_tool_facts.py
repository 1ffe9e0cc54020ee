"""A tool's facts live on the tool (``Tool.facts``, tools/facts.py), read by the policy, the catalog and the
sidebar's words: no table keyed by tool name elsewhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent import wire_schema
from hdsp_agent.mcp.start import McpStartServer
from hdsp_agent.permissions.defaults import default_level, derive_action, edit_tools, is_read_tool
from hdsp_agent.tools import facts as facts_module
from hdsp_agent.tools.base import NoArgs, PermissionKind, Tool, ToolContext
from hdsp_agent.tools.defaults import default_tools
from hdsp_agent.tools.facts import ToolFacts, ToolWords, known_facts
from hdsp_agent.tools.profiles import offered_in

BUILTIN = [type(tool) for tool in default_tools()] + [McpStartServer]


@pytest.mark.parametrize("tool_class", BUILTIN, ids=lambda cls: cls.name)
def test_every_built_in_tool_declares_its_facts(tool_class: type[Tool[Any]]) -> None:
    facts = tool_class.__dict__.get("facts")
    assert isinstance(facts, ToolFacts), f"{tool_class.__name__} declares no facts"
    assert known_facts()[tool_class.name] is facts
    if facts.level == "ask":
        # The policy says why it asks, in plain words: never the tool's name (issue 28, "Words").
        assert facts.ask_reason and "%1" not in facts.ask_reason, "the policy says why it asks"
    if facts.level == "allow":
        assert tool_class.read_only and facts.changes == "none"


def test_the_sidebar_words_are_generated_from_the_facts() -> None:
    committed = Path(wire_schema.TOOL_WORDS_PATH).read_text()
    assert committed == wire_schema.render_tool_words(), "run `make wire-schema`"
    table = json.loads(committed.split("= ", 1)[1].rstrip().rstrip(";"))
    assert table["insert_cell"] == {
        "question": "Insert a cell into the notebook?",
        "statement": "Insert a cell into the notebook",
        "question_with_subject": "Insert a cell into %1?",
        "statement_with_subject": "Insert a cell into %1",
    }
    assert table["run_terminal_command"] == {
        "question": "Run this command in the terminal?",
        "statement": "Run a command",
    }


@pytest.fixture
def demo_tool() -> Iterator[Tool[Any]]:
    """A tool declared by this test only: its facts alone decide its level, its profiles and its words."""

    class DemoTool(Tool[NoArgs]):
        name = "demo_archive"
        description = "Archive."
        facts = ToolFacts(
            level="ask",
            ask_reason="It archives files",
            changes="file_edit",
            profiles=frozenset({"full"}),
            words=ToolWords(question="Archive the files?", statement="Archive the files"),
        )

    try:
        yield DemoTool()
    finally:
        facts_module._declared.pop("demo_archive", None)  # other tests see only the built-in tools


def test_a_new_tools_facts_reach_the_policy_the_catalog_and_the_words(
    demo_tool: Tool[Any], tmp_path: Path
) -> None:
    level, why = default_level("demo_archive", False)
    assert (level, str(why)) == ("ask", "It archives files")
    assert "demo_archive" in edit_tools() and not is_read_tool("demo_archive", False)
    action = derive_action("demo_archive", {"path": "a.txt"}, tmp_path)
    assert action is not None and action.kind == PermissionKind.FILE_WRITE
    assert not offered_in(demo_tool, "compact", notebook_in_play=True, web_enabled=True)
    assert offered_in(demo_tool, "full", notebook_in_play=True, web_enabled=True)
    assert '"demo_archive"' in wire_schema.render_tool_words()
    ctx = ToolContext(root_dir=tmp_path)
    assert demo_tool.permission(NoArgs(), ctx) is None
