"""Each tool's default permission level has one source: the tool's own facts (``Tool.facts``, tools/facts.py),
which permissions/defaults.py reads.

``read_only`` says only whether a tool changes anything; these tests keep the two from telling different
stories: every built-in tool declares its level, a tool the table allows changes nothing, and every
policy (the rule policy's defaults, the executor's fallback ``ReadOnlyPolicy``, read-only mode) gives the
table's level; read-only mode keeps the tools that change nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.permissions.decision import ReadOnlyPolicy
from hdsp_agent.permissions.defaults import default_level, is_read_tool, table_tools
from hdsp_agent.permissions.modes import mode_filter
from hdsp_agent.tools.base import Tool, ToolContext
from hdsp_agent.tools.defaults import default_tools

BUILTIN = {tool.name: tool for tool in default_tools()}


def test_every_built_in_tool_has_its_level_in_the_table() -> None:
    assert set(BUILTIN) - table_tools() == set(), "declare the tool's facts (Tool.facts)"


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_the_executors_fallback_policy_and_read_only_mode_give_the_tables_level(
    name: str, tmp_path: Path
) -> None:
    tool: Tool[Any] = BUILTIN[name]
    level, _ = default_level(name, tool.read_only)
    if level == "allow":
        assert tool.read_only, f"{name} is allowed without asking but declares that it changes things"
    ctx = ToolContext(root_dir=tmp_path)
    assert ReadOnlyPolicy().decide(tool, tool.args_model.model_construct(), None, ctx).decision == level
    # Read-only mode is about changing things: it keeps what changes nothing and is not disabled (a fetch
    # stays, and still asks).
    kept = tool.read_only and level != "deny"
    assert mode_filter("read-only")(tool) == kept
    assert is_read_tool(name, tool.read_only) == kept


def test_the_two_tools_whose_class_and_table_disagreed_follow_the_table(tmp_path: Path) -> None:
    ctx = ToolContext(root_dir=tmp_path)
    policy = ReadOnlyPolicy()
    fetch, request_rule = BUILTIN["fetch_url_content"], BUILTIN["request_rule"]
    # Both change nothing here (no file, no kernel), yet fetching sends data out and request_rule is off.
    assert fetch.read_only and request_rule.read_only
    assert policy.decide(fetch, fetch.args_model.model_construct(), None, ctx).decision == "ask"
    assert (
        policy.decide(request_rule, request_rule.args_model.model_construct(), None, ctx).decision == "deny"
    )
