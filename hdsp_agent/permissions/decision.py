"""The policy's answer for one call, and the interface the executor asks it through.

The full rule engine lives beside this module (``policy.RulePolicy``); the executor only needs
``PermissionPolicy.decide``, a conversation's runtime (``agent/runtime.py``) also the ``SessionPolicy`` part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from ..tools.base import PermissionAction, Tool, ToolContext
from ..user_text import user_text
from .defaults import default_level
from .modes import PermissionMode

DecisionKind = Literal["allow", "ask", "deny"]
RunMode = Literal["sandboxed", "network", "unsandboxed"]

# Continue's names for the three levels, used in rules and settings.
LEVEL_FOR_DECISION: dict[DecisionKind, str] = {
    "allow": "allowedWithoutPermission",
    "ask": "allowedWithPermission",
    "deny": "disabled",
}
DECISION_FOR_LEVEL: dict[str, DecisionKind] = {level: kind for kind, level in LEVEL_FOR_DECISION.items()}


@dataclass(frozen=True)
class PolicyDecision:
    decision: DecisionKind
    reasons: list[str] = field(default_factory=list)
    # The rule that decided, as written (e.g. "run_terminal_command(git status*)"), or None for a default.
    rule: str | None = None
    # How a shell command runs if it runs (``sandbox.status.RunMode``): "sandboxed" for what is allowed
    # without asking, the mode shown in the approval card for what asks; None for tools with no shell command.
    run_mode: RunMode | None = None
    # An ask the user has approved twice already (same tool, same subject) that "allow for this chat" would
    # lift: the card offers that grant in one click. Never set when a grant would not lift the ask.
    offer_session: bool = False

    @property
    def level(self) -> str:
        return LEVEL_FOR_DECISION[self.decision]


class PermissionPolicy(Protocol):
    def decide(
        self, tool: Tool[Any], args: BaseModel, action: PermissionAction | None, ctx: ToolContext
    ) -> PolicyDecision: ...


class SessionPolicy(PermissionPolicy, Protocol):
    """What the runtime asks a policy besides ``decide``: each conversation's mode, and to forget one."""

    def mode_for(self, session_id: str) -> PermissionMode: ...

    def set_mode(self, mode: str, session_id: str | None = None) -> None: ...

    async def forget_session(self, session_id: str) -> None:
        """The conversation was deleted: drop what was granted "for this session"."""
        ...


class ReadOnlyPolicy:
    """The safe default until rules are configured: the tools whose default level is allow run (when they
    report no action), disabled tools are refused, everything else asks the user. No modes, no grants."""

    def decide(
        self, tool: Tool[Any], args: BaseModel, action: PermissionAction | None, ctx: ToolContext
    ) -> PolicyDecision:
        level, why = default_level(tool.name, tool.read_only)
        if level == "deny":
            return PolicyDecision("deny", [why])
        if level == "allow" and action is None:
            return PolicyDecision("allow", [why])
        if level == "ask":
            return PolicyDecision("ask", [why])  # the tool's own reason, in words ("It changes files")
        what = (
            f"{action.kind.value} {action.target}".strip()
            if action
            else user_text("%1 changes state", tool.name)
        )
        return PolicyDecision("ask", [user_text("needs approval: %1", what)])

    def mode_for(self, session_id: str) -> PermissionMode:
        return "default"

    def set_mode(self, mode: str, session_id: str | None = None) -> None:
        """There is one mode here; switching is not offered."""

    async def forget_session(self, session_id: str) -> None:
        """No grants are kept."""
