"""Time to first token through the sidebar's path on a small model (issue 17).

A real ``jupyter server`` with hdsp-agent, two scripted models behind it: ``small`` refuses prompts over 4,096
tokens (o200k) and reports ``n_ctx`` 4,096 on ``/props`` as llama.cpp does, so hdsp-agent detects the window
and picks the compact profile; ``big`` has no limit and is configured with the full profile and a 128k window.
Each repetition is what the sidebar does for a new chat's first message (``model.ts`` ``send``): create the
conversation (``POST /hdsp-agent/sessions``), open its session WebSocket, send "hi" naming the model; it is
timed from the POST to the first ``assistant.delta`` text frame on the socket. No browser: what it adds is the
same for both. A new conversation each time, so the small model's window is asked of its server each time, as
when a user starts a chat.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

import httpx
import openai

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from harness import Figure, clock, compare  # noqa: E402
from jupyter_process import JupyterProcess  # noqa: E402
from scripted_model import ScriptedModel, text  # noqa: E402

SMALL_WINDOW = 4_096
PROMPT = "hi"


def _answer(_request: dict[str, Any]) -> Any:
    return text("Hello! How can I help with your notebook?")


async def _first_token_over_ws(server: JupyterProcess, http: httpx.AsyncClient, model: str) -> float:
    """Seconds from creating a conversation to the first streamed answer text on its session socket."""
    start = clock()
    ws = await server.connect(await server.create_session(http))
    try:
        ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
        ws.write_message(json.dumps({"type": "send", "content": PROMPT, "model": model}))
        first: float | None = None
        while True:
            raw = await ws.read_message()
            if raw is None:
                raise RuntimeError("socket closed mid-turn")
            event = json.loads(raw)
            if first is None and event.get("type") == "assistant.delta" and event.get("kind") == "text":
                first = clock() - start
            if event.get("type") == "error":
                raise RuntimeError(f"the turn failed: {event}")
            if event.get("type") == "turn.end":  # read to the end: the next repetition starts idle
                assert event["reason"] == "completed", event
                assert first is not None, "no answer text reached the socket"
                return first
    finally:
        ws.close()


async def _first_token_raw(client: openai.AsyncOpenAI) -> float:
    start = clock()
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": PROMPT}], stream=True
    )
    first = None
    async for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = clock() - start
    assert first is not None
    return first


async def ttft_small_model() -> Figure:
    small = ScriptedModel(factory=_answer, max_prompt_tokens=SMALL_WINDOW).start()
    big = ScriptedModel(factory=_answer).start()
    models = [
        {"name": "small", "model": "m", "base_url": small.base_url},  # window from /props: compact
        {"name": "big", "model": "m", "base_url": big.base_url, "context_window": 131_072, "profile": "full"},
    ]
    server = JupyterProcess(extra={"models": models, "allow_user_models": False})
    server.start()
    raw_client = openai.AsyncOpenAI(base_url=small.base_url, api_key="x", max_retries=0)
    try:
        async with httpx.AsyncClient() as http:
            ours, baseline = await compare(
                lambda: _first_token_over_ws(server, http, "small"),
                lambda: _first_token_over_ws(server, http, "big"),
                repeats=15,
                warmup=2,
            )
            requests, largest = len(small.prompt_sizes), max(small.prompt_sizes, default=0)
            raw = statistics.median([await _first_token_raw(raw_client) for _ in range(15)])
    finally:
        await raw_client.close()
        server.stop()
        small.stop()
        big.stop()
    refused = len(small.refused)
    assert refused == 0, f"the 4k model refused {refused} requests"
    return Figure(
        name="ttft_ws_4k_compact",
        ours="new chat → first token on the session WebSocket: 4k model (window from /props), compact",
        baseline="the same path: unlimited model, 128k window, full profile",
        ours_median=ours,
        baseline_median=baseline,
        # The small path asks the window of its server (one round trip, probes at once): allowed a fifth more.
        target=1.2,
        extra={
            "4k model's requests": f"{requests}, largest prompt {largest:,} tokens, none refused",
            "raw request to the scripted model (openai client, first text chunk)": f"{raw * 1000:.1f} ms",
        },
    )
