"""Fitting the conversation into the model's context window.

Token counts are estimated from characters: exact tokenizers need model files this server may not have, and the
estimate only has to keep us safely under the limit. Three characters a token over-counts English and code (about
four to five in o200k_base) and matches dense numeric output (two to three), which is what a data-science session
sends most; a server that refuses an over-long prompt is worse than a prompt compacted a little early.

What goes first, oldest first, never the latest step's results:
1. old tool outputs shrink to a short head and tail (the output budget applied again, tighter);
2. old tool outputs are elided, with a note saying how to get them back;
3. then the conversation is compacted: older turns are summarized by the model (see ``compaction.py``).
"""

from __future__ import annotations

import json
from typing import Any

from ..tools.output import OutputBudget, apply_budget

CHARS_PER_TOKEN = 3
# Room left for the model's answer.
ANSWER_RESERVE = 0.25
# An old tool output (before the latest step) shrinks to this many characters first.
OLD_OUTPUT_CHARS = 1_200
ELIDED_NOTE = (
    "[earlier tool output elided to fit the context window ({chars:,} characters); "
    "call the tool again if you need it]"
)
SHRUNK_HINT = "call the tool again (it was shortened to fit the context window)"


def estimate_tokens(payload: Any) -> int:
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return len(text) // CHARS_PER_TOKEN + 1


def prompt_budget(context_window: int, tools: list[dict[str, Any]]) -> int:
    """Tokens the messages (system prompt included) may take next to ``tools``, leaving room for the answer."""
    return int(context_window * (1 - ANSWER_RESERVE)) - estimate_tokens(tools)


def messages_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(estimate_tokens(message) for message in messages)


def fits(messages: list[dict[str, Any]], tools: list[dict[str, Any]], context_window: int) -> bool:
    return messages_tokens(messages) <= prompt_budget(context_window, tools)


def fit_to_context(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], context_window: int
) -> list[dict[str, Any]]:
    """A copy of ``messages`` that fits if shrinking and eliding old tool outputs is enough (else as close as
    they get: the caller compacts). The latest step's outputs are kept whole."""
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
            message = fitted[index]
            replacement = shorten(str(message.get("content", "")))
            if replacement is None:
                continue
            total -= estimate_tokens(message)
            message["content"] = replacement
            total += estimate_tokens(message)
    return fitted


def _shrunk(content: str) -> str | None:
    if len(content) <= OLD_OUTPUT_CHARS or content.startswith("[earlier tool output elided"):
        return None
    return apply_budget(content, OutputBudget(max_chars=OLD_OUTPUT_CHARS), SHRUNK_HINT).text


def _elided(content: str) -> str | None:
    replacement = ELIDED_NOTE.format(chars=len(content))
    return replacement if len(replacement) < len(content) else None
