"""One turn of the agent: stream the model's answer, run the tool calls it makes, repeat until it answers.

Stops when the model answers without tools, at the step limit, when the same call is asked for a third time,
on a model error, or when the user cancels. Whatever happens, the conversation stays well-formed: every
assistant tool call gets a ``role: "tool"`` answer, so the next turn can go on.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..events import (
    AssistantMessageEvent,
    ErrorEvent,
    ToolCallSummary,
    ToolStatusEvent,
    TurnEndReason,
)
from ..tools.base import ToolCall, ToolContext, ToolErrorInfo, ToolResult, ToolStatus
from ..tools.definitions import to_openai
from ..tools.executor import ToolExecutor
from ..tools.output import model_text
from ..tools.registry import ToolCatalog
from .accumulator import AssistantMessage, StepDelta, ToolCallDraft
from .context_budget import fit_to_context
from .llm import ModelClient, ModelError
from .relay import DeltaBatcher

Emit = Callable[[BaseModel], object]  # what it returns (the session's stored event) is not used here


@dataclass
class LoopSettings:
    max_steps: int = 25
    # The same call (name and arguments) asked for this many times in one turn stops the turn.
    repeat_limit: int = 3
    # Per-tool caps on calls in one turn, e.g. {"run_terminal_command": 10}.
    tool_call_limits: dict[str, int] = field(default_factory=dict)
    context_window: int = 32_768
    # The model reads images: tool results' images are sent to it as image parts.
    vision: bool = False


@dataclass
class TurnOutcome:
    reason: TurnEndReason
    message: str | None = None
    steps: int = 0


class AgentLoop:
    def __init__(
        self,
        model: ModelClient,
        executor: ToolExecutor,
        settings: LoopSettings,
        emit: Emit,
        checkpoint: Callable[[], None] = lambda: None,
    ) -> None:
        self.model = model
        self.executor = executor
        self.settings = settings
        self.emit = emit
        # Called whenever the conversation grew, so a restart mid-turn loses nothing already done.
        self.checkpoint = checkpoint

    async def run_turn(
        self, messages: list[dict[str, Any]], system_prompt: str, ctx: ToolContext, catalog: ToolCatalog
    ) -> TurnOutcome:
        """Run until the model is done. ``messages`` (without the system prompt) is extended in place."""
        tools = [to_openai(tool) for tool in catalog]
        seen_calls: Counter[str] = Counter()
        calls_per_tool: Counter[str] = Counter()
        used_ids = _call_ids(messages)
        for step in range(1, self.settings.max_steps + 1):
            request = fit_to_context(
                [{"role": "system", "content": system_prompt}, *messages], tools, self.settings.context_window
            )
            try:
                answer = await self._stream_step(request, tools, used_ids)
            except ModelError as error:
                self.emit(ErrorEvent(code=error.code, message=error.message))
                return TurnOutcome("error", error.message, step)
            messages.append(answer.to_openai())
            self.checkpoint()
            if not answer.tool_calls:
                return TurnOutcome("completed", None, step)
            repeated = self._first_repeated(answer.tool_calls, seen_calls)
            if repeated is not None:
                note = (
                    f"Stopped: the agent asked for the same call ({repeated.name} with the same arguments) "
                    f"{self.settings.repeat_limit} times in this turn, which suggests it is stuck."
                )
                self._answer_unrun(messages, answer.tool_calls, "not run: " + note)
                return TurnOutcome("repeated_call", note, step)
            try:
                results = await self._run_calls(answer.tool_calls, ctx, catalog, calls_per_tool)
            except asyncio.CancelledError:
                self._answer_unrun(messages, answer.tool_calls, "canceled by the user")
                raise
            messages.extend(_tool_message(result) for result in results)
            if self.settings.vision:
                messages.extend(_image_message(results))
            self.checkpoint()
            if ctx.cancel.cancelled:
                self._answer_unrun(messages, answer.tool_calls, "canceled by the user")
                return TurnOutcome("canceled", ctx.cancel.reason, step)
        note = f"Stopped after {self.settings.max_steps} steps (the step limit). Send a message to continue."
        return TurnOutcome("step_limit", note, self.settings.max_steps)

    async def _stream_step(
        self, request: list[dict[str, Any]], tools: list[dict[str, Any]], used_ids: set[str]
    ) -> AssistantMessage:
        message_id = f"msg_{uuid.uuid4().hex[:12]}"
        announced: set[int] = set()
        batcher = DeltaBatcher(message_id, self.emit)
        # Call ids as the conversation knows them. Some servers number calls per response ("call_0" in
        # every step): events, approvals and the model's history need ids unique in the conversation. The
        # accumulator keeps the server's ids (it matches fragments by them); the alias is applied at the end.
        aliases: dict[int, str] = {}

        def public_id(draft: ToolCallDraft) -> str:
            if id(draft) not in aliases:
                candidate = draft.id
                if not candidate or candidate in used_ids:
                    candidate = f"call_{uuid.uuid4().hex[:12]}"
                aliases[id(draft)] = candidate
                used_ids.add(candidate)
            return aliases[id(draft)]

        def relay(step: StepDelta) -> None:
            if step.reasoning:
                batcher.add("reasoning", step.reasoning)
            if step.text:
                batcher.add("text", step.text)
            for draft in step.calls_touched:
                if id(draft) not in announced and draft.name:
                    announced.add(id(draft))
                    batcher.flush()
                    self.emit(
                        ToolStatusEvent(
                            call_id=public_id(draft), name=draft.name, status=ToolStatus.GENERATING
                        )
                    )

        try:
            answer = await self.model.stream(request, tools, relay)
        finally:
            batcher.flush()  # what arrived before an error or a cancel is still shown
        for call in answer.tool_calls:
            call.id = public_id(call)
        self.emit(
            AssistantMessageEvent(
                message_id=message_id,
                content=answer.content,
                reasoning=answer.reasoning,
                tool_calls=[
                    ToolCallSummary(id=call.id, name=call.name, arguments=call.arguments)
                    for call in answer.tool_calls
                ],
            )
        )
        return answer

    def _first_repeated(self, calls: list[ToolCallDraft], seen: Counter[str]) -> ToolCallDraft | None:
        for call in calls:
            signature = f"{call.name}\x00{_canonical(call.arguments)}"
            seen[signature] += 1
            if seen[signature] >= self.settings.repeat_limit:
                return call
        return None

    async def _run_calls(
        self, calls: list[ToolCallDraft], ctx: ToolContext, catalog: ToolCatalog, per_tool: Counter[str]
    ) -> list[ToolResult]:
        """Read-only calls next to each other run concurrently; anything that changes state runs alone, in
        order."""
        results: list[ToolResult] = []
        batch: list[ToolCallDraft] = []
        for call in calls:
            tool = self.executor.registry.get(call.name)
            if tool is not None and tool.read_only:
                batch.append(call)
                continue
            results.extend(await self._run_batch(batch, ctx, catalog, per_tool))
            batch = []
            results.extend(await self._run_batch([call], ctx, catalog, per_tool))
        results.extend(await self._run_batch(batch, ctx, catalog, per_tool))
        return results

    async def _run_batch(
        self, batch: list[ToolCallDraft], ctx: ToolContext, catalog: ToolCatalog, per_tool: Counter[str]
    ) -> list[ToolResult]:
        if not batch or ctx.cancel.cancelled:
            return []
        return list(await asyncio.gather(*(self._run_one(call, ctx, catalog, per_tool) for call in batch)))

    async def _run_one(
        self, draft: ToolCallDraft, ctx: ToolContext, catalog: ToolCatalog, per_tool: Counter[str]
    ) -> ToolResult:
        call = ToolCall(id=draft.id, name=draft.name, arguments=draft.arguments)
        limit = self.settings.tool_call_limits.get(draft.name)
        per_tool[draft.name] += 1
        if limit is not None and per_tool[draft.name] > limit:
            result = ToolResult(
                tool_call_id=draft.id,
                name=draft.name,
                status="error",
                content="",
                error=ToolErrorInfo(
                    code="E_TOOL_LIMIT",
                    message=f"{draft.name} may be called at most {limit} times per turn",
                    suggestion="Work with the results you have, or ask the user to continue in a new "
                    "message.",
                ),
            )
            self.emit(
                ToolStatusEvent(
                    call_id=draft.id, name=draft.name, status=ToolStatus.ERRORED, error=result.error
                )
            )
            return result
        return await self.executor.execute(call, ctx, catalog)

    @staticmethod
    def _answer_unrun(messages: list[dict[str, Any]], calls: list[ToolCallDraft], reason: str) -> None:
        # Only answers after the latest assistant message count: some servers reuse ids across steps.
        latest = max(
            (i for i, message in enumerate(messages) if message.get("role") == "assistant"), default=-1
        )
        answered = {
            message.get("tool_call_id") for message in messages[latest + 1 :] if message.get("role") == "tool"
        }
        for call in calls:
            if call.id not in answered:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": reason})


def _call_ids(messages: list[dict[str, Any]]) -> set[str]:
    """The tool call ids the conversation has used so far."""
    return {
        str(call.get("id"))
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
        if isinstance(call, dict) and call.get("id")
    }


def _tool_message(result: ToolResult) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": result.tool_call_id, "content": model_text(result)}


def _image_message(results: list[ToolResult]) -> list[dict[str, Any]]:
    """Images from this step's results as one user message of image parts.

    Chat-completions tool messages carry text only, so images follow them in a message of their own.
    """
    parts: list[dict[str, Any]] = []
    for result in results:
        images = list(result.details.get("images") or [])
        if isinstance(result.details.get("image"), dict):
            images.append(result.details["image"])
        for image in images:
            data = image.get("data") or image.get("base64")
            if data and image.get("mime_type"):
                parts.append(
                    {"type": "image_url", "image_url": {"url": f"data:{image['mime_type']};base64,{data}"}}
                )
    if not parts:
        return []
    note = {"type": "text", "text": "(hdsp-agent) Images from the tool results above:"}
    return [{"role": "user", "content": [note, *parts]}]


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except json.JSONDecodeError:
        return arguments.strip()
