"""Who approves a call that came in through the MCP endpoint: a person watching an hdsp-agent sidebar.

The request is shown in the conversation a sidebar is connected to (the most recently active one with a live
WebSocket subscriber), as the same ``approval.request`` event a turn's own calls produce, and answered through
that session's broker — so the sidebar's approve/deny commands resolve it. With no sidebar connected nobody
can answer, and the call is declined with a message that says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..events import ApprovalRequestEvent
from ..permissions.approval import ApprovalReply, ApprovalRequest
from ..permissions.broker import ApprovalBroker

NO_SIDEBAR = (
    "this call needs the user's approval, and no hdsp-agent sidebar is connected to ask them; "
    "open the hdsp-agent sidebar in JupyterLab (or have the administrator allow this tool) and try again"
)


class _Watchable(Protocol):
    broker: ApprovalBroker

    def emit(self, event: ApprovalRequestEvent) -> object: ...


class _Sessions(Protocol):
    def watched(self) -> Sequence[_Watchable]: ...


class SidebarApprover:
    def __init__(self, sessions: _Sessions) -> None:
        self.sessions = sessions

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        watched = self.sessions.watched()
        if not watched:
            return ApprovalReply.nobody_to_ask(NO_SIDEBAR)
        session = watched[0]
        session.emit(ApprovalRequestEvent(request=request))
        return await session.broker.request_approval(request)
