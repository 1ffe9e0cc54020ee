"""Compaction: when shrinking old tool outputs is not enough, older turns become a short summary by the model.

The last steps are kept as they are (at least the latest assistant message with its tool results); everything
before becomes one user message: the model's summary (what was done, files and cells touched, open questions)
and the user's latest request verbatim, so a turn compacted mid-way still knows what it is for. The
conversation's event log keeps the full history; the sidebar shows that it happened (``context.compacted``).
"""

from __future__ import annotations

import json
from typing import Any

from ..tools.output import wrap_untrusted
from .context_budget import CHARS_PER_TOKEN, OLD_OUTPUT_CHARS, estimate_tokens, prefix_tokens, prompt_budget
from .llm import ModelClient

SUMMARY_HEADER = "(hdsp-agent) The earlier conversation was compacted to fit the model's context window."
SUMMARY_SYSTEM = (
    "You compact a coding agent's conversation so it can go on with less context. Write a short state, at "
    "most 200 words, as terse notes under these headings: Done; Files and cells touched (paths, cell ids); "
    "Findings (values, errors); Open questions and next step. Keep ids, paths and numbers exact. Do not call "
    "tools."
)
# Share of the message budget the kept tail may take; the summary and the next answer need the rest.
TAIL_SHARE = 0.5
LATEST_REQUEST_CHARS = 1_500
# Share of the message budget the live notebook outline may take in the compaction note.
LIVE_STATE_SHARE = 0.15
TRANSCRIPT_ITEM_CHARS = 600


def tail_start(messages: list[dict[str, Any]], budget: int) -> int:
    """Where the kept tail begins: the latest messages within ``budget`` tokens, always the latest step.

    The tail starts at a user or assistant message, never at a tool result (whose call would be cut off).
    """
    boundaries = [i for i, m in enumerate(messages) if m.get("role") in ("user", "assistant")]
    if not boundaries:
        return 0
    last_assistant = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=boundaries[-1]
    )
    start = last_assistant
    for index in reversed(boundaries):
        if index >= last_assistant:
            continue
        if _tokens(messages[index:]) > budget:
            break
        start = index
    return start


async def compact(
    model: ModelClient,
    messages: list[dict[str, Any]],
    system_prompt: str,
    tools: list[dict[str, Any]],
    context_window: int,
    live_state: str | None = None,
    *,
    tail_budget: int | None = None,
) -> dict[str, Any] | None:
    """Summarize the older part of ``messages`` in place; what happened, or None if nothing could go.

    ``tail_budget``: tokens the kept tail may take (default: a share of the room); 0 keeps only the latest
    step (``/compact``: the user asked to compact now)."""
    available = prompt_budget(context_window, tools) - prefix_tokens(system_prompt, [])
    budget = int(available * TAIL_SHARE) if tail_budget is None else tail_budget
    start = tail_start(messages, budget)
    if start == 0:
        return None
    older, tail = messages[:start], messages[start:]
    summary = await summarize(model, older, context_window)
    latest_request = next((_text(m.get("content")) for m in reversed(older) if m.get("role") == "user"), "")
    # The note must fit next to the kept tail: the notebook outline goes first, then the summary is cut.
    room = available - _tokens(tail) - 20
    parts = [SUMMARY_HEADER, "Summary:\n" + summary.strip()]
    if latest_request and not _has_user_message(tail):
        parts.append("The user's latest request:\n" + latest_request[:LATEST_REQUEST_CHARS])
    if live_state:
        # What the notebook is now, so the model does not work from cells the summary only remembers.
        cap = max(300, int(available * LIVE_STATE_SHARE) * CHARS_PER_TOKEN)
        state = (
            live_state if len(live_state) <= cap else live_state[:cap] + "\n[... more cells: read_notebook]"
        )
        # Cells are data, like any tool result: inside the envelope (read through the pipeline, redacted).
        enveloped = wrap_untrusted(state, "read_notebook")
        with_state = [*parts, "The active notebook now (cells, without outputs):\n" + enveloped]
        if estimate_tokens("\n\n".join(with_state)) <= room:
            parts = with_state
    note = "\n\n".join(parts)
    if estimate_tokens(note) > room:
        note = _cut(note, max(room, 100) * CHARS_PER_TOKEN)
    before = _tokens(messages)
    if tail and tail[0].get("role") == "user" and isinstance(tail[0].get("content"), str):
        # Some chat templates insist that roles alternate: fold the note into the user message that follows.
        first = {**tail[0], "content": note + "\n\n" + tail[0]["content"]}
        compacted = [first, *tail[1:]]
    else:
        compacted = [{"role": "user", "content": note}, *tail]
    messages[:] = compacted
    return {
        "summary": summary.strip(),
        "messages_before": len(older) + len(tail),
        "messages_after": len(compacted),
        "tokens_before": before,
        "tokens_after": _tokens(compacted),
    }


async def summarize(model: ModelClient, older: list[dict[str, Any]], context_window: int) -> str:
    """The model's summary of ``older``, from a transcript cut to fit its window."""
    room = prompt_budget(context_window, []) - estimate_tokens(SUMMARY_SYSTEM) - 50
    transcript = _transcript(older, room)
    request = [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": "Conversation to compact:\n\n" + transcript},
    ]
    answer = await model.stream(request, [], lambda delta: None)
    return answer.content or "(the model gave no summary)"


def _transcript(messages: list[dict[str, Any]], budget_tokens: int) -> str:
    """One line per message, long ones cut; the oldest lines go first when it is still too long."""
    items: list[str] = []
    for message in messages:
        role = message.get("role")
        content = _text(message.get("content"))
        if role == "tool":
            items.append("tool result: " + _cut(content, TRANSCRIPT_ITEM_CHARS))
            continue
        line = f"{role}: {_cut(content, TRANSCRIPT_ITEM_CHARS * 2)}"
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            line += f"\n  called {function.get('name')}({_cut(str(function.get('arguments', '')), 300)})"
        items.append(line)
    while items and estimate_tokens("\n".join(items)) > budget_tokens:
        items.pop(0)
    return "\n".join(items)


def _has_user_message(messages: list[dict[str, Any]]) -> bool:
    return any(m.get("role") == "user" for m in messages)


def _tokens(messages: list[dict[str, Any]]) -> int:
    # Tool outputs before the latest step are counted as they will be sent: shrunk to OLD_OUTPUT_CHARS.
    total = 0
    for message in messages:
        if message.get("role") == "tool":
            total += min(estimate_tokens(message), estimate_tokens("x" * OLD_OUTPUT_CHARS) + 20)
        else:
            total += estimate_tokens(message)
    return total


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("text"))
    return json.dumps(content) if content is not None else ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 20] + f" …[{len(text) - limit + 20} chars cut]"
