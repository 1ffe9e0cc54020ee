"""Where a request's tokens went: the system prompt, the tool definitions, the conversation, the tool results.

The server reports one prompt total (``stream_options.include_usage``); it does not say how the prompt splits.
We measure each part's share in characters (the same estimate as the context budget) and scale the shares to
the reported total, so the parts always add up to exactly what the server counted (or to the estimate, when it
reported nothing). In text mode the tools are part of the system message; they are counted as tools.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .context_budget import estimate_tokens
from .text_tools import describe_tools

PARTS = ("system", "tools", "history", "tool_results")


def prompt_breakdown(
    request: list[dict[str, Any]], tools: list[dict[str, Any]], prompt_tokens: int, *, text_mode: bool = False
) -> dict[str, int]:
    """``prompt_tokens`` split over ``PARTS`` in proportion to each part's characters."""
    sizes = dict.fromkeys(PARTS, 0)
    for message in request:
        size = len(json.dumps(message.get("content"), ensure_ascii=False)) + len(
            json.dumps(message.get("tool_calls") or "", ensure_ascii=False)
        )
        role = message.get("role")
        part = "system" if role == "system" else "tool_results" if role == "tool" else "history"
        sizes[part] += size
    if tools:
        sizes["tools"] = (
            len(describe_tools(tools)) if text_mode else len(json.dumps(tools, ensure_ascii=False))
        )
    return _apportion(sizes, prompt_tokens)


# ``/context``: the system prompt's rules are counted apart from the rest of it.
REQUEST_PARTS = ("system", "rules", "tools", "history", "tool_results")


@dataclass
class RequestBreakdown:
    """What the next request holds, in tokens per part; the parts sum to ``total``, the request's size
    estimated as a step's usage is when the server reports none (``loop.step_usage``)."""

    parts: dict[str, int]
    total: int
    context_window: int
    messages: int


def request_breakdown(
    request: list[dict[str, Any]], tools: list[dict[str, Any]], rules: str, context_window: int
) -> RequestBreakdown:
    total = estimate_tokens([request, tools])
    sizes = dict.fromkeys(REQUEST_PARTS, 0)
    for message in request:
        size = len(json.dumps(message.get("content"), ensure_ascii=False)) + len(
            json.dumps(message.get("tool_calls") or "", ensure_ascii=False)
        )
        role = message.get("role")
        part = "system" if role == "system" else "tool_results" if role == "tool" else "history"
        if role == "system" and rules and rules in str(message.get("content")):
            sizes["rules"] += len(json.dumps(rules, ensure_ascii=False))
            size = max(0, size - sizes["rules"])
        sizes[part] += size
    sizes["tools"] = len(json.dumps(tools, ensure_ascii=False)) if tools else 0
    return RequestBreakdown(_apportion(sizes, total), total, context_window, len(request))


def _apportion(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Integers proportional to ``sizes`` summing to ``total`` (largest remainders get the leftover)."""
    weight = sum(sizes.values())
    if weight == 0 or total <= 0:
        return (
            {part: (total if part == "history" else 0) for part in sizes}
            if total > 0
            else dict.fromkeys(sizes, 0)
        )
    exact = {part: total * size / weight for part, size in sizes.items()}
    shares = {part: int(value) for part, value in exact.items()}
    leftover = total - sum(shares.values())
    for part in sorted(exact, key=lambda name: exact[name] - shares[name], reverse=True)[:leftover]:
        shares[part] += 1
    return shares
