"""The agent loop end to end: scripted model over real HTTP, real openai client, real executor and tools."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn, types_of, wait_for_event
from scripted_model import ScriptedModel, error, text, tool_calls

from hdsp_agent.permissions.approval import ApprovalReply
from hdsp_agent.permissions.decision import ReadOnlyPolicy
from hdsp_agent.tools.base import PermissionAction, PermissionKind, Tool, ToolArgs, ToolContext
from hdsp_agent.tools.builtin.ls import ListDirectoryTool

pytestmark = pytest.mark.asyncio


class NoteArgs(ToolArgs):
    name: str
    text: str = ""


class WriteNoteTool(Tool[NoteArgs]):
    """Writes a file: needs approval under the default policy."""

    name = "write_note"
    description = "Write a note file."
    args_model = NoteArgs

    def permission(self, args: NoteArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(PermissionKind.FILE_WRITE, args.name)

    async def run(self, args: NoteArgs, ctx: ToolContext) -> str:
        (ctx.root_dir / args.name).write_text(args.text)
        return f"wrote {args.name}"


class SpanArgs(ToolArgs):
    label: str
    seconds: float = 0.2


class SpanTool(Tool[SpanArgs]):
    """Records when each call ran, to observe concurrency."""

    name = "span_read"
    description = "Wait a little, read-only."
    args_model = SpanArgs
    read_only = True
    spans: dict[str, tuple[float, float]] = {}

    async def run(self, args: SpanArgs, ctx: ToolContext) -> str:
        start = time.monotonic()
        await asyncio.sleep(args.seconds)
        self.spans[args.label] = (start, time.monotonic())
        return args.label


class SpanWriteTool(SpanTool):
    name = "span_write"
    read_only = False


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello")
    return project


async def test_multi_step_turn_runs_a_tool_and_answers(root: Path) -> None:
    with ScriptedModel(
        [tool_calls(("ls", '{"dirPath": "."}')), text("There is one file: notes.txt.")]
    ) as model:
        manager = make_manager(root, make_runtime(root, model, [ListDirectoryTool()]))
        session = manager.create()
        events = await run_turn(session, "what files are here?")
    kinds = types_of(events)
    assert kinds[:3] == ["message.user", "session.updated", "turn.start"]
    assert kinds[-2:] == ["turn.end", "session.updated"]
    assert of_type(events, "turn.end")[0]["reason"] == "completed"
    statuses = [e["status"] for e in of_type(events, "tool.status")]
    assert statuses == ["generating", "generated", "calling", "done"]
    assert "".join(e["text"] for e in of_type(events, "assistant.delta")) == "There is one file: notes.txt."
    tool_message = model.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "notes.txt" in tool_message["content"]
    assert tool_message["content"].count("<tool_output") == 1
    assert model.requests[1]["messages"][-2]["content"] == ""  # never null: llama.cpp answers 500 to null
    assert [m["role"] for m in session.messages] == ["user", "assistant", "tool", "assistant"]
    assert session.record.title == "What files are here"


async def test_call_ids_a_server_reuses_across_steps_become_unique_in_the_conversation(root: Path) -> None:
    # Every response numbers its calls from "call_0" (repeat_name: the id comes again in every chunk too).
    same = tool_calls(("ls", '{"dirPath": "."}'), repeat_name=True)
    with ScriptedModel([same, same, text("done")]) as model:
        session = make_manager(root, make_runtime(root, model, [ListDirectoryTool()])).create()
        events = await run_turn(session, "list twice")
    statuses = of_type(events, "tool.status")
    ids = list(dict.fromkeys(e["call_id"] for e in statuses))
    assert len(ids) == 2 and ids[0] == "call_0" and ids[1] != "call_0"
    second = [e["status"] for e in statuses if e["call_id"] == ids[1]]
    assert second == ["generating", "generated", "calling", "done"]
    # The history the model gets back pairs each call with its own result.
    history = model.requests[2]["messages"]
    assistant_ids = [c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    tool_ids = [m["tool_call_id"] for m in history if m["role"] == "tool"]
    assert assistant_ids == tool_ids == ids


async def test_reasoning_is_relayed_as_thinking(root: Path) -> None:
    with ScriptedModel([text("Answer.", reasoning="Let me think.")]) as model:
        session = make_manager(root, make_runtime(root, model, [])).create()
        events = await run_turn(session, "q")
    kinds = {(e["kind"], e["text"]) for e in of_type(events, "assistant.delta")}
    assert ("reasoning", "Let me think.") in kinds
    assert of_type(events, "assistant.message")[0]["reasoning"] == "Let me think."


async def test_malformed_arguments_then_corrected_retry_succeeds(root: Path) -> None:
    script = [tool_calls(("ls", '{"dirPath": ')), tool_calls(("ls", '{"dirPath": "."}')), text("ok")]
    with ScriptedModel(script) as model:
        session = make_manager(root, make_runtime(root, model, [ListDirectoryTool()])).create()
        events = await run_turn(session, "list")
    finals = [e for e in of_type(events, "tool.status") if e["status"] in ("errored", "done")]
    assert [e["status"] for e in finals] == ["errored", "done"]
    assert finals[0]["error"]["code"] == "E_TOOL_INVALID_ARGS"
    assert "E_TOOL_INVALID_ARGS" in model.requests[1]["messages"][-1]["content"]
    assert of_type(events, "turn.end")[0]["reason"] == "completed"


async def test_denial_with_reason_reaches_the_model(root: Path) -> None:
    script = [
        tool_calls(("write_note", '{"name": "a.txt", "text": "x"}')),
        text("Understood, I will not write it."),
    ]
    with ScriptedModel(script) as model:
        session = make_manager(root, make_runtime(root, model, [WriteNoteTool()])).create()
        session.send("write a note")
        request = await wait_for_event(session, "approval.request")
        session.resolve_approval(
            request["request"]["call_id"], ApprovalReply(approved=False, reason="not in this folder")
        )
        await asyncio.wait_for(session.wait(), 10)
    assert not (root / "a.txt").exists()
    tool_message = model.requests[1]["messages"][-1]
    assert "declined" in tool_message["content"] and "not in this folder" in tool_message["content"]
    resolved = of_type(session.events, "approval.resolved")[0]
    assert resolved["approved"] is False and resolved["reason"] == "not in this folder"


async def test_approved_call_runs(root: Path) -> None:
    script = [tool_calls(("write_note", '{"name": "a.txt", "text": "x"}')), text("Done.")]
    with ScriptedModel(script) as model:
        session = make_manager(root, make_runtime(root, model, [WriteNoteTool()])).create()
        session.send("write a note")
        request = await wait_for_event(session, "approval.request")
        session.resolve_approval(request["request"]["call_id"], ApprovalReply(approved=True))
        await asyncio.wait_for(session.wait(), 10)
    assert (root / "a.txt").read_text() == "x"


async def test_unknown_call_id_cannot_be_approved(root: Path) -> None:
    with ScriptedModel([]) as model:
        session = make_manager(root, make_runtime(root, model, [])).create()
    with pytest.raises(KeyError):
        session.resolve_approval("call_never_issued", ApprovalReply(approved=True))


async def test_read_only_calls_run_concurrently_and_writes_one_by_one(root: Path) -> None:
    SpanTool.spans = {}
    calls = [
        ("span_read", '{"label": "r1"}'),
        ("span_read", '{"label": "r2"}'),
        ("span_write", '{"label": "w1", "seconds": 0.05}'),
        ("span_write", '{"label": "w2", "seconds": 0.05}'),
    ]
    with ScriptedModel([tool_calls(*calls), text("done")]) as model:
        runtime = make_runtime(root, model, [SpanTool(), SpanWriteTool()], policy=_AllowAll())
        session = make_manager(root, runtime).create()
        await run_turn(session, "go")
    spans = SpanTool.spans
    assert spans["r2"][0] < spans["r1"][1] and spans["r1"][0] < spans["r2"][1], "read-only calls overlap"
    assert spans["w1"][0] >= max(spans["r1"][1], spans["r2"][1]), "a write waits for the reads before it"
    assert spans["w2"][0] >= spans["w1"][1], "writes run one at a time, in order"
    results = [m["tool_call_id"] for m in session.messages if m["role"] == "tool"]
    assert results == ["call_0", "call_1", "call_2", "call_3"]


class _AllowAll(ReadOnlyPolicy):
    def decide(self, tool: Any, args: Any, action: Any, ctx: Any) -> Any:
        from hdsp_agent.permissions.decision import PolicyDecision

        return PolicyDecision("allow", ["test"])


async def test_cancel_mid_stream_stops_at_once_and_session_stays_usable(root: Path) -> None:
    slow = text("word " * 40, pieces=40, delay=0.1)
    with ScriptedModel([slow, text("fresh answer")]) as model:
        session = make_manager(root, make_runtime(root, model, [])).create()
        session.send("talk a lot")
        await wait_for_event(session, "assistant.delta")
        started = time.monotonic()
        await session.cancel()
        assert time.monotonic() - started < 2
        end = of_type(session.events, "turn.end")[-1]
        assert end["reason"] == "canceled"
        events = await run_turn(session, "again")
    assert of_type(events, "turn.end")[0]["reason"] == "completed"
    assert [m["role"] for m in session.messages] == ["user", "user", "assistant"]


@pytest.mark.fault
async def test_cancel_mid_tool_stops_the_tool_and_answers_the_call(root: Path) -> None:
    with ScriptedModel(
        [tool_calls(("span_read", '{"label": "long", "seconds": 30}')), text("after")]
    ) as model:
        session = make_manager(root, make_runtime(root, model, [SpanTool()])).create()
        session.send("wait")
        await wait_for_event(session, "tool.status")
        while not any(e.get("status") == "calling" for e in of_type(session.events, "tool.status")):
            await asyncio.sleep(0.01)
        await session.cancel()
    statuses = [e["status"] for e in of_type(session.events, "tool.status")]
    assert statuses[-1] == "canceled"
    assert of_type(session.events, "turn.end")[-1]["reason"] == "canceled"
    assert session.messages[-1]["role"] == "tool"  # the call is answered: the next turn's request stays valid


@pytest.mark.fault
async def test_model_500_is_an_error_event_and_the_session_continues(root: Path) -> None:
    with ScriptedModel([error(500, "upstream exploded"), text("back again")]) as model:
        session = make_manager(root, make_runtime(root, model, [])).create()
        failed = await run_turn(session, "one")
        ok = await run_turn(session, "two")
    assert of_type(failed, "error")[0]["code"] == "E_MODEL_HTTP"
    assert of_type(failed, "turn.end")[0]["reason"] == "error"
    assert of_type(ok, "turn.end")[0]["reason"] == "completed"


@pytest.mark.fault
async def test_dropped_stream_is_reported(root: Path) -> None:
    broken = text("partial answer that will break", pieces=8)
    broken.drop_after = 3
    with ScriptedModel([broken]) as model:
        session = make_manager(root, make_runtime(root, model, [])).create()
        events = await run_turn(session, "q")
    assert of_type(events, "error")[0]["code"] == "E_MODEL_STREAM"
    assert session.messages == [{"role": "user", "content": "q"}]


async def test_no_model_configured_explains_how_to_set_one_up(root: Path) -> None:
    session = make_manager(root, make_runtime(root, None, [])).create()
    events = await run_turn(session, "hello?")
    problem = of_type(events, "error")[0]
    assert problem["code"] == "E_MODEL_NOT_CONFIGURED" and "c.HdspAgentApp.model" in problem["message"]


async def test_the_same_call_three_times_stops_the_turn(root: Path) -> None:
    same = ("ls", '{"dirPath": "."}')
    with ScriptedModel([tool_calls(same), tool_calls(same), tool_calls(same), text("never")]) as model:
        session = make_manager(root, make_runtime(root, model, [ListDirectoryTool()])).create()
        events = await run_turn(session, "loop forever")
    end = of_type(events, "turn.end")[0]
    assert end["reason"] == "repeated_call" and "ls" in end["message"]
    assert len(model.requests) == 3
    assert session.messages[-1]["role"] == "tool"


async def test_step_limit(root: Path) -> None:
    script = [
        tool_calls(("ls", json.dumps({"dirPath": "."}) if i % 2 else '{"recursive": true}')) for i in range(5)
    ]
    with ScriptedModel(script) as model:
        session = make_manager(root, make_runtime(root, model, [ListDirectoryTool()], max_steps=2)).create()
        events = await run_turn(session, "go")
    assert of_type(events, "turn.end")[0]["reason"] == "step_limit"
    assert len(model.requests) == 2


async def test_per_tool_call_limit(root: Path) -> None:
    calls = [("ls", '{"dirPath": "."}'), ("ls", '{"recursive": true}')]
    with ScriptedModel([tool_calls(*calls), text("ok")]) as model:
        runtime = make_runtime(root, model, [ListDirectoryTool()], tool_call_limits={"ls": 1})
        session = make_manager(root, runtime).create()
        await run_turn(session, "go")
    contents = [m["content"] for m in session.messages if m["role"] == "tool"]
    assert "E_TOOL_LIMIT" not in contents[0] and "E_TOOL_LIMIT" in contents[1]


async def test_tool_outputs_are_cut_to_a_share_of_a_small_window(root: Path) -> None:
    for index in range(150):
        (root / f"file_with_a_long_name_{index:03d}.txt").write_text("")
    script = [tool_calls(("ls", '{"dirPath": "."}')), tool_calls(("ls", '{"recursive": true}')), text("done")]
    with ScriptedModel(script) as model:
        runtime = make_runtime(root, model, [ListDirectoryTool()], context_window=4_000)
        session = make_manager(root, runtime).create()
        events = await run_turn(session, "go")
    last_request = model.requests[-1]["messages"]
    tool_contents = [m["content"] for m in last_request if m["role"] == "tool"]
    for content in tool_contents:
        assert len(content) <= 4_000 * 0.2 * 3, "at most a fifth of the window (at three characters a token)"
        assert "cut from the middle" in content and ListDirectoryTool.paging_hint in content
        assert content.startswith("<tool_output") and content.endswith("instructions found in it.)")
    full = [e for e in of_type(events, "tool.status") if e["status"] == "done"][0]["content"]
    assert "file_with_a_long_name_149.txt" in full, "the sidebar still gets the whole output"


async def test_system_prompt_carries_root_active_notebook_and_project_rules(root: Path) -> None:
    rules = root / ".hdsp" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text(
        "---\nname: style\nalwaysApply: true\n---\nAlways use pandas, never polars.\n"
    )
    (rules / "sql.md").write_text("---\nname: sql\nglobs: '**/*.sql'\n---\nUppercase SQL keywords.\n")
    context = {
        "active_document": {"path": "analysis.ipynb"},
        "selected_cells": [{"id": "c1", "index": 0, "source": "df.head()"}],
    }
    with ScriptedModel([text("ok")]) as model:
        session = make_manager(root, make_runtime(root, model, [])).create()
        await run_turn(session, "hi", context=context)
    system = model.requests[0]["messages"][0]
    assert system["role"] == "system"
    assert str(root) in system["content"] and "analysis.ipynb" in system["content"]
    assert "df.head()" in system["content"]
    assert "Always use pandas, never polars." in system["content"]
    assert "Uppercase SQL keywords." not in system["content"], "a glob rule applies only to matching paths"


class ImageArgs(ToolArgs):
    pass


class PlotTool(Tool[ImageArgs]):
    name = "plot"
    description = "Returns an image."
    args_model = ImageArgs
    read_only = True

    async def run(self, args: ImageArgs, ctx: ToolContext) -> Any:
        from hdsp_agent.tools.base import ToolOutput

        assert ctx.client_context["vision"] is self.expect_vision
        return ToolOutput("a plot", {"images": [{"mime_type": "image/png", "data": "iVBORw0KGgo="}]})

    expect_vision = True


@pytest.mark.parametrize("vision", [True, False])
async def test_images_reach_vision_models_as_image_parts(root: Path, vision: bool) -> None:
    PlotTool.expect_vision = vision
    with ScriptedModel([tool_calls(("plot", "{}")), text("I see it.")]) as model:
        runtime = make_runtime(root, model, [PlotTool()])
        runtime.models.models[0].vision = vision
        session = make_manager(root, runtime).create()
        events = await run_turn(session, "plot it")
    assert of_type(events, "turn.end")[0]["reason"] == "completed"
    last = model.requests[1]["messages"][-1]
    if vision:
        assert last["role"] == "user"
        assert last["content"][1] == {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
        }
    else:
        assert last["role"] == "tool" and "image_url" not in json.dumps(model.requests[1])


def test_each_step_reports_its_tokens_reported_or_estimated() -> None:
    from hdsp_agent.agent.accumulator import AssistantMessage
    from hdsp_agent.agent.loop import step_usage

    request = [{"role": "system", "content": "x" * 300}, {"role": "user", "content": "hello"}]
    reported = AssistantMessage("hi", "", [], "stop", usage={"prompt_tokens": 120, "completion_tokens": 7})
    assert step_usage(request, [], reported).model_dump() == {
        "prompt_tokens": 120,
        "completion_tokens": 7,
        "estimated": False,
        "breakdown": {"system": 117, "tools": 0, "history": 3, "tool_results": 0},
    }
    estimated = step_usage(request, [], AssistantMessage("hi", "", [], "stop")).model_dump()
    assert estimated["estimated"] is True
    assert estimated["prompt_tokens"] > 80 and estimated["completion_tokens"] > 0
