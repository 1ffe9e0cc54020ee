"""The tool contract: what a tool declares, what it may touch, and what it returns.

Every tool, whoever calls it (sidebar, CLI, MCP endpoint), runs through ``executor.ToolExecutor``; this module
holds only the shapes that pipeline and the tools agree on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ..user_text import UserStr
from .facts import ToolFacts, declare

if TYPE_CHECKING:
    # Types only: documents/ builds on this module (its errors, the context it is given).
    from ..documents.contract import LiveNotebookGateway, LiveTextGateway


class ErrorCode(str, Enum):
    """Stable codes the model, the UI and tests can rely on."""

    NOT_FOUND = "E_TOOL_NOT_FOUND"
    NOT_IN_CATALOG = "E_TOOL_NOT_IN_CATALOG"
    INVALID_ARGS = "E_TOOL_INVALID_ARGS"
    TIMEOUT = "E_TOOL_TIMEOUT"
    DENIED = "E_TOOL_DENIED"
    FAILED = "E_TOOL_FAILED"
    CANCELED = "E_TOOL_CANCELED"


class ToolStatus(str, Enum):
    """The lifecycle of one tool call, as the UI shows it."""

    GENERATING = "generating"
    GENERATED = "generated"
    AWAITING_APPROVAL = "awaiting_approval"
    CALLING = "calling"
    DONE = "done"
    ERRORED = "errored"
    DENIED = "denied"
    CANCELED = "canceled"


ResultStatus = Literal["ok", "error", "denied", "canceled"]


class ToolErrorInfo(BaseModel):
    code: str
    # English for the model; a ``UserText`` also tells the sidebar how to translate it for the user.
    message: UserStr
    suggestion: UserStr | None = None


class ToolCall(BaseModel):
    """A call as the model made it: ``arguments`` is the raw string (or an already-parsed object)."""

    id: str
    name: str
    arguments: str | dict[str, Any] | None = None


class ToolResult(BaseModel):
    """What one call produced. ``content`` is the text the model reads (before the untrusted envelope)."""

    tool_call_id: str
    name: str
    status: ResultStatus
    content: str = ""
    error: ToolErrorInfo | None = None
    # Remarks from the pipeline itself (e.g. "your arguments were repaired"): trusted, shown outside the
    # envelope.
    notes: list[str] = Field(default_factory=list)
    # Structured extras for the UI and callers (a diff, the repaired arguments, paging info). Never sent to
    # the model.
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class ToolError(Exception):
    """Raised by a tool for an expected failure the model can act on (bad path, no match, ...).

    The executor turns it into an ``error`` result; it is not logged as a crash.
    """

    def __init__(self, code: str, message: str, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.suggestion = suggestion


@dataclass
class ToolOutput:
    """A tool's successful return when it has more than text to give (details for the UI)."""

    content: str
    details: dict[str, Any] = field(default_factory=dict)


class PermissionKind(str, Enum):
    """What a call would do, so the policy can reason about it without knowing the tool."""

    EXECUTE = "Execute"
    # A read the policy must look at (outside the root, or a sensitive file); plain reads inside the root have
    # none.
    FILE_READ = "FileRead"
    FILE_WRITE = "FileWrite"
    FILE_DELETE = "FileDelete"
    FILE_READ_SENSITIVE = "FileReadSensitive"
    NETWORK = "Network"
    KERNEL = "Kernel"
    CUSTOM = "Custom"


@dataclass(frozen=True)
class PermissionAction:
    """The risky thing a call does: a command to execute, a path to write, a URL to fetch, ..."""

    kind: PermissionKind
    target: str = ""
    detail: str = ""


@dataclass(frozen=True)
class ApprovalView:
    """What an approval card shows of one call: the change (a diff, the code that will run) and, when the tool
    can name what the call acts on, the card's first reason ("runs code in cell 4 (df.head()) of
    analysis.ipynb"), which takes the place of the tool's general reason (``ToolFacts.ask_reason``)."""

    preview: str | None = None
    reason: str | None = None


class ToolArgs(BaseModel):
    """Base for argument models: unknown fields are an error the model is told about, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


class NoArgs(ToolArgs):
    pass


class CancelToken:
    """Cooperative cancellation shared by one turn: set once, observed by the executor and long-running
    tools."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._callbacks: list[Callable[[], object]] = []
        self.reason = ""

    def cancel(self, reason: str = "canceled by the user") -> None:
        if self._event.is_set():
            return
        self.reason = reason
        self._event.set()
        for callback in list(self._callbacks):
            callback()

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` when the token is canceled; returns a function that unregisters it."""
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()


def _unchanged(text: str) -> str:
    return text


def _ignore_event(event: BaseModel) -> None:
    return None


@dataclass
class ToolContext:
    """Everything a tool may touch, injected by whoever runs it. Tools make no global lookups."""

    root_dir: Path
    call_id: str = ""
    session_id: str = ""
    emit: Callable[[BaseModel], None] = _ignore_event
    cancel: CancelToken = field(default_factory=CancelToken)
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("hdsp_agent.tools"))
    kernel_manager: Any = None
    session_manager: Any = None
    contents_manager: Any = None
    # The notebooks open in connected JupyterLab tabs (None: files only), and the text files open in their
    # editors (``documents/contract.py``).
    notebook_gateway: LiveNotebookGateway | None = None
    text_editors: LiveTextGateway | None = None
    # What the sidebar sent with the message (active document, selected cells); tools read, never write it.
    client_context: dict[str, Any] = field(default_factory=dict)
    # Paths resolved during this call (the permission check's, reused by ``run``): fresh for every call, None
    # outside one, so no resolution outlives the call that judged it.
    resolved_paths: dict[str, Path] | None = field(default=None, repr=False)
    # How a shell command runs ("sandboxed", "network", "unsandboxed"), as the policy decided and the user saw
    # when approving; set by the executor for each call, never by the model. None: no policy decided.
    run_mode: Literal["sandboxed", "network", "unsandboxed"] | None = None
    # Whether the user approved this very call (set by the executor): a shell command the user approved sees
    # the project's secret files, one that runs without asking does not.
    approved: bool = False
    # The executor's redaction of secrets, for tools that cut or page text: they redact before they cut, so
    # a secret split across two pages is redacted in each.
    redact: Callable[[str], str] = _unchanged

    def for_call(self, call_id: str) -> ToolContext:
        # A shallow copy by hand (dataclasses.replace re-runs __init__, copy.copy goes through __reduce_ex__):
        # this runs for every tool call.
        ctx = object.__new__(type(self))
        ctx.__dict__.update(self.__dict__)
        ctx.call_id = call_id
        ctx.resolved_paths = {}
        ctx.run_mode = None
        ctx.approved = False
        return ctx


ArgsT = TypeVar("ArgsT", bound=BaseModel)


class Tool(Generic[ArgsT]):
    """A tool: a name, a description written for the model, a pydantic argument model and ``run``.

    Subclasses set the class attributes and implement ``run``. ``run`` returns text, a ``ToolOutput``, or
    raises ``ToolError``; any other exception is reported to the model as ``E_TOOL_FAILED`` and logged.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[BaseModel]] = NoArgs
    read_only: ClassVar[bool] = False
    # Seconds; None means the executor's default.
    timeout: ClassVar[float | None] = None
    # How the model can see what an output budget cut, e.g. "read_file_range with startLine/endLine".
    paging_hint: ClassVar[str] = "narrow the request (a smaller range, path or pattern)"
    # Loaded on demand (an MCP server's tools): the compact and standard profiles do not send its schema
    # until the conversation has used it; the model finds it with ``mcp_tools`` and calls it by name.
    on_demand: ClassVar[bool] = False
    # A built-in tool's facts: its default permission level, what it changes, the profiles that offer it and
    # the sidebar's words for it (``facts.py``). None for tools from outside.
    facts: ClassVar[ToolFacts | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("facts")
        if own is not None:
            declare(cls.name, own)

    def time_limit(self, args: ArgsT) -> float | None:
        """Seconds this call may take; tools whose arguments carry a timeout override this."""
        return self.timeout

    def permission(self, args: ArgsT, ctx: ToolContext) -> PermissionAction | None:
        """The risky action this call performs, for the policy; None for a call with no side effects."""
        return None

    async def approval_view(
        self, args: ArgsT, ctx: ToolContext, action: PermissionAction | None
    ) -> ApprovalView:
        """What the approval card shows, computed just before asking (only then: a call the policy allows
        never pays for it). Tools whose change can be computed against the live document override this —
        one read of it gives both the preview and the reason — and raise ``ToolError`` when the change cannot
        apply: the model gets the error, the user is not asked."""
        return ApprovalView(action.detail if action is not None and action.detail else None)

    def is_available(self, ctx: ToolContext) -> bool:
        """Whether the tool can work here at all (e.g. a search backend is configured)."""
        return True

    async def run(self, args: ArgsT, ctx: ToolContext) -> str | ToolOutput:
        raise NotImplementedError
