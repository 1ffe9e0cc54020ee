"""The README's tool reference is generated from the registry; this keeps the two in step."""

from __future__ import annotations

import re
from pathlib import Path

from hdsp_agent.tools.defaults import default_tools
from hdsp_agent.tools.definitions import to_markdown

README = Path(__file__).parent.parent / "README.md"
BLOCK = re.compile(r"<!-- tools:begin -->\n(.*?)<!-- tools:end -->", re.S)


def test_readme_tool_table_matches_the_registry() -> None:
    match = BLOCK.search(README.read_text())
    assert match, "README.md lost its tools:begin/end markers"
    assert match.group(1) == to_markdown(default_tools()), "regenerate: python scripts/update_tools_table.py"


def test_every_builtin_tool_is_in_the_readme() -> None:
    text = README.read_text()
    for tool in default_tools():
        assert f"| `{tool.name}` |" in text
