"""Middleware around a tool's ``run``: an onion, outermost first.

Order: ascending ``priority``, then registration order. Each middleware may rewrite the invocation (arguments)
before calling ``call_next`` and the result after it; it runs after the permission decision, so it cannot make
a denied call run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from .base import Tool, ToolContext, ToolResult


@dataclass
class ToolInvocation:
    tool: Tool[Any]
    args: BaseModel
    ctx: ToolContext
    call_id: str


NextHandler = Callable[[ToolInvocation], Awaitable[ToolResult]]


class Middleware(Protocol):
    async def __call__(self, invocation: ToolInvocation, call_next: NextHandler) -> ToolResult: ...


@dataclass(frozen=True)
class _Entry:
    priority: int
    order: int
    middleware: Middleware


class MiddlewareChain:
    def __init__(self) -> None:
        self._entries: list[_Entry] = []

    def add(self, middleware: Middleware, priority: int = 0) -> None:
        self._entries.append(_Entry(priority, len(self._entries), middleware))
        self._entries.sort(key=lambda entry: (entry.priority, entry.order))

    def __len__(self) -> int:
        return len(self._entries)

    def wrap(self, innermost: NextHandler) -> NextHandler:
        handler = innermost
        for entry in reversed(self._entries):
            handler = _bind(entry.middleware, handler)
        return handler

    @property
    def middlewares(self) -> Sequence[Middleware]:
        return [entry.middleware for entry in self._entries]


def _bind(middleware: Middleware, call_next: NextHandler) -> NextHandler:
    async def handler(invocation: ToolInvocation) -> ToolResult:
        return await middleware(invocation, call_next)

    return handler
