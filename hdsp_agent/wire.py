"""Commands a client sends over the session WebSocket, discriminated by ``type``; mirrored in ``src/wire.ts``
(checked on both sides through ``contracts/wire.json``, see ``wire_schema.py``).

Server → client messages are the events of ``events.py`` (each with ``seq``, ``session_id``, ``ts``) plus the
replies ``{"type": "command.ok" | "command.error", "command": ..., "id"?: ..., "message"?: ...}``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter


class _Command(BaseModel):
    # Echoed back in the reply so a client can match replies to requests.
    id: str | None = None


class SendCommand(_Command):
    type: Literal["send"]
    content: str = Field(min_length=1)
    context: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None


class ApproveCommand(_Command):
    type: Literal["approve"]
    call_id: str
    scope: Literal["once", "session", "always"] = "once"
    # For scope "always": the rule covers this file, its folder, or the tool everywhere.
    rule_scope: Literal["exact", "folder", "everywhere"] = "exact"


class DenyCommand(_Command):
    type: Literal["deny"]
    call_id: str
    reason: str | None = None


class CancelCommand(_Command):
    type: Literal["cancel"]


class ResumeCommand(_Command):
    type: Literal["resume"]
    since_seq: int = Field(default=0, ge=0)


class RunPlanCommand(_Command):
    """ "Approve plan": run the plan file (as it is now) in ``mode``, with the sidebar's context."""

    type: Literal["run_plan"]
    path: str = Field(min_length=1)
    mode: Literal["default", "accept-edits"] = "default"
    context: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None


ClientCommand = SendCommand | RunPlanCommand | ApproveCommand | DenyCommand | CancelCommand | ResumeCommand
_COMMAND = TypeAdapter(Annotated[ClientCommand, Field(discriminator="type")])


def parse_command(raw: str | bytes) -> ClientCommand:
    """Raises ``ValueError`` (bad JSON) or ``pydantic.ValidationError`` (bad shape)."""
    payload = json.loads(raw)
    command: ClientCommand = _COMMAND.validate_python(payload)
    return command
