"""Wire events the server emits, discriminated by ``type``; mirrored one to one in ``src/events.ts``.

The contract is checked on both sides through ``contracts/wire.json`` (see ``wire_schema.py``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from .permissions.approval import ApprovalRequest
from .tools.base import ToolErrorInfo, ToolStatus
from .user_text import UserStr, WithTexts


class ToolStatusEvent(WithTexts):
    """One step of a tool call's lifecycle: generating → generated → awaiting_approval → calling → end."""

    type: Literal["tool.status"] = "tool.status"
    call_id: str
    name: str
    status: ToolStatus
    # The arguments as the model sent them (on generated and on the final status), and as validated (once
    # parsed).
    raw_arguments: str | None = None
    arguments: dict[str, Any] | None = None
    content: str | None = None
    error: ToolErrorInfo | None = None
    details: dict[str, Any] | None = None


class ToolProgressEvent(WithTexts):
    """Progress from a running tool (elapsed time, the latest output line)."""

    type: Literal["tool.progress"] = "tool.progress"
    call_id: str
    message: UserStr
    elapsed: float | None = None


class ApprovalRequestEvent(BaseModel):
    type: Literal["approval.request"] = "approval.request"
    request: ApprovalRequest


class UserMessageEvent(BaseModel):
    type: Literal["message.user"] = "message.user"
    turn_id: str
    content: str
    context: dict[str, Any] = Field(default_factory=dict)


class TurnStartEvent(BaseModel):
    type: Literal["turn.start"] = "turn.start"
    turn_id: str
    model: str
    # The model's window in tokens (configured or reported by its server) and the tool profile it chose.
    context_window: int | None = None
    profile: str | None = None


TurnEndReason = Literal["completed", "canceled", "error", "step_limit", "repeated_call", "interrupted"]


class TurnEndEvent(WithTexts):
    type: Literal["turn.end"] = "turn.end"
    turn_id: str
    reason: TurnEndReason
    message: UserStr | None = None


class TurnUndoneEvent(WithTexts):
    """The user undid a turn, or restored the checkpoint before it (``turn_ids``: that turn and every later
    one undone with it): the files and cells they changed were restored (one line each in ``restored``)."""

    type: Literal["turn.undone"] = "turn.undone"
    turn_id: str
    restored: list[UserStr]
    turn_ids: list[str] = Field(default_factory=list)
    # Every document the undo touched, as Jupyter contents paths (relative to the server root, the form the
    # frontend finds open documents by): each open view of them is reloaded.
    paths: list[str] = Field(default_factory=list)


class TurnRedoneEvent(WithTexts):
    """The user redid the last undo: the turns' changes are back and they can be undone again."""

    type: Literal["turn.redone"] = "turn.redone"
    turn_ids: list[str]
    restored: list[UserStr]
    paths: list[str] = Field(default_factory=list)


class CellReviewedEvent(BaseModel):
    """The user kept the agent's change to one cell of an open notebook, or undid it alone (the review's
    Keep / Undo on the cell): its mark goes, also on a reloaded page; no undo takes a kept change back."""

    type: Literal["cell.reviewed"] = "cell.reviewed"
    path: str
    cell_id: str
    outcome: Literal["kept", "undone"]


class CheckpointsPrunedEvent(WithTexts):
    """The stored undo history grew past its bound (``undo_history_mb``): the checkpoints before these turns
    were removed, oldest first; those turns can no longer be undone or restored to."""

    type: Literal["checkpoints.pruned"] = "checkpoints.pruned"
    turn_ids: list[str]
    limit_mb: float
    message: UserStr


class AssistantDeltaEvent(BaseModel):
    """A piece of streamed answer text (``kind="text"``) or thinking (``kind="reasoning"``)."""

    type: Literal["assistant.delta"] = "assistant.delta"
    message_id: str
    kind: Literal["text", "reasoning"] = "text"
    text: str


class ToolCallSummary(BaseModel):
    id: str
    name: str
    arguments: str


class StepUsage(BaseModel):
    """Tokens of one model call: as the server reported them, else estimated from the characters sent."""

    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    # Where the prompt's tokens went (agent/usage_breakdown.py): system, tools, history, tool_results; they
    # add up to prompt_tokens.
    breakdown: dict[str, int] | None = None


class AssistantMessageEvent(BaseModel):
    """The complete assistant message of one step (what the deltas added up to)."""

    type: Literal["assistant.message"] = "assistant.message"
    message_id: str
    content: str
    reasoning: str = ""
    tool_calls: list[ToolCallSummary] = Field(default_factory=list)
    # What the step cost: the sidebar shows the conversation's tokens and how full the model's window is.
    usage: StepUsage | None = None


class ApprovalResolvedEvent(WithTexts):
    type: Literal["approval.resolved"] = "approval.resolved"
    call_id: str
    approved: bool
    scope: str = "once"
    reason: UserStr | None = None


class ErrorEvent(WithTexts):
    """A failure the user should see (model unreachable, wrong key, ...); the session stays usable."""

    type: Literal["error"] = "error"
    code: str
    message: UserStr


class ContextWarningEvent(WithTexts):
    """The system prompt and tool schemas alone take more than the configured share of the model's window."""

    type: Literal["context.warning"] = "context.warning"
    message: UserStr
    prefix_tokens: int
    context_window: int
    profile: str


class ContextCompactedEvent(WithTexts):
    """Older turns were summarized to fit the window; the events before this one hold the full history."""

    type: Literal["context.compacted"] = "context.compacted"
    message: UserStr
    summary: str
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int


class SessionUpdatedEvent(BaseModel):
    type: Literal["session.updated"] = "session.updated"
    title: str
    status: Literal["idle", "running"]
    # The notebooks the conversation works on (``SessionRecord.notebooks``); None in logs written before.
    notebooks: list[str] | None = None


class NumberSourceRef(BaseModel):
    """Where a number of the answer is shown: a tool call's result (``call_id``), or the user's message."""

    call_id: str | None = None
    tool: str | None = None
    line: str
    line_number: int


class NumberMark(BaseModel):
    """One number of the final answer (``start``/``end``: character offsets in its text) and its source."""

    text: str
    start: int
    end: int
    found: bool
    source: NumberSourceRef | None = None


class AnswerNumbersEvent(BaseModel):
    """Sent after a turn's final answer: its numbers tied to the turn's outputs, or marked as found in none
    (``agent/answer_numbers.py``)."""

    type: Literal["answer.numbers"] = "answer.numbers"
    turn_id: str
    message_id: str
    marks: list[NumberMark]


class VariableChangeInfo(BaseModel):
    """A kernel variable the turn's runs created, changed or deleted: a summary, never the value."""

    name: str
    change: Literal["created", "changed", "deleted"]
    type: str
    shape: list[Any] | None = None
    length: int | None = None
    preview: str | None = None


class KernelChangesEvent(BaseModel):
    """After a turn that ran code: each notebook's kernel variables its runs created, changed or deleted
    (``tools/jupyter/kernel_changes.py``), for the review bar."""

    type: Literal["kernel.changes"] = "kernel.changes"
    turn_id: str
    notebooks: dict[str, list[VariableChangeInfo]]


class PlanProposedEvent(BaseModel):
    """Plan mode: the agent's plan, saved by the server to ``path``; the sidebar shows it with "Approve plan"
    and "Edit"."""

    type: Literal["plan.proposed"] = "plan.proposed"
    turn_id: str
    path: str
    items: list[str]


class PlanApprovedEvent(BaseModel):
    """The user approved the plan at ``path`` (as the file was then): it runs in ``mode``, ``items`` as its
    checklist."""

    type: Literal["plan.approved"] = "plan.approved"
    path: str
    mode: str
    items: list[str]


AgentEvent = Annotated[
    ToolStatusEvent
    | ToolProgressEvent
    | ApprovalRequestEvent
    | ApprovalResolvedEvent
    | UserMessageEvent
    | TurnStartEvent
    | TurnEndEvent
    | TurnUndoneEvent
    | TurnRedoneEvent
    | CellReviewedEvent
    | CheckpointsPrunedEvent
    | AssistantDeltaEvent
    | AssistantMessageEvent
    | ErrorEvent
    | ContextWarningEvent
    | ContextCompactedEvent
    | SessionUpdatedEvent
    | AnswerNumbersEvent
    | KernelChangesEvent
    | PlanProposedEvent
    | PlanApprovedEvent,
    Field(discriminator="type"),
]
