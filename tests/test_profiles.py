"""Tool profiles: which schemas a step sends, and that a tool left out is still callable by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.agent.models import ModelCatalog
from hdsp_agent.agent.runtime import AgentRuntime
from hdsp_agent.assembly import assemble
from hdsp_agent.permissions.decision import ReadOnlyPolicy
from hdsp_agent.tools.base import Tool, ToolArgs, ToolCall, ToolContext
from hdsp_agent.tools.defaults import default_tools
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.profiles import notebook_in_play, profile_for_window, resolve_profile

COMPACT_FILES = [
    "read_file",
    "create_new_file",
    "single_find_and_replace",
    "ls",
    "grep_search",
    "run_terminal_command",
]
COMPACT_NOTEBOOK = ["read_notebook", "insert_cell", "edit_cell", "run_cell"]


class EchoArgs(ToolArgs):
    text: str


class ServerEcho(Tool[EchoArgs]):
    """Named as an MCP server's tool is (``server__tool``)."""

    name = "demo__echo"
    description = "Echo."
    args_model = EchoArgs
    read_only = True

    async def run(self, args: EchoArgs, ctx: ToolContext) -> str:
        return args.text


def _runtime(root: Path, **options: Any) -> AgentRuntime:
    return assemble(
        None,
        root,
        lambda **overrides: ToolContext(root_dir=root, **overrides),
        tools=[*default_tools(), ServerEcho()],
        policy=ReadOnlyPolicy(),
        models=ModelCatalog([]),
        **options,
    ).runtime


def _offered(runtime: AgentRuntime, profile: Any, context: dict[str, Any] | None = None, messages=()) -> list:
    ctx = runtime.tool_context(client_context=context or {})
    return runtime.catalog(ctx, profile, list(messages)).names()


@pytest.mark.parametrize(
    ("window", "profile"),
    [(2_048, "compact"), (4_096, "compact"), (16_384, "compact"), (32_768, "standard"), (65_536, "standard")]
    + [(131_072, "full")],
)
def test_the_window_chooses_the_profile(window: int, profile: str) -> None:
    assert profile_for_window(window) == profile
    assert resolve_profile("auto", window) == profile
    assert resolve_profile("full", window) == "full", "the configuration overrides the window"


def test_an_unknown_profile_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown tool profile 'tiny'"):
        resolve_profile("tiny", 4_096)


def test_compact_offers_one_tool_per_need(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    assert sorted(_offered(runtime, "compact")) == sorted(COMPACT_FILES)
    with_notebook = _offered(runtime, "compact", {"active_document": {"path": "a.ipynb"}})
    assert sorted(with_notebook) == sorted(COMPACT_FILES + COMPACT_NOTEBOOK)


def test_profiles_grow_and_keep_the_registry_order(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    context = {"active_document": {"path": "a.ipynb"}}
    compact, standard = _offered(runtime, "compact", context), _offered(runtime, "standard", context)
    full = _offered(runtime, "full", context)
    assert set(compact) < set(standard) < set(full)
    order = runtime.registry.names()
    for names in (compact, standard, full):
        assert names == sorted(names, key=order.index)
    assert "demo__echo" in standard and "demo__echo" not in compact, "extension tools wait in compact"
    assert "edit_existing_file" in full and "edit_existing_file" not in standard


def test_notebook_tools_come_when_a_notebook_is_open_or_named(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    assert "run_cell" not in _offered(runtime, "standard")
    named = [{"role": "user", "content": "plot the data in report.ipynb"}]
    assert "run_cell" in _offered(runtime, "standard", messages=named)
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "create_new_file", "arguments": '{"filepath": "n.ipynb"}'},
    }
    created = [{"role": "user", "content": "start a notebook"}, {"role": "assistant", "tool_calls": [call]}]
    assert notebook_in_play({}, created)
    assert "run_cell" in _offered(runtime, "full"), "full offers everything"


def test_web_tools_only_when_configured(tmp_path: Path) -> None:
    assert "fetch_url_content" not in _offered(_runtime(tmp_path), "full")
    assert "fetch_url_content" in _offered(_runtime(tmp_path, web_tools=True), "standard")


async def test_a_tool_the_profile_leaves_out_runs_when_called_by_name(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    runtime = _runtime(tmp_path)
    ctx = runtime.tool_context()
    catalog = runtime.catalog(ctx, "compact")
    assert "read_file_range" not in catalog.names() and "read_file_range" in catalog
    executor = ToolExecutor(runtime.registry, policy=runtime.policy)
    arguments = json.dumps({"filepath": "notes.txt", "startLine": 2, "endLine": 2})
    result = await executor.execute(
        ToolCall(id="c1", name="read_file_range", arguments=arguments), ctx, catalog
    )
    assert result.status == "ok" and "two" in result.content and "three" not in result.content


async def test_a_tool_the_mode_excludes_is_not_callable_by_name(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, catalog_filter=lambda tool: tool.read_only)
    ctx = runtime.tool_context()
    catalog = runtime.catalog(ctx, "compact")
    assert "create_new_file" not in catalog
    executor = ToolExecutor(runtime.registry, policy=runtime.policy)
    arguments = json.dumps({"filepath": "new.txt", "contents": "x"})
    result = await executor.execute(
        ToolCall(id="c1", name="create_new_file", arguments=arguments), ctx, catalog
    )
    assert result.error is not None and result.error.code == "E_TOOL_NOT_IN_CATALOG"
    assert not (tmp_path / "new.txt").exists()
