"""MCP prompts as slash commands (``mcp/prompts.py``): listed and got from a real MCP server over stdio (our
demo server), and a server the user has not approved is not started to list them."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from hdsp_agent.mcp.manager import McpManager
from hdsp_agent.mcp.prompts import get_prompt, list_prompts
from hdsp_agent.tools.base import ToolError
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio

DEMO = Path(__file__).parent / "mcp_servers" / "demo_server.py"


@pytest_asyncio.fixture
async def manager(tmp_path: Path) -> AsyncIterator[McpManager]:
    built = McpManager(
        ToolRegistry(),
        root_dir=tmp_path,
        trait_servers={"mcpServers": {"demo": {"command": sys.executable, "args": [str(DEMO)]}}},
        config_dir=tmp_path / "config",
    )
    yield built
    await built.close()


async def test_prompts_are_listed_and_got_with_their_arguments(manager: McpManager) -> None:
    # Not started by the user yet: listing prompts starts no program.
    prompts, problems = await list_prompts(manager)
    assert prompts == [] and problems == {}
    assert manager.connections["demo"].state == "idle"
    await manager.start("demo")  # the user's approval (the MCP view, or mcp_start_server)
    prompts, problems = await list_prompts(manager)
    assert problems == {}
    review = next(prompt for prompt in prompts if prompt.name == "review")
    assert review.server == "demo"
    assert [(a.name, a.required) for a in review.arguments] == [("path", True), ("focus", False)]
    text = await get_prompt(manager, "demo", "review", {"path": "data.csv", "focus": "typos"})
    assert text == "Review data.csv, looking for typos."
    with pytest.raises(ToolError):
        await get_prompt(manager, "demo", "review", {})  # a required argument missing: the server refuses
    with pytest.raises(ToolError):
        await get_prompt(manager, "nope", "review", {})
