"""The REST routes' bodies and replies, as pydantic models: what the sidebar may send and what it gets back.

Every handler under ``web/`` reads its body with ``_AgentHandler.body(Model)`` (a malformed one is a 400 that
names the field; nothing happens) and answers with ``_AgentHandler.reply(Model, payload)`` (the reply is
validated against its model before it leaves, then serialized without the fields the domain left out). The
models join the wire contract (``wire_schema.py`` → ``contracts/wire.json``, section ``rest``), which the
TypeScript types in ``src/tokens.ts`` are checked against, type by type.

``extra="forbid"`` on both sides: an unknown field in a body is the client's mistake, one in a reply a field
the contract does not know yet (a test fails instead of the sidebar guessing).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..agent.hunks import Hunk
from ..user_text import TextRef

ToolCallMode = Literal["auto", "native", "text"]
Verdict = Literal["ok", "warn", "fail"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _WithTexts(_Strict):
    """A reply with server-written user text: how the sidebar translates each string (see user_text.py)."""

    texts: dict[str, TextRef] = Field(default_factory=dict)


# -- requests ------------------------------------------------------------------------------------------------


class CreateSessionRequest(_Strict):
    """``POST sessions``."""

    title: str | None = None
    model: str | None = None


class RenameSessionRequest(_Strict):
    """``PATCH sessions/{id}``."""

    title: str


class ContextRequest(_Strict):
    """``POST sessions/{id}/context`` (``/context``) and ``.../compact`` (``/compact``): the sidebar's context
    (active document, mentions) and model, as a message would send them; ``draft``: a message about to be
    sent, counted as the next user message."""

    context: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    draft: str | None = None


class McpPromptRequest(_Strict):
    """``POST mcp/prompts/get``: one prompt of one server, with its arguments."""

    server: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, str] = Field(default_factory=dict)


class UndoRequest(_Strict):
    """``POST sessions/{id}/undo`` and ``.../redo``: the paths the tab has open with unsaved changes (an undo
    must not write under them)."""

    unsaved: list[str] = Field(default_factory=list)


class RestoreRequest(UndoRequest):
    """``POST sessions/{id}/restore``: back to the checkpoint before ``turn_id``."""

    turn_id: str = Field(min_length=1)


class UndoCellRequest(_Strict):
    """``POST sessions/{id}/undo-cell``."""

    path: str = Field(min_length=1)
    cell_id: str = Field(min_length=1)


class UndoHunkRequest(_Strict):
    """``POST sessions/{id}/undo-hunk``."""

    path: str = Field(min_length=1)
    hunk: Hunk


class RevokeSavedRequest(_Strict):
    """``POST permissions/revoke``: remove a saved "always" rule."""

    kind: Literal["saved"]
    rule: str = Field(min_length=1)


class RevokeSessionRequest(_Strict):
    """``POST permissions/revoke``: remove a grant "for this chat"."""

    kind: Literal["session"]
    session_id: str
    tool: str
    subject: str


class ModelSetupRequest(_Strict):
    """``PUT model-setup`` and ``POST model-setup/test``; ``api_key`` left out keeps the key saved for the
    same endpoint, ``clear_key`` forgets it."""

    base_url: str = ""
    model: str = ""
    api_key: str | None = None
    clear_key: bool = False
    tool_calls: ToolCallMode = "auto"
    # Inline completion's model ("": the chat model).
    completion_model: str = Field(default="", max_length=256)


class EndpointModelsRequest(_Strict):
    """``POST model-setup/models``."""

    base_url: str = ""
    api_key: str | None = None


class McpTrustRequest(_Strict):
    """``POST mcp/trust``: the sha256 of ``.hdsp/mcp.json`` as the user reviewed it (``GET mcp/servers``)."""

    sha256: str


class SkillTrustRequest(_Strict):
    """``POST skills/trust``: a project skill's folder and its sha256 as shown (``GET skills``)."""

    path: str
    sha256: str


# -- query strings -------------------------------------------------------------------------------------------


class _Query(BaseModel):
    """Query strings ignore arguments they do not name (a proxy's or a cache-buster's)."""

    model_config = ConfigDict(extra="ignore")


class EventsQuery(_Query):
    since: int = 0


class HunksQuery(_Query):
    path: str = Field(min_length=1)


class ExportQuery(_Query):
    format: Literal["markdown", "json"] = "markdown"


class PermissionsQuery(_Query):
    session_id: str | None = None


class InstructionsQuery(_Query):
    path: str = ""


class MentionsQuery(_Query):
    q: str = ""


class McpServersQuery(_Query):
    refresh: Literal["0", "1"] = "1"


# -- replies -------------------------------------------------------------------------------------------------


class ToolInfo(_Strict):
    name: str
    description: str
    read_only: bool
    parameters: dict[str, Any]


class SandboxInfo(_WithTexts):
    layer: Literal["bubblewrap", "landlock", "none"]
    active: bool
    reason: str
    required: bool


class ServerInfo(_Strict):
    """``GET info``."""

    name: str
    version: str
    tools: list[ToolInfo]
    # Always sent; optional in the contract because servers older than the sandbox did not send it (the
    # sidebar's handshake reads their replies too).
    sandbox: SandboxInfo | None = None


class ReadinessLine(_Strict):
    check: Literal["streaming", "tools", "window", "prompt"]
    verdict: Verdict
    text: str
    action: str


class ReadinessReport(_Strict):
    model: str
    base_url: str
    streaming: Literal["streamed", "buffered", "failed"]
    tools: Literal["native", "malformed", "text", "none", "refused", "failed"]
    tool_mode: Literal["native", "text"]
    context_window: int
    window_source: Literal["configuration", "server", "default"]
    profile: str
    prompt_tokens: int
    lines: list[ReadinessLine]
    checked_at: float
    max_tokens: int
    verdict: Verdict


class ModelInfo(_Strict):
    name: str
    model: str
    base_url: str | None
    context_window: int
    vision: bool
    profile: str | None = None
    tool_calls: ToolCallMode | None = None
    price_per_mtok_in: float | None = None
    price_per_mtok_out: float | None = None
    readiness: ReadinessReport | None = None


class DiscoveredServer(_Strict):
    server: str
    base_url: str
    models: list[str]


class SavedModel(_Strict):
    base_url: str
    model: str
    key_set: bool
    tool_calls: ToolCallMode | None = None
    completion_model: str = ""


class ModelSetupState(_WithTexts):
    """``GET model-setup``."""

    allowed: bool
    admin_contact: str
    saved: SavedModel | None
    # The server's environment holds a model key that every kernel inherits.
    warning: str | None = None


class ModelsOverview(_WithTexts):
    """``GET models`` and ``PUT model-setup``."""

    configured: bool
    models: list[ModelInfo]
    setup_help: str | None = None
    discovered: list[DiscoveredServer] | None = None
    setup: ModelSetupState | None = None


class EndpointModels(_Strict):
    """``POST model-setup/models``: the models an endpoint lists, or why it could not list them."""

    base_url: str
    models: list[str]
    error: str | None = None


class ModelTestCost(_Strict):
    """``GET model-setup/test``: what the check costs at most, for the form to say before it runs."""

    max_tokens: int
    requests: int


class ModelTestReply(_WithTexts):
    """``POST model-setup/test``."""

    ok: bool
    readiness: ReadinessReport
    error: str | None = None
    warning: str | None = None


class SessionRecord(_Strict):
    id: str
    title: str
    created: float
    updated: float
    model: str
    status: Literal["idle", "running"]
    # The notebooks the conversation works on (in view when a message was sent, or changed or run by a tool).
    notebooks: list[str] = Field(default_factory=list)


class SessionDetail(SessionRecord):
    """``GET sessions/{id}``."""

    last_seq: int


class SessionList(_Strict):
    """``GET sessions``."""

    sessions: list[SessionRecord]


class EventsPage(_Strict):
    """``GET sessions/{id}/events``: the events are the ``events`` section of the contract, with their log
    envelope (``seq``, ``session_id``, ``ts``)."""

    events: list[dict[str, Any]]
    last_seq: int


class KeepCellRequest(_Strict):
    """``POST sessions/{id}/keep-cell``."""

    path: str = Field(min_length=1)
    cell_id: str = Field(min_length=1)


class KeepCellReply(_Strict):
    """``POST sessions/{id}/keep-cell``: how many of the agent's changes to the cell are now kept."""

    kept: int


class UndoReply(_Strict):
    """``POST sessions/{id}/undo|restore|redo|undo-cell``."""

    restored: list[str]
    turn_ids: list[str] | None = None
    paths: list[str] | None = None


class HunksReply(_Strict):
    """``GET sessions/{id}/hunks``."""

    path: str
    hunks: list[Hunk]


class UndoHunkReply(_Strict):
    """``POST sessions/{id}/undo-hunk``: what was restored and the file's hunks left."""

    restored: list[str]
    hunks: list[Hunk]


class SessionGrant(_Strict):
    tool: str
    subject: str


class PermissionsOverview(_Strict):
    """``GET permissions`` and ``POST permissions/revoke``."""

    session: list[SessionGrant]
    saved: list[str]
    file: str | None


class Instruction(_Strict):
    name: str
    path: str
    kind: Literal["instructions", "rule"]


class InstructionsReply(_Strict):
    """``GET instructions``."""

    instructions: list[Instruction]


class SkillInfo(_Strict):
    """A skill as the sidebar lists it; only ``trusted`` ones are offered to the model."""

    name: str
    description: str
    source: Literal["builtin", "user", "project"]
    path: str
    sha256: str
    status: Literal["trusted", "untrusted", "changed", "invalid"]
    problem: str | None


class SkillsReply(_Strict):
    """``GET skills``."""

    skills: list[SkillInfo]


class SkillTrustReply(_Strict):
    """``POST skills/trust``."""

    skill: SkillInfo


class MentionsReply(_Strict):
    """``GET mentions``."""

    files: list[str]


class McpToolDetail(_Strict):
    name: str
    remote_name: str
    description: str
    auto_approved: bool


class McpServerStatus(_Strict):
    name: str
    source: Literal["user", "config", "project"]
    transport: Literal["stdio", "http"]
    state: Literal["idle", "connecting", "connected", "error", "closed", "disabled", "denied", "untrusted"]
    message: str | None = None
    server_name: str | None = None
    tools: list[str] | None = None
    tool_details: list[McpToolDetail] | None = None
    skipped_tools: list[str] | None = None
    auto_approve: list[str] | None = None
    launch: str | None = None


class McpProjectFile(_Strict):
    path: str
    status: Literal["trusted", "untrusted", "changed", "invalid"]
    sha256: str | None
    pinned_files: list[str] | None = None
    changed_files: list[str] | None = None


class McpProblem(_Strict):
    source: str
    server: str | None = None  # absent for a declared tool's problem
    message: str


class McpEndpointState(_Strict):
    enabled: bool
    path: str


class McpReport(_Strict):
    """``GET mcp/servers``."""

    servers: list[McpServerStatus]
    project: McpProjectFile | None
    problems: list[McpProblem]
    declared_tool_problems: list[McpProblem]
    endpoint: McpEndpointState


class McpTrustReply(_Strict):
    """``POST mcp/trust``."""

    project: McpProjectFile


class ContextReply(_Strict):
    """``POST sessions/{id}/context``: the next request's tokens by part (system, rules, tools, history,
    tool_results), summing to ``total``."""

    parts: dict[str, int]
    total: int
    context_window: int
    messages: int


class CompactReply(_Strict):
    """``POST sessions/{id}/compact``: whether anything was summarized, and the summary."""

    compacted: bool
    summary: str = ""
    messages_before: int = 0
    messages_after: int = 0


class McpPromptArgument(_Strict):
    name: str
    description: str
    required: bool


class McpPromptInfo(_Strict):
    server: str
    name: str
    description: str
    arguments: list[McpPromptArgument]


class McpPromptsReply(_Strict):
    """``GET mcp/prompts``: every prompt of the servers that may start; why a server could not answer."""

    prompts: list[McpPromptInfo]
    problems: dict[str, str]


class McpPromptReply(_Strict):
    """``POST mcp/prompts/get``: the prompt's text, sent as the user's message."""

    text: str


class UndoConflict(_Strict):
    path: str
    cell_id: str | None
    reason: str


class ErrorReply(_WithTexts):
    """Every refusal of every route: the code (the error table, ``web/errors.py``), the English message, the
    field at fault for a malformed request, and the conflicts of an undo that could not apply."""

    code: str
    message: str
    field: str | None = None
    conflicts: list[UndoConflict] | None = None


class InlineCompletionRequest(_Strict):
    """``POST complete``: the cursor in a cell or a file editor. Sizes are capped here (a bigger body is a
    400); the server sends the model less still (``agent/inline_completion.py``)."""

    prefix: str = Field(max_length=200_000)
    suffix: str = Field(default="", max_length=200_000)
    language: str = Field(default="python", max_length=64)
    path: str = Field(default="", max_length=4_096)
    cells_above: list[str] = Field(default_factory=list, max_length=500)
    variables: list[str] = Field(default_factory=list, max_length=5_000)


class InlineCompletionReply(_Strict):
    """The text to insert at the cursor ("" when nothing fits), how it was asked and of which model; or why
    nothing was asked (``skipped``: "sensitive", a file whose name says it holds secrets)."""

    text: str
    mode: Literal["infill", "fim", "chat", ""] = ""
    model: str = ""
    skipped: Literal["sensitive"] | None = None


# The contract's ``rest`` section: every model a route reads or writes, by name (wire_schema.py).
REST_MODELS: tuple[type[BaseModel], ...] = (
    CreateSessionRequest,
    RenameSessionRequest,
    UndoRequest,
    RestoreRequest,
    UndoCellRequest,
    KeepCellRequest,
    UndoHunkRequest,
    RevokeSavedRequest,
    RevokeSessionRequest,
    ModelSetupRequest,
    EndpointModelsRequest,
    McpTrustRequest,
    SkillTrustRequest,
    InlineCompletionRequest,
    InlineCompletionReply,
    ServerInfo,
    ModelsOverview,
    ModelSetupState,
    EndpointModels,
    ModelTestCost,
    ModelTestReply,
    SessionRecord,
    SessionDetail,
    SessionList,
    EventsPage,
    UndoReply,
    KeepCellReply,
    HunksReply,
    UndoHunkReply,
    PermissionsOverview,
    InstructionsReply,
    MentionsReply,
    McpReport,
    McpTrustReply,
    SkillsReply,
    SkillTrustReply,
    ErrorReply,
)
