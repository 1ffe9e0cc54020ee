"""Tool calls for models that cannot make them natively: tools described in the prompt, calls read from text.

Many local models (a small GGUF on llama.cpp, an Ollama model without the ``tools`` capability) answer in
prose when a request carries ``tools``. In text mode the request carries none: the system prompt ends with a
description of each tool and of one way to call it, a ``<tool_call>`` block holding JSON::

    <tool_call>
    {"name": "ls", "arguments": {"dirPath": "."}}
    </tool_call>

``TextToolCallParser`` reads the streamed answer, passes the prose through and turns each block into the
same ``ToolCallDraft`` the native accumulator makes, so the loop, the executor, the policy, approvals and tool
cards are the same. It forgives what small models do: a fenced ```` ```json ```` or ```` ```tool_call ````
block instead of the tag, a missing closing tag at the end, ``parameters`` or ``args`` for ``arguments``,
arguments as a JSON string, single quotes, trailing commas, unquoted keys (``json_repair``).

The history is kept in the native shape (assistant ``tool_calls``, ``role: "tool"`` answers);
``as_text_history`` rewrites it for the request, because a chat template without tool support may drop or
refuse those messages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import json_repair

from .accumulator import StepDelta, ToolCallDraft

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"
FENCE = "```"
# A tool's name inside a block that is still streaming (for the tool card to appear before the block ends).
_NAME_PATTERN = re.compile(r"""["']?(?:name|tool|function)["']?\s*:\s*["']([A-Za-z0-9_.\-]+)["']""")

TEXT_MODE_INSTRUCTIONS = """\
# Tools

You can call the tools below. To call one, write a block exactly like this (JSON inside, nothing else):

<tool_call>
{"name": "TOOL_NAME", "arguments": {"PARAMETER": "VALUE"}}
</tool_call>

Write one block per call and stop after your block(s): the result comes back in the next message. \
Use only the tools and parameters listed. When you need no tool, answer normally without a block.

Available tools:
"""


def describe_tools(tools: list[dict[str, Any]]) -> str:
    """The system prompt's tool section for text mode, from the same OpenAI definitions native mode sends.

    Deterministic and in the catalog's order: the same tools give the same bytes (the cached prefix holds),
    and a tool added at a turn boundary only appends to the end."""
    lines = [TEXT_MODE_INSTRUCTIONS]
    for definition in tools:
        function = definition.get("function") or {}
        parameters = function.get("parameters") or {}
        lines.append(
            f"## {function.get('name', '')}\n{(function.get('description') or '').strip()}\n"
            f"Parameters (JSON Schema): {json.dumps(parameters, sort_keys=True, separators=(',', ':'))}\n"
        )
    return "\n".join(lines)


def with_tool_descriptions(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The request's messages in text mode: the tools described after the system prompt, the history's tool
    calls and results written as text."""
    history = as_text_history(messages)
    if not tools:
        return history
    section = describe_tools(tools)
    if history and history[0].get("role") == "system":
        return [
            {"role": "system", "content": f"{history[0].get('content') or ''}\n\n{section}"},
            *history[1:],
        ]
    return [{"role": "system", "content": section}, *history]


def as_text_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Assistant tool calls as the blocks the model would have written; tool results as user messages."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            blocks = [_block(call) for call in message["tool_calls"] if isinstance(call, dict)]
            content = "\n".join(part for part in [str(message.get("content") or "").strip(), *blocks] if part)
            converted.append({"role": "assistant", "content": content})
        elif role == "tool":
            result = message.get("content")
            text = result if isinstance(result, str) else json.dumps(result)
            converted.append(
                {
                    "role": "user",
                    "content": f"[tool result for call {message.get('tool_call_id', '')}]\n{text}",
                }
            )
        else:
            converted.append(message)
    return _merge_neighbours(converted)


def _block(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError:
        arguments = function.get("arguments")
    payload = json.dumps({"name": function.get("name", ""), "arguments": arguments}, ensure_ascii=False)
    return f"{OPEN_TAG}\n{payload}\n{CLOSE_TAG}"


def _merge_neighbours(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive user messages (several tool results) become one: some chat templates require strict
    user/assistant alternation."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and message.get("role") == "user" == previous.get("role")
            and isinstance(message.get("content"), str)
            and isinstance(previous.get("content"), str)
        ):
            merged[-1] = {"role": "user", "content": f"{previous['content']}\n\n{message['content']}"}
        else:
            merged.append(message)
    return merged


@dataclass
class _Block:
    draft: ToolCallDraft
    fenced: bool
    body: list[str] = field(default_factory=list)


class TextToolCallParser:
    """Splits a streamed answer into prose and tool-call blocks, chunk by chunk.

    Text that might be the start of a block (a partial ``<tool_call>`` or a fence) is held back until it is
    clear. A fence is held only while it may still be a call (a ``json``-like language and a body starting
    with ``{``): ordinary code streams on as prose, so a model that never closes its fence is not silenced.
    """

    def __init__(self, known_tools: set[str] | None = None) -> None:
        self.known_tools = known_tools or set()
        self.calls: list[ToolCallDraft] = []
        self.prose: list[str] = []
        self._pending = ""
        self._block: _Block | None = None
        # Inside an ordinary code fence (streamed as prose until it closes).
        self._in_code = False

    def feed(self, text: str) -> StepDelta:
        step = StepDelta()
        self._pending += text
        while self._pending:
            if self._in_code:
                if not self._take_code(step):
                    break
            elif self._block is None:
                if not self._take_prose(step):
                    break
            elif not self._take_block(step):
                break
        return step

    def finish(self) -> StepDelta:
        """The end of the stream: an unclosed block still counts (small models forget the closing tag)."""
        step = StepDelta()
        if self._block is not None:
            body = "".join(self._block.body) + self._pending
            self._pending = ""
            self._close_block(body, step, fence_text=FENCE + body if self._block.fenced else None)
        elif self._pending:
            self._emit_prose(self._pending, step)
            self._pending = ""
        return step

    @property
    def content(self) -> str:
        return "".join(self.prose)

    def _take_prose(self, step: StepDelta) -> bool:
        starts = [i for i in (self._pending.find(OPEN_TAG), self._pending.find(FENCE)) if i >= 0]
        if starts:
            start = min(starts)
            self._emit_prose(self._pending[:start], step)
            fenced = self._pending.startswith(FENCE, start)
            marker = FENCE if fenced else OPEN_TAG
            self._pending = self._pending[start + len(marker) :]
            self._block = _Block(ToolCallDraft(), fenced)
            return True
        # Keep back a tail that could still become a marker ("<tool_c", "``").
        keep = max(_partial_marker(self._pending, OPEN_TAG), _partial_marker(self._pending, FENCE))
        self._emit_prose(self._pending[: len(self._pending) - keep], step)
        self._pending = self._pending[len(self._pending) - keep :]
        return False

    def _take_code(self, step: StepDelta) -> bool:
        end = self._pending.find(FENCE)
        if end < 0:
            keep = _partial_marker(self._pending, FENCE)
            self._emit_prose(self._pending[: len(self._pending) - keep], step)
            self._pending = self._pending[len(self._pending) - keep :]
            return False
        self._emit_prose(self._pending[: end + len(FENCE)], step)
        self._pending = self._pending[end + len(FENCE) :]
        self._in_code = False
        return True

    def _take_block(self, step: StepDelta) -> bool:
        assert self._block is not None
        closer = FENCE if self._block.fenced else CLOSE_TAG
        end = self._pending.find(closer)
        if end < 0:
            keep = _partial_marker(self._pending, closer)
            self._block.body.append(self._pending[: len(self._pending) - keep])
            self._pending = self._pending[len(self._pending) - keep :]
            if self._block.fenced and _ordinary_code("".join(self._block.body)):
                # Not a call: show it as it streams, up to and with its closing fence.
                self._emit_prose(FENCE + "".join(self._block.body), step)
                self._block, self._in_code = None, True
                return True
            self._announce(step)
            return False
        self._block.body.append(self._pending[:end])
        self._pending = self._pending[end + len(closer) :]
        body = "".join(self._block.body)
        self._close_block(body, step, fence_text=FENCE + body + FENCE if self._block.fenced else None)
        return True

    def _announce(self, step: StepDelta) -> None:
        """Once the block names its tool, the tool card can appear while the arguments still stream."""
        assert self._block is not None
        draft = self._block.draft
        if draft.name:
            return
        match = _NAME_PATTERN.search("".join(self._block.body))
        if match and (not self._block.fenced or match.group(1) in self.known_tools):
            draft.name = match.group(1)
            step.calls_touched.append(draft)

    def _close_block(self, body: str, step: StepDelta, fence_text: str | None) -> None:
        assert self._block is not None
        draft, self._block = self._block.draft, None
        parsed = parse_call(body)
        if parsed is None or (fence_text is not None and parsed[0] not in self.known_tools):
            if fence_text is not None:
                self._emit_prose(fence_text, step)  # an ordinary code block, not a call
            elif draft.name:
                # A tag block we announced but cannot read: still a call, its arguments fail validation
                # in the executor with a message the model can act on.
                draft.arguments = body.strip()
                self._add_call(draft, step)
            return
        draft.name, draft.arguments = parsed
        self._add_call(draft, step)

    def _add_call(self, draft: ToolCallDraft, step: StepDelta) -> None:
        self.calls.append(draft)
        if draft not in step.calls_touched:
            step.calls_touched.append(draft)

    def _emit_prose(self, text: str, step: StepDelta) -> None:
        if text:
            self.prose.append(text)
            step.text += text


def parse_call(body: str) -> tuple[str, str] | None:
    """``(name, arguments JSON)`` from a block's body, or None when it names no tool."""
    text = body.strip()
    first_line, _, rest = text.partition("\n")
    if first_line.strip().lower() in ("json", "tool_call", "tool", "function", "call"):
        text = rest.strip()  # a fence's language tag
    if not text.startswith("{"):
        # "ls {"dirPath": "."}": the name before the arguments
        match = re.match(r"([A-Za-z0-9_.\-]+)\s*(\{.*)", text, re.DOTALL)
        if not match:
            return None
        arguments = _object(match.group(2))
        return (match.group(1), json.dumps(arguments, ensure_ascii=False)) if arguments is not None else None
    payload = _object(text)
    if payload is None:
        return None
    name = payload.get("name") or payload.get("tool") or payload.get("function")
    if isinstance(name, dict):  # {"function": {"name": ..., "arguments": ...}}
        payload, name = name, name.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments = next(
        (payload[key] for key in ("arguments", "parameters", "args", "input") if key in payload), {}
    )
    if isinstance(arguments, str):
        arguments = _object(arguments) or {}
    return name, json.dumps(arguments if isinstance(arguments, dict) else {}, ensure_ascii=False)


# Fence languages under which a model writes a call (an empty one too).
_CALL_LANGUAGES = ("", "json", "tool_call", "tool", "function", "call")


def _ordinary_code(body: str) -> bool:
    """A fence's body so far is plainly not a call: another language, or content not starting with ``{``."""
    language, newline, rest = body.partition("\n")
    if not newline:
        head = language.strip().lower()
        if not head or head.startswith("{"):
            return False
        return not any(lang.startswith(head) for lang in _CALL_LANGUAGES if lang)
    if language.strip().lower() not in _CALL_LANGUAGES:
        return True
    content = rest.lstrip()
    return bool(content) and not content.startswith("{")


def _object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = json_repair.repair_json(text, return_objects=True)
    return value if isinstance(value, dict) else None


def _partial_marker(text: str, marker: str) -> int:
    """The length of the longest end of ``text`` that is a beginning of ``marker``."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if text.endswith(marker[:size]):
            return size
    return 0
