"""Fitting the conversation into the model's context window.

Token counts are estimated from characters: exact tokenizers need model files this server may not have, and
the estimate only has to keep us safely under the limit. Conversation text counts three characters a token:
that over-counts English and code (four to five in o200k_base) and matches dense numeric output (two to
three), which a data-science session sends a lot of; Ollama cuts an over-long prompt silently, so erring long
is the safe side. The system prompt and tool schemas are our own English and JSON (3.9 characters a token in
o200k_base, measured): they count 3.5, so a small window is not given up to the estimate's error on the part
that is always there.

What goes first, oldest first, never the latest step's results: 1. old tool outputs shrink to a short head and
tail (the output budget applied again, tighter); 2. old tool outputs are elided, with a note saying how to get
them back; 3. then the conversation is compacted: older turns are summarized by the model (see
``compaction.py``).
"""

from __future__ import annotations

import json
from typing import Any

from ..tools.output import OutputBudget, apply_budget

CHARS_PER_TOKEN = 3
PROSE_CHARS_PER_TOKEN = 3.5
# Room left for the model's answer.
ANSWER_RESERVE = 0.25
# An old tool output (before the latest step) shrinks to this many characters first.
OLD_OUTPUT_CHARS = 1_200
ELIDED_NOTE = (
    "[earlier tool output elided to fit the context window ({chars:,} characters); "
    "call the tool again if you need it]"
)
# The latest step's outputs are never cut below this (the model must see what its call did).
LATEST_OUTPUT_FLOOR_CHARS = 600
LATEST_HINT = "call the tool again with a narrower request"
SHRUNK_HINT = "call the tool again (it was shortened to fit the context window)"


def estimate_tokens(payload: Any, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return int(len(text) / chars_per_token) + 1


def prefix_tokens(system_prompt: str, tools: list[dict[str, Any]]) -> int:
    """What every request of a turn starts with and does not change: the system prompt and tool schemas."""
    return estimate_tokens(system_prompt, PROSE_CHARS_PER_TOKEN) + estimate_tokens(
        tools, PROSE_CHARS_PER_TOKEN
    )


def prompt_budget(context_window: int, tools: list[dict[str, Any]]) -> int:
    """Tokens the messages (system prompt included) may take next to ``tools``, with room for the answer."""
    return int(context_window * (1 - ANSWER_RESERVE)) - estimate_tokens(tools, PROSE_CHARS_PER_TOKEN)


def message_tokens(message: dict[str, Any]) -> int:
    if message.get("role") == "system":
        return estimate_tokens(message, PROSE_CHARS_PER_TOKEN)
    return estimate_tokens(message)


def messages_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(message_tokens(message) for message in messages)


def fits(messages: list[dict[str, Any]], tools: list[dict[str, Any]], context_window: int) -> bool:
    return messages_tokens(messages) <= prompt_budget(context_window, tools)


def fit_to_context(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], context_window: int
) -> list[dict[str, Any]]:
    """A copy of ``messages`` that fits if shrinking and eliding old tool outputs is enough (else as close as
    they get: the caller compacts). The latest step's outputs are kept whole unless nothing else is left."""
    budget = prompt_budget(context_window, tools)
    total = messages_tokens(messages)
    if total <= budget:
        return messages
    fitted = [dict(message) for message in messages]
    last_assistant = max(
        (i for i, m in enumerate(fitted) if m.get("role") == "assistant"), default=len(fitted)
    )
    old_outputs = [i for i, m in enumerate(fitted) if m.get("role") == "tool" and i < last_assistant]
    for shorten in (_shrunk, _elided):
        for index in old_outputs:
            if total <= budget:
                return fitted
            total = _replace(fitted[index], shorten, total)
    # Last: the latest step's outputs share what is left (head and tail, with how to page the rest).
    latest = [i for i, m in enumerate(fitted) if m.get("role") == "tool" and i > last_assistant]
    if total > budget and latest:
        over_chars = (total - budget) * CHARS_PER_TOKEN
        for index in latest:
            content = str(fitted[index].get("content", ""))
            keep = max(LATEST_OUTPUT_FLOOR_CHARS, len(content) - over_chars // len(latest) - 400)
            if keep < len(content):
                total = _replace(
                    fitted[index],
                    lambda text, keep=keep: (
                        apply_budget(text, OutputBudget(max_chars=keep), LATEST_HINT).text
                    ),
                    total,
                )
    return fitted


def _replace(message: dict[str, Any], shorten: Any, total: int) -> int:
    replacement = shorten(str(message.get("content", "")))
    if replacement is None:
        return total
    total -= message_tokens(message)
    message["content"] = replacement
    return total + message_tokens(message)


def _shrunk(content: str) -> str | None:
    if len(content) <= OLD_OUTPUT_CHARS or content.startswith("[earlier tool output elided"):
        return None
    return apply_budget(content, OutputBudget(max_chars=OLD_OUTPUT_CHARS), SHRUNK_HINT).text


def _elided(content: str) -> str | None:
    replacement = ELIDED_NOTE.format(chars=len(content))
    return replacement if len(replacement) < len(content) else None
