"""Figures for the tool pipeline and the agent loop (in-process, scripted model on 127.0.0.1)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from harness import Figure, clock, compare  # noqa: E402
from scripted_model import ScriptedModel, text, tool_calls  # noqa: E402

from hdsp_agent.agent.llm import ModelSettings  # noqa: E402
from hdsp_agent.agent.models import ModelCatalog  # noqa: E402
from hdsp_agent.agent.store import SessionStore  # noqa: E402
from hdsp_agent.assembly import assemble  # noqa: E402
from hdsp_agent.permissions.decision import ReadOnlyPolicy  # noqa: E402
from hdsp_agent.tools.base import ToolCall, ToolContext  # noqa: E402
from hdsp_agent.tools.builtin.ls import ListDirectoryArgs, ListDirectoryTool  # noqa: E402
from hdsp_agent.tools.executor import ToolExecutor  # noqa: E402
from hdsp_agent.tools.registry import ToolRegistry  # noqa: E402

CALLS_PER_SAMPLE = 50


async def pipeline_overhead(workdir: Path) -> Figure:
    root = workdir / "ten"
    root.mkdir()
    for index in range(10):
        (root / f"file{index}.txt").write_text("x")
    tool = ListDirectoryTool()
    registry = ToolRegistry([tool])
    executor = ToolExecutor(registry)
    ctx = ToolContext(root_dir=root)
    catalog = registry.catalog(ctx)
    args = ListDirectoryArgs(dirPath=".")

    async def ours() -> float:
        start = clock()
        for number in range(CALLS_PER_SAMPLE):
            await executor.execute(
                ToolCall(id=f"c{number}", name="ls", arguments='{"dirPath": "."}'), ctx, catalog
            )
        return (clock() - start) / CALLS_PER_SAMPLE

    async def baseline() -> float:
        start = clock()
        for _ in range(CALLS_PER_SAMPLE):
            await tool.run(args, ctx)
        return (clock() - start) / CALLS_PER_SAMPLE

    ours_median, baseline_median = await compare(ours, baseline, repeats=30)
    return Figure(
        "tool pipeline",
        "executor ls (10 entries)",
        "ListDirectoryTool.run",
        ours_median,
        baseline_median,
        1.10,
    )


STEPS = 20


def _loop_script(root: Path) -> list[Any]:
    for index in range(STEPS):
        (root / f"d{index:02d}").mkdir(exist_ok=True)
    return [tool_calls(("ls", json.dumps({"dirPath": f"d{i:02d}"})), pieces=1) for i in range(STEPS - 1)] + [
        text("done", pieces=1)
    ]


async def loop_overhead(workdir: Path) -> Figure:
    root = workdir / "loop"
    root.mkdir()
    model = ScriptedModel().start()
    settings = ModelSettings(model="scripted", base_url=model.base_url, max_retries=0)
    built = assemble(
        None,
        root,
        lambda **overrides: ToolContext(root_dir=root, **overrides),
        tools=[ListDirectoryTool()],
        policy=ReadOnlyPolicy(),
        models=ModelCatalog([settings]),
        max_steps=STEPS + 5,
    )
    manager = built.conversations(SessionStore(workdir / "loop.sqlite3"))
    tool = ListDirectoryTool()
    client = openai.AsyncOpenAI(base_url=model.base_url, api_key="x", max_retries=0)

    async def ours() -> float:
        model.add(*_loop_script(root))
        session = manager.create()
        start = clock()
        session.send("go")
        await session.wait()
        return clock() - start

    async def baseline() -> float:
        model.add(*_loop_script(root))
        messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        start = clock()
        while True:
            stream = await client.chat.completions.create(model="m", messages=messages, stream=True)
            calls: dict[int, dict[str, str]] = {}
            async for chunk in stream:
                for call in chunk.choices[0].delta.tool_calls or []:
                    entry = calls.setdefault(call.index, {"id": call.id or "", "name": "", "arguments": ""})
                    entry["name"] += call.function.name or ""
                    entry["arguments"] += call.function.arguments or ""
            if not calls:
                break
            messages.append({"role": "assistant", "content": "", "tool_calls": []})
            for entry in calls.values():
                output = await tool.run(
                    ListDirectoryArgs(**json.loads(entry["arguments"])), ToolContext(root_dir=root)
                )
                messages.append({"role": "tool", "tool_call_id": entry["id"], "content": output})
        return clock() - start

    try:
        ours_median, baseline_median = await compare(ours, baseline, repeats=7, warmup=1)
    finally:
        await manager.shutdown()
        model.stop()
    return Figure(
        "loop overhead",
        f"{STEPS}-step session turn",
        "openai client + direct tool calls",
        ours_median,
        baseline_median,
        1.5,
    )
