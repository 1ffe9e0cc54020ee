"""Load figures: many concurrent sessions over real WebSockets, then many sequential turns watching memory.

Used by ``make soak`` (reliability) and ``make bench`` (the concurrency figure). The model is the scripted
server; every session runs a multi-step tool loop (``ls`` calls, then an answer).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from jupyter_process import JupyterProcess  # noqa: E402
from scripted_model import Reply, ScriptedModel, text, tool_calls  # noqa: E402

from hdsp_agent.agent.conversations import MAX_LIVE  # noqa: E402

STEPS = 5
TURNS_PER_CONVERSATION = 10


def multi_step_reply(request: dict[str, Any]) -> Reply:
    """Tool calls until the conversation holds STEPS - 1 tool results in this turn, then an answer."""
    messages = request.get("messages", [])
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    done = sum(1 for m in messages[last_user:] if m.get("role") == "tool")
    if done >= STEPS - 1:
        return text("done", pieces=2)
    return tool_calls(("ls", json.dumps({"dirPath": f"d{done}"})), pieces=2)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


async def one_turn(
    server: JupyterProcess, http: httpx.AsyncClient, session_id: str | None = None
) -> dict[str, Any]:
    session_id = session_id or await server.create_session(http)
    ws = await server.connect(session_id)
    try:
        ws.write_message(json.dumps({"type": "resume", "since_seq": 10**9}))
        sent = time.perf_counter()
        ws.write_message(json.dumps({"type": "send", "content": "look around"}))
        steps: list[float] = []
        last = sent
        while True:
            raw = await asyncio.wait_for(ws.read_message(), 120)
            if raw is None:
                return {"ok": False, "steps": steps, "reason": "socket closed"}
            event = json.loads(raw)
            if event.get("type") == "assistant.message":
                now = time.perf_counter()
                steps.append(now - last)
                last = now
            if event.get("type") == "turn.end":
                return {
                    "ok": event["reason"] == "completed" and len(steps) == STEPS,
                    "steps": steps,
                    "reason": event["reason"],
                }
    finally:
        ws.close()


def prepare_root(server: JupyterProcess) -> None:
    for index in range(STEPS):
        (server.root / f"d{index}").mkdir(exist_ok=True)
        (server.root / f"d{index}" / "file.txt").write_text("x")


async def concurrent_sessions(count: int = 50) -> dict[str, Any]:
    with ScriptedModel(factory=multi_step_reply) as model:
        server = JupyterProcess(model_url=model.base_url)
        server.start()
        prepare_root(server)
        try:
            async with httpx.AsyncClient(timeout=60) as http:
                single = [await one_turn(server, http) for _ in range(3)]
                results = await asyncio.gather(
                    *(one_turn(server, http) for _ in range(count)), return_exceptions=True
                )
        finally:
            server.stop()
    single_steps = [s for r in single for s in r["steps"]]
    finished = [r for r in results if isinstance(r, dict)]
    steps = [s for r in finished for s in r["steps"]]
    return {
        "sessions": count,
        "completed": sum(1 for r in finished if r["ok"]),
        "success_rate": sum(1 for r in finished if r["ok"]) / count,
        "single_p50_step_s": statistics.median(single_steps),
        "p50_step_s": statistics.median(steps) if steps else float("nan"),
        "p99_step_s": percentile(steps, 0.99) if steps else float("nan"),
    }


async def conversation_turns(
    server: JupyterProcess, http: httpx.AsyncClient, turns: int, rss_every: int = 0
) -> tuple[int, list[float]]:
    """``turns`` turns, ten per conversation as a user holds them; RSS sampled every ``rss_every`` turns."""
    ok, samples, session_id = 0, [], None
    for number in range(turns):
        if number % TURNS_PER_CONVERSATION == 0:
            session_id = await server.create_session(http)
        ok += (await one_turn(server, http, session_id))["ok"]
        if rss_every and (number + 1) % rss_every == 0:
            samples.append(round(server.rss_mb(), 1))
    return ok, samples


async def sequential_turns(turns: int = 1000) -> dict[str, Any]:
    """Memory over many turns, measured once the server is in its steady state.

    The server keeps the last MAX_LIVE conversations in memory (older idle ones are reloaded from the store
    when opened): a bounded cache, not a leak. The warm-up fills it with conversations shaped like the
    measured ones, so the growth figure counts only what the turns leave behind; what the full cache costs
    is reported apart.
    """
    warm_turns = (MAX_LIVE + 2) * TURNS_PER_CONVERSATION
    with ScriptedModel(factory=multi_step_reply) as model:
        server = JupyterProcess(model_url=model.base_url)
        server.start()
        prepare_root(server)
        try:
            async with httpx.AsyncClient(timeout=60) as http:
                first = [await one_turn(server, http) for _ in range(10)]
                rss_cold = server.rss_mb()
                warm_ok, _ = await conversation_turns(server, http, warm_turns)
                rss_start = server.rss_mb()
                ok, samples = await conversation_turns(server, http, turns, rss_every=max(1, turns // 4))
                rss_end = server.rss_mb()
        finally:
            server.stop()
    return {
        "turns": turns + warm_turns + len(first),
        "completed": ok + warm_ok + sum(1 for r in first if r["ok"]),
        "measured_turns": turns,
        "rss_cold_mb": rss_cold,
        "rss_start_mb": rss_start,
        "rss_end_mb": rss_end,
        "rss_samples_mb": samples,
        "live_conversations_mb": rss_start - rss_cold,
        "rss_growth_per_1000_turns_mb": (rss_end - rss_start) * 1000 / turns,
    }
