"""Deleting a conversation frees everything kept for it: state is made in every per-conversation store
through real tool calls (files read and edited, a notebook read, changed and run on a real kernel, a
background command, an approval "for this session", a checkpoint and a mode), then
``ConversationManager.delete`` (the DELETE route's call) — and the conversation's id is found nowhere in
them, nor its process running.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import nbformat
from traitlets.config import Config

from hdsp_agent.agent.store import SessionStore
from hdsp_agent.assembly import assemble
from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest
from hdsp_agent.tools.base import ToolCall, ToolContext
from hdsp_agent.tools.jupyter.headless import headless_jupyter


def holding(value: Any, needle: str, seen: set[int] | None = None, depth: int = 0) -> list[str]:
    """Where ``needle`` occurs in ``value``: dict keys and values, sequences, objects' attributes (paths)."""
    seen = set() if seen is None else seen
    if isinstance(value, str):
        return ["="] if needle in value else []
    if id(value) in seen or depth > 8 or callable(value) and not hasattr(value, "__dict__"):
        return []
    seen.add(id(value))
    found: list[str] = []
    items: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        items = [(f"[{key!r}]", key) for key in value] + [(f"[{key!r}]", item) for key, item in value.items()]
    elif isinstance(value, list | tuple | set | frozenset):
        items = [(f"[{index}]", item) for index, item in enumerate(value)]
    elif dataclasses.is_dataclass(value) or hasattr(value, "__dict__"):
        items = [(f".{name}", item) for name, item in vars(value).items()]
    for where, item in items:
        found += [where + rest for rest in holding(item, needle, seen, depth + 1)]
    return found


class SessionApprover:
    """Approves every ask "for this session", recording the grant as the server's broker does."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        reply = ApprovalReply(approved=True, scope="session")
        self.policy.grants.record(request, reply)
        return reply


async def test_deleting_a_conversation_frees_every_store(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\n")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, root / "analysis.ipynb")
    config = HdspAgentConfig(
        config=Config({"HdspAgentConfig": {"permissions_file": str(tmp_path / "permissions.json")}})
    )
    async with headless_jupyter(root) as jupyter:
        built = assemble(
            config,
            root,
            lambda **overrides: ToolContext(
                root_dir=root,
                kernel_manager=jupyter.kernel_manager,
                session_manager=jupyter.session_manager,
                contents_manager=jupyter.contents_manager,
                **overrides,
            ),
        )
        runtime = built.runtime
        manager = built.conversations(SessionStore(tmp_path / "sessions.sqlite3"))
        other = manager.create()
        session = manager.create()
        # A turn: its checkpoint, and the conversation's mode (no model configured: it ends at once).
        session.send("hello", {"mode": "default"})
        await session.wait()
        executor = built.executor(SessionApprover(built.rule_policy))

        async def call(sid: str, name: str, arguments: dict[str, Any]) -> None:
            ctx = runtime.tool_context(session_id=sid)
            result = await executor.execute(
                ToolCall(id=f"{name}-{sid}", name=name, arguments=json.dumps(arguments)), ctx
            )
            assert result.ok, (name, result.error)

        try:
            for sid in (session.id, other.id):
                await call(sid, "read_file", {"filepath": "notes.txt"})
                await call(sid, "read_notebook", {"path": "analysis.ipynb"})
            await call(
                session.id,
                "single_find_and_replace",
                {"filepath": "notes.txt", "old_string": "alpha", "new_string": "beta"},
            )
            await call(session.id, "insert_cell", {"path": "analysis.ipynb", "source": "y = 2"})
            await call(session.id, "run_cell", {"path": "analysis.ipynb", "code": "z = 3"})
            await call(
                session.id, "run_terminal_command", {"command": "sleep 60", "waitForCompletion": False}
            )
            stores = {type(store).__name__: store for store in runtime.per_conversation()}
            before = {name: holding(store, session.id) for name, store in stores.items()}
            assert all(before.values()), f"every store holds something of the conversation: {before}"
            process = runtime.state.processes.list(session.id)[0]
            assert process.running

            await manager.delete(session.id)

            left = {name: holding(store, session.id) for name, store in stores.items()}
            assert left == {name: [] for name in stores}, left
            assert not process.running
            notebooks = runtime.state.notebooks
            assert session.id not in notebooks._seen.sessions() and session.id not in notebooks._stamps
            assert other.id in notebooks._seen.sessions(), "another conversation's state stays"
            assert holding(runtime.state.files, other.id)
        finally:
            await manager.shutdown()
            await built.aclose()
