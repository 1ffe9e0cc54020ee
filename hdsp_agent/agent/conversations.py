"""All conversations of this server: create, list, open, rename, delete, export; recovery after a restart."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

from ..events import ApprovalResolvedEvent, ToolStatusEvent, TurnEndEvent
from ..tools.base import ToolStatus
from ..user_text import user_text
from .conversation import DEFAULT_TITLE, Conversation
from .export import conversation_markdown
from .runtime import AgentRuntime
from .store import SessionRecord, SessionStore

_TERMINAL_TOOL_STATUSES = {
    status.value for status in (ToolStatus.DONE, ToolStatus.ERRORED, ToolStatus.DENIED, ToolStatus.CANCELED)
}
# Conversations kept in memory; older idle ones are reloaded from the store when opened.
# The class below has a method named ``list``: inside it, ``list[...]`` would name that method.
_Rows = list[dict[str, Any]]
MAX_LIVE = 32
INTERRUPTED = user_text("interrupted: the server restarted during this turn")


class SessionNotFound(KeyError):
    pass


class ConversationManager:
    def __init__(self, store: SessionStore, runtime: AgentRuntime) -> None:
        self.store = store
        self.runtime = runtime
        self._records = {record.id: record for record in store.load_sessions()}
        self._live: dict[str, Conversation] = {}
        self._recover_interrupted_turns()

    def list(self) -> list[dict[str, Any]]:
        records = sorted(self._records.values(), key=lambda record: record.updated, reverse=True)
        return [record.public() for record in records]

    def watched(self) -> tuple[Conversation, ...]:
        """Open conversations someone is subscribed to, the most recently active first."""
        live = [session for session in self._live.values() if session.watched]
        return tuple(sorted(live, key=lambda session: session.record.updated, reverse=True))

    def create(self, title: str | None = None, model: str = "") -> Conversation:
        now = time.time()
        record = SessionRecord(
            id=uuid.uuid4().hex,
            title=(title or "").strip() or DEFAULT_TITLE,
            created=now,
            updated=now,
            model=model,
        )
        self._records[record.id] = record
        self.store.upsert_session(record)
        session = Conversation(record, self.store, self.runtime)
        self._live[record.id] = session
        self._evict_idle()
        return session

    def _evict_idle(self) -> None:
        """Keep at most MAX_LIVE conversations in memory; the rest stay on disk until opened again.

        Only idle conversations nobody watches are dropped (oldest first): their events and messages are all
        in the store. Their checkpoints and redo live in the runtime's ``TurnUndo``, so nothing is lost.
        """
        idle = [s for s in self._live.values() if not s.running and not s.watched]
        idle.sort(key=lambda session: session.record.updated)
        for session in idle[: max(0, len(self._live) - MAX_LIVE)]:
            del self._live[session.id]

    async def get(self, session_id: str) -> Conversation:
        if session_id in self._live:
            return self._live[session_id]
        record = self._records.get(session_id)
        if record is None:
            raise SessionNotFound(session_id)
        events, messages = await asyncio.to_thread(self._load, session_id)
        # Another caller may have opened it while we read.
        session = self._live.setdefault(
            session_id, Conversation(record, self.store, self.runtime, events=events, messages=messages)
        )
        self._evict_idle()
        return session

    def _load(self, session_id: str) -> tuple[_Rows, _Rows]:
        return self.store.load_events(session_id), self.store.load_messages(session_id)

    async def rename(self, session_id: str, title: str) -> dict[str, Any]:
        session = await self.get(session_id)
        session.rename(title)
        return session.record.public()

    async def delete(self, session_id: str) -> None:
        session = await self.get(session_id)
        await session.cancel(user_text("the conversation was deleted"))
        self._live.pop(session_id, None)
        self._records.pop(session_id, None)
        self.store.delete_session(session_id)
        await self.runtime.forget_session(session_id)

    async def shutdown(self) -> None:
        for session in list(self._live.values()):
            await session.cancel(user_text("the server was shut down during this turn"), interrupted=True)
        await self.runtime.close()
        self.store.close()

    # -- recovery --------------------------------------------------------------------------------------------

    def _recover_interrupted_turns(self) -> None:
        """A turn cut by a restart is marked interrupted; its pending approvals and tool calls canceled."""
        for record in self._records.values():
            if record.status != "running":
                continue
            events, messages = self._load(record.id)
            session = Conversation(record, self.store, self.runtime, events=events, messages=messages)
            open_turn = _open_turn(events)
            for call_id, name in _unfinished_calls(events):
                session.emit(
                    ToolStatusEvent(
                        call_id=call_id, name=name, status=ToolStatus.CANCELED, content=INTERRUPTED
                    )
                )
            for call_id in _unanswered_approvals(events):
                session.emit(ApprovalResolvedEvent(call_id=call_id, approved=False, reason=INTERRUPTED))
            if open_turn is not None:
                session.emit(TurnEndEvent(turn_id=open_turn, reason="interrupted", message=INTERRUPTED))
            _answer_dangling_tool_calls(session.messages)
            self.store.save_messages(record.id, session.messages)
            record.status = "idle"
            self.store.upsert_session(record)
            self._live[record.id] = session

    # -- export ----------------------------------------------------------------------------------------------

    async def export(self, session_id: str, fmt: str) -> str:
        session = await self.get(session_id)
        if fmt == "json":
            return json.dumps(
                {"session": session.record.public(), "messages": session.messages, "events": session.events},
                indent=2,
                ensure_ascii=False,
            )
        return conversation_markdown(
            session.record.title, session.events, self.runtime.tool_context().root_dir
        )


def _open_turn(events: list[dict[str, Any]]) -> str | None:
    open_turn = None
    for event in events:
        if event["type"] == "turn.start":
            open_turn = event["turn_id"]
        elif event["type"] == "turn.end":
            open_turn = None
    return open_turn


def _unfinished_calls(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    latest: dict[str, tuple[str, str]] = {}
    for event in events:
        if event["type"] == "tool.status":
            latest[event["call_id"]] = (event["name"], event["status"])
    return [
        (call_id, name) for call_id, (name, status) in latest.items() if status not in _TERMINAL_TOOL_STATUSES
    ]


def _unanswered_approvals(events: list[dict[str, Any]]) -> list[str]:
    asked = [event["request"]["call_id"] for event in events if event["type"] == "approval.request"]
    answered = {event["call_id"] for event in events if event["type"] == "approval.resolved"}
    return [call_id for call_id in asked if call_id not in answered]


def _answer_dangling_tool_calls(messages: list[dict[str, Any]]) -> None:
    answered = {message.get("tool_call_id") for message in messages if message.get("role") == "tool"}
    for message in list(messages):
        for call in message.get("tool_calls") or []:
            if call["id"] not in answered:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": INTERRUPTED})
