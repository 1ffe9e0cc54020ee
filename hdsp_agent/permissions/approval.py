"""Asking the user: the request the approver sees and the reply it gives.

Approval is a decision the runtime makes and records. The model cannot approve anything: replies come only
from
an ``Approver`` the server wired to a person (the sidebar dialog, a TTY prompt) or to an explicit CLI flag.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, PrivateAttr

from ..user_text import UserStr, WithTexts

ApprovalScope = Literal["once", "session", "always"]
# Where an "always" rule applies: this very subject (file, notebook, command), everything in its folder,
# or the tool everywhere. Broader than "exact" only for file and notebook writes (``grants.rule_for_scope``).
RuleScope = Literal["exact", "folder", "everywhere"]


class ApprovalRequest(WithTexts):
    call_id: str
    tool: str
    arguments: dict[str, Any]
    reasons: list[UserStr] = Field(default_factory=list)
    # What the call would do, for the dialog: a unified diff for edits, the analysed command for shell, ...
    preview: str | None = None
    action_kind: str | None = None
    action_target: str | None = None
    # How an approved shell command will run: "sandboxed", "network" (sandboxed with network access) or
    # "unsandboxed"; None for tools that start no shell command. An approval is for this mode.
    run_mode: Literal["sandboxed", "network", "unsandboxed"] | None = None
    # The user approved this tool on this subject twice already in this conversation: the card offers
    # "allow for this chat" (exactly this tool and subject, ``grants.SessionGrants``) in one click.
    offer_session: bool = False


class ApprovalReply(BaseModel):
    approved: bool
    scope: ApprovalScope = "once"
    reason: UserStr | None = None
    rule_scope: RuleScope = "exact"
    # Not on the wire: the refusal came because no person could be asked (no sidebar connected, no TTY), so
    # the audit says "no one to ask" rather than that the user declined.
    _nobody_to_ask: bool = PrivateAttr(default=False)

    @classmethod
    def nobody_to_ask(cls, reason: str) -> ApprovalReply:
        reply = cls(approved=False, reason=reason)
        reply._nobody_to_ask = True
        return reply

    @property
    def asked_nobody(self) -> bool:
        return self._nobody_to_ask


class Approver(Protocol):
    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply: ...


class FixedApprover:
    """Answers every request the same way: ``--approve all`` / ``--approve none`` on the CLI."""

    def __init__(self, approve: bool, reason: str | None = None) -> None:
        self.approve = approve
        self.reason = reason

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        return ApprovalReply(approved=self.approve, reason=None if self.approve else self.reason)
