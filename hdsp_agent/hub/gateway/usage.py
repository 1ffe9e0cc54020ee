"""Counting a request's tokens: the upstream's own ``usage`` when it reports one, else an estimate (4
characters to a token, as the agent estimates), so a server that reports nothing is still held to its
quota."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4


def estimate_prompt_tokens(body: dict[str, Any]) -> int:
    """The prompt's size from what is sent: the messages (or a completion's prompt) and the tools."""
    sent = [body.get("messages"), body.get("prompt"), body.get("tools")]
    size = sum(len(json.dumps(part, ensure_ascii=False)) for part in sent if part)
    return max(1, size // CHARS_PER_TOKEN)


@dataclass
class UsageCount:
    """Folds a response (one JSON body or the stream's chunks) into its token counts."""

    estimated_prompt: int
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    completion_chars: int = 0

    def add(self, payload: dict[str, Any]) -> None:
        usage = payload.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            self.prompt_tokens = usage["prompt_tokens"]
            completion = usage.get("completion_tokens")
            self.completion_tokens = completion if isinstance(completion, int) else 0
        for choice in payload.get("choices") or []:
            if isinstance(choice, dict):
                self.completion_chars += _choice_chars(choice)

    @property
    def estimated(self) -> bool:
        return self.prompt_tokens is None

    def totals(self) -> tuple[int, int]:
        """(prompt, completion) tokens: reported, or estimated."""
        if self.prompt_tokens is not None:
            return self.prompt_tokens, self.completion_tokens or 0
        return self.estimated_prompt, -(-self.completion_chars // CHARS_PER_TOKEN)


def _choice_chars(choice: dict[str, Any]) -> int:
    part = choice.get("delta") or choice.get("message") or {}
    if not isinstance(part, dict):
        return len(str(choice.get("text") or ""))
    size = len(str(part.get("content") or "")) + len(str(part.get("reasoning_content") or ""))
    for call in part.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            size += len(str(function.get("name") or "")) + len(str(function.get("arguments") or ""))
    return size + len(str(choice.get("text") or ""))
