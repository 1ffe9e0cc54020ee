"""Pending approvals of one session: the executor waits on a future; the user's reply resolves it.

Only call ids this broker issued and still awaits can be resolved — a client cannot approve a call the server
never asked about, nor answer one twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from .approval import ApprovalReply, ApprovalRequest

# Called with each reply the user gives, before the waiting call resumes (``GrantStore.record`` keeps grants).
ReplyHook = Callable[[ApprovalRequest, ApprovalReply], None]


class UnknownApproval(KeyError):
    def __str__(self) -> str:
        return f"no pending approval for call {self.args[0]!r}"


class ApprovalBroker:
    def __init__(self, on_reply: ReplyHook | None = None) -> None:
        self._pending: dict[str, asyncio.Future[ApprovalReply]] = {}
        self.requests: dict[str, ApprovalRequest] = {}
        self.on_reply = on_reply

    @property
    def pending(self) -> list[ApprovalRequest]:
        return [self.requests[call_id] for call_id in self._pending]

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        future: asyncio.Future[ApprovalReply] = asyncio.get_running_loop().create_future()
        self._pending[request.call_id] = future
        self.requests[request.call_id] = request
        try:
            return await future
        finally:
            self._pending.pop(request.call_id, None)

    def resolve(self, call_id: str, reply: ApprovalReply) -> ApprovalRequest:
        future = self._pending.get(call_id)
        if future is None or future.done():
            raise UnknownApproval(call_id)
        request = self.requests[call_id]
        if self.on_reply is not None:
            try:
                self.on_reply(request, reply)
            except Exception:  # a grant that cannot be kept must not lose the user's answer
                logging.getLogger("hdsp_agent.permissions").exception(
                    "recording the reply to %s failed", call_id
                )
        future.set_result(reply)
        return request

    def cancel_all(self, reason: str) -> None:
        for future in list(self._pending.values()):
            if not future.done():
                future.set_result(ApprovalReply(approved=False, reason=reason))
