"""Fitting the conversation into the model's context window.

Token counts are estimated (about four characters a token): exact tokenizers need model files this server may
not have, and the estimate only has to keep us safely under the limit. Old tool outputs go first — they are
the largest and the easiest to get again — and the model is told what was elided and how to get it back.
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4
# Room left for the model's answer.
ANSWER_RESERVE = 0.25
ELIDED_NOTE = (
    "[earlier tool output elided to fit the context window ({chars:,} characters); "
    "call the tool again if you need it]"
)


def estimate_tokens(payload: Any) -> int:
    return len(json.dumps(payload, ensure_ascii=False)) // CHARS_PER_TOKEN + 1


def fit_to_context(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], context_window: int
) -> list[dict[str, Any]]:
    """A copy of ``messages`` that fits, eliding tool outputs oldest first (the latest step's are kept)."""
    budget = int(context_window * (1 - ANSWER_RESERVE)) - estimate_tokens(tools)
    total = sum(estimate_tokens(message) for message in messages)
    if total <= budget:
        return messages
    fitted = [dict(message) for message in messages]
    last_assistant = max(
        (i for i, m in enumerate(fitted) if m.get("role") == "assistant"), default=len(fitted)
    )
    for index, message in enumerate(fitted):
        if total <= budget:
            break
        if message.get("role") != "tool" or index > last_assistant:
            continue
        content = str(message.get("content", ""))
        replacement = ELIDED_NOTE.format(chars=len(content))
        if len(replacement) >= len(content):
            continue
        total -= estimate_tokens(message)
        message["content"] = replacement
        total += estimate_tokens(message)
    return fitted
