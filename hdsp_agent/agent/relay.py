"""Relaying streamed text to the sidebar in batches.

A model can stream tens of thousands of one-token chunks; an event (persisted, sent to every tab) per token
would cost more than the tokens. Text is held for at most ``interval`` seconds — chunks arriving faster than
that are merged, and a slow model's chunks still go out one by one. "At most" is kept by a timer on the
event loop, not by the next chunk: a model that sends a few words and then pauses (thinking, a stalled
gateway) shows those words now, not when it goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from ..events import AssistantDeltaEvent

DeltaKind = Literal["text", "reasoning"]


class DeltaBatcher:
    def __init__(self, message_id: str, emit: Callable[[BaseModel], object], interval: float = 0.03) -> None:
        self.message_id = message_id
        self.emit = emit
        self.interval = interval
        self._kind: DeltaKind | None = None
        self._parts: list[str] = []
        self._last_flush = time.monotonic()
        self._timer: asyncio.TimerHandle | None = None

    def add(self, kind: DeltaKind, text: str) -> None:
        if self._kind is not None and kind != self._kind:
            self.flush()  # keep thinking and answer apart, in order
        self._kind = kind
        self._parts.append(text)
        waited = time.monotonic() - self._last_flush
        if waited >= self.interval:
            self.flush()
        elif self._timer is None:
            self._timer = _call_later(self.interval - waited, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._parts and self._kind is not None:
            self.emit(
                AssistantDeltaEvent(message_id=self.message_id, kind=self._kind, text="".join(self._parts))
            )
        self._parts = []
        self._kind = None
        self._last_flush = time.monotonic()


def _call_later(delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle | None:
    """A timer on the running loop; none outside one (the next chunk or the final flush sends the text)."""
    try:
        return asyncio.get_running_loop().call_later(delay, callback)
    except RuntimeError:
        return None
