"""Figures that need a running server: stream relay over the WebSocket, and startup cost."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import httpx
import openai

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from harness import Figure, clock, compare  # noqa: E402
from jupyter_process import JupyterProcess, run_turn_over_ws  # noqa: E402
from scripted_model import Reply, ScriptedModel, _chunk  # noqa: E402

TOKENS = 20_000


def token_stream() -> Reply:
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": f"t{i % 10} "}) for i in range(TOKENS)]
    chunks.append(_chunk({}, "stop"))
    return Reply(chunks)


async def stream_relay() -> Figure:
    model = ScriptedModel(factory=lambda request: token_stream()).start()
    server = JupyterProcess(model_url=model.base_url)
    server.start()
    client = openai.AsyncOpenAI(base_url=model.base_url, api_key="x", max_retries=0)
    try:
        async with httpx.AsyncClient() as http:

            async def ours() -> float:
                ws = await server.connect(await server.create_session(http))
                start = clock()
                events = await run_turn_over_ws(ws, "stream please")
                elapsed = clock() - start
                ws.close()
                text = "".join(e["text"] for e in events if e.get("type") == "assistant.delta")
                assert text.count(" ") == TOKENS, "every token reached the browser"
                return elapsed

            async def baseline() -> float:
                start = clock()
                stream = await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "x"}], stream=True
                )
                async for _ in stream:
                    pass
                return clock() - start

            ours_median, baseline_median = await compare(ours, baseline, repeats=5, warmup=1)
    finally:
        server.stop()
        model.stop()
    return Figure(
        "stream relay",
        f"{TOKENS:,} tokens → WebSocket",
        "openai client reading the stream",
        ours_median,
        baseline_median,
        1.2,
    )


def startup() -> Figure:
    with_times, without_times, with_rss, without_rss = [], [], [], []
    # Start-up times of one machine vary by ±10 % from run to run: five interleaved pairs, medians.
    for _ in range(5):
        for with_agent, times, rss in ((True, with_times, with_rss), (False, without_times, without_rss)):
            server = JupyterProcess(with_agent=with_agent)
            try:
                times.append(server.start())
                rss.append(server.rss_mb())
            finally:
                server.stop()
    added = statistics.median(with_rss) - statistics.median(without_rss)
    figure = Figure(
        "startup",
        "jupyter server + hdsp-agent",
        "jupyter server alone",
        statistics.median(with_times),
        statistics.median(without_times),
        1.15,
        extra={"RSS added (MB)": f"{added:.1f} (target ≤ 40)"},
    )
    return figure
