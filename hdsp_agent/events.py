"""Wire events the server emits, discriminated by ``type``; mirrored one to one in ``src/tokens.ts``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from .permissions.approval import ApprovalRequest
from .tools.base import ToolErrorInfo, ToolStatus


class ToolStatusEvent(BaseModel):
    """One step of a tool call's lifecycle: generating → generated → awaiting_approval → calling → terminal."""

    type: Literal["tool.status"] = "tool.status"
    call_id: str
    name: str
    status: ToolStatus
    arguments: dict[str, Any] | None = None
    content: str | None = None
    error: ToolErrorInfo | None = None
    details: dict[str, Any] | None = None


class ToolProgressEvent(BaseModel):
    """Progress from a running tool (elapsed time, the latest output line)."""

    type: Literal["tool.progress"] = "tool.progress"
    call_id: str
    message: str
    elapsed: float | None = None


class ApprovalRequestEvent(BaseModel):
    type: Literal["approval.request"] = "approval.request"
    request: ApprovalRequest


ServerEvent = Annotated[
    ToolStatusEvent | ToolProgressEvent | ApprovalRequestEvent,
    Field(discriminator="type"),
]
