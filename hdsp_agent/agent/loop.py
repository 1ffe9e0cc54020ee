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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..events import (
    AssistantMessageEvent,
    ContextCompactedEvent,
    ContextWarningEvent,
    ErrorEvent,
    StepUsage,
    ToolCallSummary,
    ToolStatusEvent,
    TurnEndReason,
)
from ..tools.base import ToolCall, ToolContext, ToolErrorInfo, ToolResult, ToolStatus
from ..tools.definitions import to_openai
from ..tools.executor import ToolExecutor
from ..tools.output import OutputBudget, apply_budget, model_text
from ..tools.registry import ToolCatalog
from ..user_text import join_texts, user_text
from .accumulator import AssistantMessage, StepDelta, ToolCallDraft
from .compaction import compact
from .context_budget import (
    CHARS_PER_TOKEN,
    estimate_tokens,
    fit_to_context,
    fits,
    prefix_tokens,
    prompt_budget,
)
from .llm import E_MODEL_CONTEXT, ModelClient, ModelError
from .quotas import UsageMeter
from .relay import DeltaBatcher
from .usage_breakdown import prompt_breakdown

Emit = Callable[[BaseModel], object]  # what it returns (the session's stored event) is not used here
# The catalog for the next step, from the conversation so far (tools appear when their context does).
CatalogForStep = Callable[[list[dict[str, Any]]], ToolCatalog]
E_CONTEXT_FULL = "E_CONTEXT_FULL"
# One tool result may take at most this share of the context window (on top of the executor's output budget).
RESULT_SHARE = 0.2
# ... and at most this share of the room the system prompt and tool schemas leave, but never less than
# MIN_RESULT_CHARS characters.
ROOM_SHARE = 0.4
MIN_RESULT_CHARS = 800


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
    # Warn when the system prompt and tool schemas take more than this share of the window.
    context_warning_share: float = 0.5
    # The tool profile in use (for the warning's text).
    profile: str = "full"


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
        meter: UsageMeter | None = None,
        warned_prefixes: set[int] | None = None,
        live_state: Callable[[], Awaitable[str | None]] | None = None,
        load_tools: Callable[[list[str]], Awaitable[bool]] | None = None,
    ) -> None:
        self.model = model
        self.executor = executor
        self.settings = settings
        self.emit = emit
        # The token quota (checked before each model call) and the audit's token counts (after it).
        self.meter = meter
        # Called whenever the conversation grew, so a restart mid-turn loses nothing already done.
        self.checkpoint = checkpoint
        # Prefix sizes already warned about in this conversation: the warning is shown once, not every turn.
        self.warned_prefixes = warned_prefixes if warned_prefixes is not None else set()
        # The live notebook's outline, kept in the note when the history is compacted.
        self.live_state = live_state
        # Makes tools loaded on demand callable (an MCP server not connected yet); True if any became so.
        self.load_tools = load_tools
        # One definition per tool: the same bytes on every step, so servers can reuse the cached prefix.
        self._definitions: dict[str, dict[str, Any]] = {}

    async def run_turn(
        self,
        messages: list[dict[str, Any]],
        system_prompt: str,
        ctx: ToolContext,
        catalog: ToolCatalog | CatalogForStep,
    ) -> TurnOutcome:
        """Run until the model is done. ``messages`` (without the system prompt) is extended in place.

        ``catalog``: the tools, or a function building each step's catalog from the conversation so far.
        """
        catalog_for: CatalogForStep = catalog if callable(catalog) else (lambda _messages: catalog)
        seen_calls: Counter[str] = Counter()
        calls_per_tool: Counter[str] = Counter()
        used_ids = _call_ids(messages)
        for step in range(1, self.settings.max_steps + 1):
            if self.meter is not None:
                self.meter.check()  # raises QuotaExceeded here, where the history is whole
            step_catalog = catalog_for(messages)
            tools = self.step_tools(step_catalog)
            self._warn_if_prefix_is_large(system_prompt, tools)
            try:
                request = await self._request(messages, system_prompt, tools)
                if request is None:
                    note = user_text(
                        "The conversation does not fit the model's context window even after compaction. "
                        "Start a new conversation, or use a model with a larger window."
                    )
                    self.emit(ErrorEvent(code=E_CONTEXT_FULL, message=note))
                    return TurnOutcome("error", note, step)
                try:
                    answer = await self._stream_step(request, tools, used_ids)
                except ModelError as error:
                    if error.code != E_MODEL_CONTEXT:
                        raise
                    # The server counts tokens its own way and refused: compact harder, then try once more.
                    request = await self._request(messages, system_prompt, tools, squeeze=0.6)
                    if request is None:
                        raise
                    answer = await self._stream_step(request, tools, used_ids)
            except ModelError as error:
                self.emit(ErrorEvent(code=error.code, message=error.message))
                return TurnOutcome("error", error.message, step)
            if self.meter is not None:
                self.meter.record(request, tools, answer.to_openai(), answer.usage)
            messages.append(answer.to_openai())
            self.checkpoint()
            if not answer.tool_calls:
                return TurnOutcome("completed", None, step)
            repeated = self._first_repeated(answer.tool_calls, seen_calls)
            if repeated is not None:
                note = user_text(
                    "Stopped: the agent asked for the same call (%1 with the same arguments) "
                    "%2 times in this turn, which suggests it is stuck.",
                    repeated.name,
                    self.settings.repeat_limit,
                )
                self._answer_unrun(messages, answer.tool_calls, "not run: " + note)
                return TurnOutcome("repeated_call", note, step)
            unknown = [call.name for call in answer.tool_calls if call.name not in step_catalog]
            if unknown and self.load_tools is not None and await self.load_tools(unknown):
                # A tool of an MCP server that was not connected yet, called by name: now it is listed and
                # runs through the executor like any other. The request's tool list is left as it was.
                step_catalog = catalog_for(messages)
            try:
                results = await self._run_calls(answer.tool_calls, ctx, step_catalog, calls_per_tool)
            except asyncio.CancelledError:
                self._answer_unrun(messages, answer.tool_calls, "canceled by the user")
                raise
            room = prompt_budget(self.settings.context_window, tools) - prefix_tokens(system_prompt, [])
            messages.extend(self._tool_message(result, room) for result in results)
            if self.settings.vision:
                messages.extend(_image_message(results))
            self.checkpoint()
            if ctx.cancel.cancelled:
                self._answer_unrun(messages, answer.tool_calls, "canceled by the user")
                return TurnOutcome("canceled", ctx.cancel.reason, step)
        note = user_text(
            "Stopped after %1 steps (the step limit). Send a message to continue.", self.settings.max_steps
        )
        return TurnOutcome("step_limit", note, self.settings.max_steps)

    def _tool_message(self, result: ToolResult, room: int) -> dict[str, Any]:
        """The result as the model reads it, cut to a share of its window (a 4k model cannot take a 30,000
        character output whole); the cut says how to page the rest, the sidebar still shows all of it.

        ``room``: tokens the messages may take next to the system prompt and tools.
        """
        content = model_text(result)
        share = min(self.settings.context_window * RESULT_SHARE, room * ROOM_SHARE)
        limit = max(int(share * CHARS_PER_TOKEN), MIN_RESULT_CHARS)
        if len(content) > limit:
            tool = self.executor.registry.get(result.name)
            hint = tool.paging_hint if tool is not None else "narrow the request"
            content = apply_budget(content, OutputBudget(max_chars=limit), hint).text
        return {"role": "tool", "tool_call_id": result.tool_call_id, "content": content}

    def step_tools(self, catalog: ToolCatalog) -> list[dict[str, Any]]:
        """The tool definitions a step sends for ``catalog``."""
        return [self._definition(tool) for tool in catalog]

    def next_request(
        self, messages: list[dict[str, Any]], system_prompt: str, catalog: ToolCatalog
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The messages and tools the next step would send, as ``run_turn`` builds them (``/context``); a
        conversation that no longer fits is shown as it is, before the compaction its next step would do."""
        tools = self.step_tools(catalog)
        system = {"role": "system", "content": system_prompt}
        return fit_to_context([system, *messages], tools, self.settings.context_window), tools

    def _definition(self, tool: Any) -> dict[str, Any]:
        if tool.name not in self._definitions:
            self._definitions[tool.name] = to_openai(tool)
        return self._definitions[tool.name]

    def _warn_if_prefix_is_large(self, system_prompt: str, tools: list[dict[str, Any]]) -> None:
        window = self.settings.context_window
        prefix = prefix_tokens(system_prompt, tools)
        if prefix <= window * self.settings.context_warning_share or prefix in self.warned_prefixes:
            return
        self.warned_prefixes.add(prefix)
        share = round(100 * prefix / window)
        self.emit(
            ContextWarningEvent(
                message=join_texts(
                    " ",
                    [
                        user_text(
                            "The system prompt and %1 tool definitions take about %2 tokens, %3 % of this "
                            "model's %4-token context window; little is left for the conversation.",
                            len(tools),
                            f"{prefix:,}",
                            share,
                            f"{window:,}",
                        ),
                        user_text("Use a model with a larger window, or fewer MCP servers.")
                        if self.settings.profile == "compact"
                        else user_text(
                            "Use a model with a larger window, the compact tool profile "
                            "('profile': 'compact'), or fewer MCP servers."
                        ),
                    ],
                ),
                prefix_tokens=prefix,
                context_window=window,
                profile=self.settings.profile,
            )
        )

    async def _request(
        self,
        messages: list[dict[str, Any]],
        system_prompt: str,
        tools: list[dict[str, Any]],
        *,
        squeeze: float = 1.0,
    ) -> list[dict[str, Any]] | None:
        """The messages to send, fitted to the window (compacting the conversation if it must); None if they
        cannot fit. Never a request the server would have to cut: it would cut the system prompt first."""
        window = int(self.settings.context_window * squeeze)
        system = {"role": "system", "content": system_prompt}
        request = fit_to_context([system, *messages], tools, window)
        if squeeze == 1.0 and fits(request, tools, window):
            return request
        state = await self.live_state() if self.live_state is not None else None
        outcome = await compact(self.model, messages, system_prompt, tools, window, state)
        if outcome is not None:
            self.checkpoint()
            self.emit(
                ContextCompactedEvent(
                    message=user_text(
                        "Older messages were summarized to fit the model's context window "
                        "(%1 messages became %2). The full history stays in this conversation's log.",
                        outcome["messages_before"],
                        outcome["messages_after"],
                    ),
                    **outcome,
                )
            )
        request = fit_to_context([system, *messages], tools, window)
        return request if fits(request, tools, window) else None

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
        usage = step_usage(request, tools, answer, text_mode=getattr(self.model, "tool_mode", "") == "text")
        self.emit(
            AssistantMessageEvent(
                usage=usage,
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
                    message=user_text("%1 may be called at most %2 times per turn", draft.name, limit),
                    suggestion=user_text(
                        "Work with the results you have, or ask the user to continue in a new message."
                    ),
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


def step_usage(
    request: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    answer: AssistantMessage,
    *,
    text_mode: bool = False,
) -> StepUsage:
    """The step's tokens as the server reported them (``stream_options.include_usage``), else estimated; with
    the prompt split by part (system prompt, tools, history, tool results) adding up to the prompt total."""
    usage = answer.usage
    if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
        prompt, completion = usage["prompt_tokens"], int(usage.get("completion_tokens") or 0)
        estimated = False
    else:
        prompt, completion = estimate_tokens([request, tools]), estimate_tokens(answer.to_openai())
        estimated = True
    return StepUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        estimated=estimated,
        breakdown=prompt_breakdown(request, tools, prompt, text_mode=text_mode),
    )
