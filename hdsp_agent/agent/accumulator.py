"""Assembling streamed chat-completion chunks into one assistant message, robust to real servers' quirks.

Tool-call fragments are keyed by (choice index, call index) as the OpenAI SDK does, and also survive:
- the function name (and id) repeated in every chunk (llama.cpp's server) or split across chunks;
- the whole arguments in one chunk, or repeated whole in several;
- a missing ``index`` (a new ``id`` starts a new call; no id continues the last one);
- ``finish_reason`` missing, or ``stop`` while tool calls are present (treated as ``tool_calls``);
- ``reasoning_content`` / ``reasoning`` deltas (kept apart from the answer, shown as thinking).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolCallDraft:
    id: str = ""
    name: str = ""
    arguments: str = ""

    def add_name(self, fragment: str) -> None:
        if not self.name:
            self.name = fragment
        elif fragment != self.name:  # an identical name again is a repeat, not a continuation
            self.name += fragment

    def add_arguments(self, fragment: str) -> None:
        if self.arguments and fragment == self.arguments and _is_json(fragment):
            return  # the whole arguments sent again
        self.arguments += fragment


@dataclass
class StepDelta:
    """What one chunk added, for relaying to the UI as it streams."""

    text: str = ""
    reasoning: str = ""
    calls_touched: list[ToolCallDraft] = field(default_factory=list)


@dataclass
class AssistantMessage:
    content: str
    reasoning: str
    tool_calls: list[ToolCallDraft]
    finish_reason: str
    usage: dict[str, Any] | None = None

    def to_openai(self) -> dict[str, Any]:
        """As a message to send back. ``content`` is "" rather than null: llama.cpp's server answers 500 to
        null."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        return message


class StreamAccumulator:
    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[tuple[int, int], ToolCallDraft] = {}
        self._order: list[tuple[int, int]] = []
        self._finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None

    def add(self, chunk: Any) -> StepDelta:
        """Fold one chunk (an SDK ``ChatCompletionChunk`` or a plain dict) into the message.

        Whatever a server sends, this never raises: malformed pieces are skipped (the network is the
        boundary).
        """
        chunk = _as_dict(chunk)
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        step = StepDelta()
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict) or (choice.get("index") or 0) != 0:
                continue  # we ask for one choice; ignore any others a server volunteers
            raw_delta = choice.get("delta")
            delta: dict[str, Any] = raw_delta if isinstance(raw_delta, dict) else {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                self._content.append(content)
                step.text += content
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self._reasoning.append(reasoning)
                step.reasoning += reasoning
            fragments = delta.get("tool_calls")
            for position, fragment in enumerate(fragments if isinstance(fragments, list) else []):
                if isinstance(fragment, dict):
                    step.calls_touched.append(self._add_call_fragment(fragment, position))
            if isinstance(choice.get("finish_reason"), str):
                self._finish_reason = choice["finish_reason"]
        return step

    def _add_call_fragment(self, fragment: dict[str, Any], position: int) -> ToolCallDraft:
        raw_id = fragment.get("id")
        call_id = raw_id if isinstance(raw_id, str) else ""
        index = fragment.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = self._index_without_one(call_id, position)
        key = (0, index)
        draft = self._calls.get(key)
        if draft is None:
            draft = self._calls[key] = ToolCallDraft()
            self._order.append(key)
        if call_id and not draft.id:
            draft.id = call_id
        raw_function = fragment.get("function")
        function: dict[str, Any] = raw_function if isinstance(raw_function, dict) else {}
        if isinstance(function.get("name"), str) and function["name"]:
            draft.add_name(function["name"])
        if isinstance(function.get("arguments"), str) and function["arguments"]:
            draft.add_arguments(function["arguments"])
        return draft

    def _index_without_one(self, call_id: str, position: int) -> int:
        if not self._order:
            return position
        last_key = self._order[-1]
        last = self._calls[last_key]
        if call_id and last.id and call_id != last.id:
            return last_key[1] + 1
        return last_key[1]

    def result(self) -> AssistantMessage:
        calls = [self._calls[key] for key in self._order if self._calls[key].name]
        for call in calls:
            if not call.id:
                call.id = f"call_{uuid.uuid4().hex[:12]}"
        finish = self._finish_reason or ("tool_calls" if calls else "stop")
        if calls and finish == "stop":
            finish = "tool_calls"
        return AssistantMessage(
            content="".join(self._content),
            reasoning="".join(self._reasoning),
            tool_calls=calls,
            finish_reason=finish,
            usage=self.usage,
        )


def _as_dict(chunk: Any) -> dict[str, Any]:
    if isinstance(chunk, dict):
        return chunk
    dump = getattr(chunk, "model_dump", None)
    dumped = dump(exclude_none=False) if callable(dump) else {}
    return dumped if isinstance(dumped, dict) else {}


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True
