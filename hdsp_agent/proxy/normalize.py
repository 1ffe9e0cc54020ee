"""Making a model's tool calls well-formed for clients that execute them (Continue, the ``cn`` CLI).

What clients need: ``arguments`` as a valid JSON string, ``finish_reason: "tool_calls"`` whenever there are
calls,
``index`` and ``id`` on every call, and names from the request's ``tools``. What models send: broken JSON,
repeated names, near-miss names (``Read_File``, ``read-file``), ``stop`` with calls. Whatever cannot be made
well-formed becomes a sentence of text instead of a broken call.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..agent.accumulator import StreamAccumulator, ToolCallDraft
from ..tools.args import parse_arguments
from ..tools.base import ToolError


@dataclass
class NormalizedCalls:
    calls: list[dict[str, Any]] = field(default_factory=list)
    # Explanations for calls that were dropped; appended to the message text.
    notes: list[str] = field(default_factory=list)


def tool_names(request: dict[str, Any]) -> list[str]:
    names = []
    for tool in request.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def _name_key(name: str) -> str:
    return name.lower().replace("-", "_")


def resolve_name(name: str, offered: list[str]) -> str | None:
    """The offered tool this name means: exact, or the one match ignoring case and ``-``/``_``; else None."""
    if not offered or name in offered:
        return name
    matches = [candidate for candidate in offered if _name_key(candidate) == _name_key(name)]
    return matches[0] if len(matches) == 1 else None


def normalize_calls(drafts: list[ToolCallDraft], offered: list[str]) -> NormalizedCalls:
    normalized = NormalizedCalls()
    for draft in drafts:
        name = resolve_name(draft.name, offered)
        if name is None:
            normalized.notes.append(
                f"(The model tried to call an unknown tool {draft.name!r}; the call was dropped. "
                f"Available tools: {', '.join(offered)}.)"
            )
            continue
        try:
            arguments = parse_arguments(draft.arguments).value
        except ToolError as error:
            normalized.notes.append(
                f"(The model's call to {name} had arguments that could not be repaired ({error.message}); "
                "the call was dropped.)"
            )
            continue
        normalized.calls.append(
            {
                "index": len(normalized.calls),
                "id": draft.id or f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
            }
        )
    return normalized


def normalize_completion(completion: dict[str, Any], offered: list[str]) -> dict[str, Any]:
    """A non-streaming response with its first choice's tool calls made well-formed."""
    for choice in completion.get("choices") or []:
        message = choice.get("message") or {}
        drafts = [
            ToolCallDraft(
                id=call.get("id") or "",
                name=(call.get("function") or {}).get("name") or "",
                arguments=_arguments_text((call.get("function") or {}).get("arguments")),
            )
            for call in message.get("tool_calls") or []
        ]
        if not drafts:
            continue
        normalized = normalize_calls(drafts, offered)
        if normalized.calls:
            message["tool_calls"] = [
                {k: v for k, v in call.items() if k != "index"} for call in normalized.calls
            ]
            choice["finish_reason"] = "tool_calls"
        else:
            message.pop("tool_calls", None)
            choice["finish_reason"] = "stop"
        if normalized.notes:
            message["content"] = "\n".join(filter(None, [message.get("content") or "", *normalized.notes]))
        choice["message"] = message
    return completion


def _arguments_text(arguments: Any) -> str:
    # Some servers send arguments as an object instead of a JSON string.
    return arguments if isinstance(arguments, str) else json.dumps(arguments or {})


class StreamNormalizer:
    """Re-emits a chunk stream: text passes through at once; tool calls are held until complete, then sent
    whole."""

    def __init__(self, offered: list[str]) -> None:
        self.offered = offered
        self.accumulator = StreamAccumulator()
        self._template: dict[str, Any] = {}
        self.finished = False

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        """Chunks to send now for one upstream chunk."""
        if not self._template:
            self._template = {key: chunk[key] for key in ("id", "object", "created", "model") if key in chunk}
        choices = chunk.get("choices") or []
        if not choices:
            return [chunk]  # usage-only chunks (stream_options.include_usage) pass through
        self.accumulator.add(chunk)
        out: list[dict[str, Any]] = []
        delta = choices[0].get("delta") or {}
        passthrough = {
            key: value for key, value in delta.items() if key != "tool_calls" and value is not None
        }
        if passthrough.get("content") or passthrough.get("role") or passthrough.get("reasoning_content"):
            out.append(self._chunk(passthrough))
        if choices[0].get("finish_reason"):
            out.extend(self.finish())
        return out

    def finish(self) -> list[dict[str, Any]]:
        """The held tool calls and the final chunk (once; also called when the stream ends without a
        reason)."""
        if self.finished:
            return []
        self.finished = True
        message = self.accumulator.result()
        normalized = normalize_calls(message.tool_calls, self.offered)
        out = []
        if normalized.notes:
            out.append(
                self._chunk({"content": ("\n" if message.content else "") + "\n".join(normalized.notes)})
            )
        for call in normalized.calls:
            out.append(self._chunk({"tool_calls": [call]}))
        if normalized.calls:
            reason = "tool_calls"
        else:
            reason = "stop" if message.finish_reason == "tool_calls" else message.finish_reason
        out.append(self._chunk({}, reason))
        return out

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        base = {
            "id": "chatcmpl-hdsp",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "",
            **self._template,
        }
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
