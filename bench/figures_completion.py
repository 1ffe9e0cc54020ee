"""Inline completion: what ``POST /hdsp-agent/complete`` adds to the model's own request, and how many
requests 100 keystrokes cost once JupyterLab's inline completer has debounced them.

- **latency**: the route on a real Jupyter server (auth, body check, redaction, the request) against the
  same fill-in-the-middle request sent straight to the model. The scripted model answers after 150 ms, a
  small local model's time for a short completion: against a model that answers in a millisecond, any
  server is "slow".
- **requests per 100 keystrokes**: a typing trace (bursts of keys 60–180 ms apart, pauses between words and
  lines) through the inline completer's rule — a request only after ``debouncerDelay`` ms without a key press
  (``@jupyterlab/completer`` ``CompletionReconciliator.fetchInline``), at the provider's default 350 ms —
  against one request per keystroke.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from harness import Figure, clock, compare  # noqa: E402
from jupyter_process import JupyterProcess  # noqa: E402
from scripted_model import Reply, ScriptedModel, text  # noqa: E402

MODEL_SECONDS = 0.15
DEBOUNCE_MS = 350  # src/inlineCompletion.ts HdspInlineProvider.schema
KEYSTROKES = 100


def _slow_reply(_: object) -> Reply:
    reply = text("mean()")
    reply.hang = MODEL_SECONDS
    return reply


async def completion_figures(_: Path) -> list[Figure]:
    model = ScriptedModel(factory=_slow_reply, completions=True).start()
    server = JupyterProcess(model_url=model.base_url)
    server.start()
    body = {"prefix": "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf['price'].", "suffix": "\n"}
    try:
        async with httpx.AsyncClient(timeout=30) as http:

            async def ours() -> float:
                start = clock()
                response = await http.post(
                    f"{server.base}/hdsp-agent/complete", json=body, headers=server.headers
                )
                elapsed = clock() - start
                assert response.status_code == 200 and response.json()["text"] == "mean()", response.text
                return elapsed

            async def baseline() -> float:
                start = clock()
                response = await http.post(
                    f"{model.base_url}/completions",
                    json={"model": "scripted", "prompt": body["prefix"], "suffix": body["suffix"]},
                )
                elapsed = clock() - start
                assert response.status_code == 200
                return elapsed

            ours_median, baseline_median = await compare(ours, baseline, repeats=25, warmup=3)
    finally:
        server.stop()
        model.stop()
    sent = requests_after_debounce(typing_trace(KEYSTROKES), DEBOUNCE_MS)
    return [
        Figure(
            "completion latency",
            "POST /hdsp-agent/complete (FIM)",
            f"the same /v1/completions request to the model ({MODEL_SECONDS * 1000:.0f} ms)",
            ours_median,
            baseline_median,
            1.2,
            extra={"added (ms)": round((ours_median - baseline_median) * 1000, 1)},
        ),
        Figure(
            "completion requests",
            f"per {KEYSTROKES} keystrokes, {DEBOUNCE_MS} ms debounce",
            "one request per keystroke",
            float(sent),
            float(KEYSTROKES),
            0.3,
            unit="requests",
        ),
    ]


def typing_trace(keys: int, seed: int = 29) -> list[float]:
    """Key press times (ms): bursts 60–180 ms apart, a word's pause (250–700 ms) every 4–8 keys, a line's
    pause (1–3 s) every ~30 keys."""
    rng = random.Random(seed)
    times, now = [], 0.0
    for number in range(keys):
        times.append(now)
        if number % 30 == 29:
            now += rng.uniform(1000, 3000)
        elif rng.random() < 1 / 6:
            now += rng.uniform(250, 700)
        else:
            now += rng.uniform(60, 180)
    return times


def requests_after_debounce(times: list[float], delay_ms: float) -> int:
    """Requests the inline completer makes: one after each key followed by ``delay_ms`` of quiet (and after
    the last key)."""
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    return sum(1 for gap in gaps if gap >= delay_ms) + 1
