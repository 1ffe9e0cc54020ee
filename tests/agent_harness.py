"""Building a real agent (runtime, store, sessions) around the scripted model, for loop and session tests."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scripted_model import ScriptedModel

from hdsp_agent.agent.conversation import Conversation
from hdsp_agent.agent.conversations import ConversationManager
from hdsp_agent.agent.llm import ModelSettings
from hdsp_agent.agent.models import ModelCatalog
from hdsp_agent.agent.runtime import AgentRuntime
from hdsp_agent.agent.store import SessionStore
from hdsp_agent.assembly import assemble
from hdsp_agent.permissions.decision import PermissionPolicy, ReadOnlyPolicy
from hdsp_agent.tools.base import Tool, ToolContext


def make_runtime(
    root: Path,
    model: ScriptedModel | None,
    tools: Iterable[Tool[Any]],
    *,
    policy: PermissionPolicy | None = None,
    context_window: int = 32_768,
    **runtime_options: Any,
) -> AgentRuntime:
    models = (
        ModelCatalog(
            [
                ModelSettings(
                    model="scripted", base_url=model.base_url, max_retries=0, context_window=context_window
                )
            ]
        )
        if model is not None
        else ModelCatalog([])
    )
    # The server's and the CLI's assembly, with the test's own tools, policy and model.
    return assemble(
        None,
        root,
        lambda **overrides: ToolContext(root_dir=root, **overrides),
        tools=tools,
        policy=policy or ReadOnlyPolicy(),
        models=models,
        **runtime_options,
    ).runtime


def make_manager(root: Path, runtime: AgentRuntime, store_path: Path | None = None) -> ConversationManager:
    return ConversationManager(SessionStore(store_path or root / ".store" / "sessions.sqlite3"), runtime)


def types_of(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == kind]


async def wait_for_event(session: Conversation, kind: str, timeout: float = 10.0) -> dict[str, Any]:
    """The first event of ``kind`` (already emitted or yet to come)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = of_type(session.events, kind)
        if found:
            return found[0]
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"no {kind} event within {timeout} s; got {types_of(session.events)}")
        await asyncio.sleep(0.01)


async def run_turn(session: Conversation, content: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Send a message, wait for the turn to end, return the turn's events."""
    start = session.last_seq
    session.send(content, **kwargs)
    await asyncio.wait_for(session.wait(), 30)
    return session.events_since(start)
