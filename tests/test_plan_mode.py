"""Plan mode and the slash commands' server side: a write refused by the policy (a real call through the
executor and the turn loop), the plan file the server writes, "Approve plan" running the file as edited,
``/context`` equal to the request the model then receives, ``/compact`` now."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.agent.context_budget import estimate_tokens
from hdsp_agent.agent.plans import plan_items
from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.permissions.policy import build_policy
from hdsp_agent.tools.base import ToolCall, ToolContext
from hdsp_agent.tools.defaults import default_registry
from hdsp_agent.tools.executor import ToolExecutor

pytestmark = pytest.mark.asyncio

PLAN = "Here is the plan:\n\n- [ ] Read data.csv\n- [ ] Write summary.txt with the row count\n"


def _setup(tmp_path: Path, model: ScriptedModel) -> tuple[Any, Path]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    policy = build_policy(HdspAgentConfig(), root, tmp_path / "permissions.json")
    runtime = make_runtime(root, model, list(default_registry(HdspAgentConfig())), policy=policy)
    return make_manager(root, runtime), root


async def test_a_write_tool_in_plan_mode_is_refused_by_the_policy(tmp_path: Path) -> None:
    root = tmp_path
    policy = build_policy(HdspAgentConfig(), root, tmp_path / "permissions.json")
    policy.set_mode("plan", session_id="s1")
    # An approver that would say yes to anything: the refusal must come from the policy, not a question.
    executor = ToolExecutor(default_registry(HdspAgentConfig()), policy=policy, approver=FixedApprover(True))
    call = ToolCall(
        id="c1", name="create_new_file", arguments=json.dumps({"filepath": "x.txt", "contents": "hi"})
    )
    result = await executor.execute(call, ToolContext(root_dir=root, session_id="s1"))
    assert result.status == "denied", result
    assert "plan mode" in str(result.error.message if result.error else result.content)
    assert not (root / "x.txt").exists()
    read = ToolCall(id="c2", name="ls", arguments=json.dumps({"dirPath": "."}))
    assert (await executor.execute(read, ToolContext(root_dir=root, session_id="s1"))).ok


async def test_plan_turn_writes_nothing_then_the_edited_plan_runs(tmp_path: Path) -> None:
    with ScriptedModel() as model:
        manager, root = _setup(tmp_path, model)
        session = manager.create()
        write = {"filepath": "summary.txt", "contents": "1 row"}
        model.add(
            tool_calls(("create_new_file", json.dumps(write))),  # tried in plan mode: refused by the policy
            text(PLAN),
        )
        events = await run_turn(session, "Summarize data.csv", context={"mode": "plan"})
        refused = [e for e in of_type(events, "tool.status") if e["name"] == "create_new_file"]
        assert refused[-1]["status"] in ("denied", "errored")
        assert not (root / "summary.txt").exists()
        # The model was told, in the tool result, why.
        tool_message = next(m for m in model.requests[1]["messages"] if m["role"] == "tool")
        assert "plan mode" in tool_message["content"]
        # Write tools are not even offered.
        offered = {tool["function"]["name"] for tool in model.requests[0].get("tools", [])}
        assert "create_new_file" not in offered and "read_file" in offered
        await asyncio.sleep(0)
        proposed = of_type(session.events, "plan.proposed")[-1]
        assert proposed["items"] == ["Read data.csv", "Write summary.txt with the row count"]
        plan_file = root / proposed["path"]
        assert plan_file.parent == root / ".hdsp" / "plans" and plan_file.name.endswith(
            "summarize-data-csv.md"
        )
        # The user edits the plan; the edited file is what runs.
        plan_file.write_text(plan_file.read_text() + "- [ ] Say done\n", encoding="utf-8")
        model.add(tool_calls(("create_new_file", json.dumps(write))), text("done"))
        start = session.last_seq
        session.run_plan(proposed["path"], "accept-edits", {})
        await asyncio.wait_for(session.wait(), 30)
        events = session.events_since(start)
        approved = of_type(events, "plan.approved")[0]
        assert approved["items"][-1] == "Say done" and approved["mode"] == "accept-edits"
        assert "Say done" in model.requests[2]["messages"][-1]["content"]
        assert (root / "summary.txt").read_text() == "1 row"


async def test_context_breakdown_equals_the_request_the_model_receives(tmp_path: Path) -> None:
    with ScriptedModel() as model:
        manager, root = _setup(tmp_path, model)
        (root / "AGENTS.md").write_text("Always answer in one line.\n", encoding="utf-8")
        session = manager.create()
        model.add(text("first answer"))
        await run_turn(session, "hello")
        breakdown = await session.next_request({}, None, draft="what next?")
        assert sum(breakdown.parts.values()) == breakdown.total
        assert breakdown.parts["rules"] > 0 and breakdown.parts["tools"] > 0
        assert breakdown.parts["history"] > 0 and breakdown.parts["system"] > 0
        model.add(text("second answer"))
        await run_turn(session, "what next?")
        sent = model.requests[-1]
        assert estimate_tokens([sent["messages"], sent.get("tools", [])]) == breakdown.total
        assert breakdown.messages == len(sent["messages"])


async def test_compact_now_summarizes_and_shows_the_summary(tmp_path: Path) -> None:
    summary = text("Done: said hello twice.")
    with ScriptedModel(summary_reply=summary) as model:
        manager, _root = _setup(tmp_path, model)
        session = manager.create()
        model.add(text("one"), text("two"))
        await run_turn(session, "hello")
        await run_turn(session, "again")
        before = len(session.messages)
        outcome = await session.compact_now({}, None)
        assert outcome is not None and outcome["summary"] == "Done: said hello twice."
        assert len(session.messages) < before
        shown = of_type(session.events, "context.compacted")[-1]
        assert shown["summary"] == "Done: said hello twice."


async def test_plan_items_reads_checklists_and_numbered_lists() -> None:
    assert plan_items("- [ ] a\n* [x] b\nnot a step") == ["a", "b"]
    assert plan_items("1. first\n2) second") == ["first", "second"]
