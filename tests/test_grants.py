"""Approval flows through the real executor and broker: once, for the session, always (saved and reloaded),
denials with reasons, and call ids the server never issued."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.permissions.approval import ApprovalReply
from hdsp_agent.permissions.broker import ApprovalBroker, UnknownApproval
from hdsp_agent.permissions.grants import GrantStore, PermissionsFile, default_permissions_path
from hdsp_agent.permissions.policy import AdminFloor, RulePolicy
from hdsp_agent.tools.base import (
    PermissionAction,
    PermissionKind,
    Tool,
    ToolArgs,
    ToolCall,
    ToolContext,
    ToolResult,
)
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry


class NoteArgs(ToolArgs):
    filepath: str
    text: str = "note"


class WriteNoteTool(Tool[NoteArgs]):
    """Writes a small file in the project: asks by default, like every write."""

    name = "write_note"
    description = "Write a note file."
    args_model = NoteArgs

    def permission(self, args: NoteArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(PermissionKind.FILE_WRITE, args.filepath, f"+{args.text}")

    async def run(self, args: NoteArgs, ctx: ToolContext) -> str:
        target = ctx.root_dir / args.filepath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(args.text)
        return f"wrote {args.filepath}"


class CommandArgs(ToolArgs):
    command: str


class DescribeCommandTool(Tool[CommandArgs]):
    """Reports a command as an execution for the policy, and never runs anything."""

    name = "describe_command"
    description = "Describe a command."
    args_model = CommandArgs

    def permission(self, args: CommandArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(PermissionKind.EXECUTE, args.command)

    async def run(self, args: CommandArgs, ctx: ToolContext) -> str:
        return "described, not run"


def build(tmp_path: Path) -> tuple[RulePolicy, ApprovalBroker, ToolExecutor]:
    policy = RulePolicy(AdminFloor(), PermissionsFile(tmp_path / "config" / "permissions.json"))
    broker = ApprovalBroker(on_reply=policy.grants.record)
    executor = ToolExecutor(
        ToolRegistry([WriteNoteTool(), DescribeCommandTool()]), policy=policy, approver=broker
    )
    return policy, broker, executor


async def call_and_answer(
    executor: ToolExecutor,
    broker: ApprovalBroker,
    root: Path,
    call: ToolCall,
    reply: ApprovalReply,
    session_id: str = "s1",
) -> tuple[ToolResult, bool]:
    """Run ``call``; if it waits for approval, answer with ``reply``. Returns (result, whether it asked)."""
    ctx = ToolContext(root_dir=root, session_id=session_id)
    task = asyncio.create_task(executor.execute(call, ctx))
    for _ in range(500):
        if broker.pending or task.done():
            break
        await asyncio.sleep(0.01)
    asked = bool(broker.pending)
    if asked:
        assert [request.call_id for request in broker.pending] == [call.id]
        broker.resolve(call.id, reply)
    return await asyncio.wait_for(task, 10), asked


def note(call_id: str, filepath: str = "notes/a.md") -> ToolCall:
    return ToolCall(id=call_id, name="write_note", arguments=json.dumps({"filepath": filepath}))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.mark.asyncio
async def test_allow_once_runs_this_call_and_asks_again_next_time(tmp_path: Path, root: Path) -> None:
    _, broker, executor = build(tmp_path)
    result, asked = await call_and_answer(executor, broker, root, note("c1"), ApprovalReply(approved=True))
    assert asked and result.ok and (root / "notes" / "a.md").read_text() == "note"
    again, asked_again = await call_and_answer(
        executor, broker, root, note("c2"), ApprovalReply(approved=True)
    )
    assert asked_again and again.ok


@pytest.mark.asyncio
async def test_allow_for_the_session_covers_the_same_call_in_that_session_only(
    tmp_path: Path, root: Path
) -> None:
    _, broker, executor = build(tmp_path)
    _, asked = await call_and_answer(
        executor, broker, root, note("c1"), ApprovalReply(approved=True, scope="session")
    )
    assert asked
    same, asked_same = await call_and_answer(
        executor, broker, root, note("c2"), ApprovalReply(approved=False)
    )
    assert same.ok and not asked_same
    other_path, asked_other_path = await call_and_answer(
        executor, broker, root, note("c3", "notes/b.md"), ApprovalReply(approved=True)
    )
    assert asked_other_path and other_path.ok
    other_session, asked_elsewhere = await call_and_answer(
        executor, broker, root, note("c4"), ApprovalReply(approved=True), session_id="s2"
    )
    assert asked_elsewhere and other_session.ok
    assert not (tmp_path / "config" / "permissions.json").exists(), "a session grant is not saved"


@pytest.mark.asyncio
async def test_always_allow_is_saved_as_a_rule_and_holds_after_a_restart(tmp_path: Path, root: Path) -> None:
    policy, broker, executor = build(tmp_path)
    _, asked = await call_and_answer(
        executor, broker, root, note("c1"), ApprovalReply(approved=True, scope="always")
    )
    assert asked
    saved = json.loads((tmp_path / "config" / "permissions.json").read_text())
    assert saved == {"allow": ["write_note(notes/a.md)"]}
    assert policy.user_rules["allow"][0].text == "write_note(notes/a.md)"
    # A new server: a new policy reading the same file, a new broker.
    _, new_broker, new_executor = build(tmp_path)
    result, asked_again = await call_and_answer(
        new_executor, new_broker, root, note("c2", "notes/a.md"), ApprovalReply(approved=False)
    )
    assert result.ok and not asked_again
    _, asked_other = await call_and_answer(
        new_executor, new_broker, root, note("c3", "notes/other.md"), ApprovalReply(approved=True)
    )
    assert asked_other


@pytest.mark.asyncio
async def test_always_allow_for_a_command_saves_it_with_its_wildcards_escaped(
    tmp_path: Path, root: Path
) -> None:
    policy, broker, executor = build(tmp_path)
    call = ToolCall(
        id="c1", name="describe_command", arguments=json.dumps({"command": "pip install 'x[dev]'"})
    )
    _, asked = await call_and_answer(
        executor, broker, root, call, ApprovalReply(approved=True, scope="always")
    )
    assert asked
    assert json.loads((tmp_path / "config" / "permissions.json").read_text())["allow"] == [
        "describe_command(pip install 'x[[]dev]')"
    ]
    assert (
        policy.check(
            "describe_command", {}, PermissionAction(PermissionKind.EXECUTE, "pip install 'x[dev]'"), root
        ).decision
        == "allow"
    )
    assert (
        policy.check(
            "describe_command", {}, PermissionAction(PermissionKind.EXECUTE, "pip install 'xd'"), root
        ).decision
        == "ask"
    )


@pytest.mark.asyncio
async def test_the_users_denial_reason_reaches_the_model(tmp_path: Path, root: Path) -> None:
    _, broker, executor = build(tmp_path)
    result, asked = await call_and_answer(
        executor, broker, root, note("c1"), ApprovalReply(approved=False, reason="put notes in docs/")
    )
    assert asked
    assert result.status == "denied" and result.error is not None
    assert result.error.code == "E_TOOL_DENIED"
    assert "put notes in docs/" in result.error.message
    assert not (root / "notes").exists()


@pytest.mark.asyncio
async def test_a_policy_denial_reaches_the_model_with_its_reasons_without_asking(
    tmp_path: Path, root: Path
) -> None:
    _, broker, executor = build(tmp_path)
    outside, asked = await call_and_answer(
        executor, broker, root, note("c1", "../escape.md"), ApprovalReply(approved=True)
    )
    assert not asked and outside.status == "denied" and outside.error is not None
    assert "writes ../escape.md, outside the project" in outside.error.message
    assert not (root.parent / "escape.md").exists()
    command = ToolCall(
        id="c2", name="describe_command", arguments=json.dumps({"command": "git status; rm -rf ~"})
    )
    denied, asked = await call_and_answer(executor, broker, root, command, ApprovalReply(approved=True))
    assert not asked and denied.status == "denied" and denied.error is not None
    assert "rm -rf ~: deletes the home directory recursively" in denied.error.message


@pytest.mark.asyncio
async def test_the_approval_request_carries_the_reasons(tmp_path: Path, root: Path) -> None:
    _, broker, executor = build(tmp_path)
    call = ToolCall(
        id="c1", name="describe_command", arguments=json.dumps({"command": "ls && pip install requests"})
    )
    task = asyncio.create_task(executor.execute(call, ToolContext(root_dir=root, session_id="s1")))
    while not broker.pending:
        await asyncio.sleep(0.01)
    request = broker.pending[0]
    assert request.reasons == ["pip install requests: installs or changes packages (pip install)"]
    assert (request.action_kind, request.action_target) == ("Execute", "ls && pip install requests")
    broker.resolve("c1", ApprovalReply(approved=False))
    assert (await task).status == "denied"


@pytest.mark.asyncio
async def test_only_call_ids_the_server_is_waiting_on_can_be_resolved(tmp_path: Path, root: Path) -> None:
    _, broker, executor = build(tmp_path)
    with pytest.raises(UnknownApproval):
        broker.resolve("never-issued", ApprovalReply(approved=True, scope="always"))
    result, asked = await call_and_answer(executor, broker, root, note("c1"), ApprovalReply(approved=True))
    assert asked and result.ok
    with pytest.raises(UnknownApproval):
        broker.resolve("c1", ApprovalReply(approved=True, scope="always"))  # answered already
    assert not (tmp_path / "config" / "permissions.json").exists()


@pytest.mark.asyncio
async def test_a_grant_never_lifts_a_deny(tmp_path: Path, root: Path) -> None:
    policy, broker, executor = build(tmp_path)
    policy.grants.sessions.grant("s1", "write_note", "../escape.md")
    result, asked = await call_and_answer(
        executor, broker, root, note("c1", "../escape.md"), ApprovalReply(approved=True)
    )
    assert result.status == "denied" and not asked


def test_a_call_id_pending_in_two_sessions_is_never_granted(tmp_path: Path) -> None:
    from hdsp_agent.permissions.approval import ApprovalRequest

    store = GrantStore(PermissionsFile(tmp_path / "p.json"))
    store.note_ask("call_1", "s1", "write_note", "a.md")
    store.note_ask("call_1", "s2", "write_note", "a.md")
    store.record(
        ApprovalRequest(call_id="call_1", tool="write_note", arguments={}),
        ApprovalReply(approved=True, scope="always"),
    )
    assert not store.sessions.allows("s1", "write_note", "a.md")
    assert not store.sessions.allows("s2", "write_note", "a.md")
    assert not (tmp_path / "p.json").exists()


@pytest.mark.asyncio
async def test_an_unwritable_rules_file_keeps_the_grant_for_the_session(tmp_path: Path, root: Path) -> None:
    policy, broker, executor = build(tmp_path)
    target = tmp_path / "config" / "permissions.json"
    target.parent.mkdir(parents=True)
    target.write_text("{broken")
    _, asked = await call_and_answer(
        executor, broker, root, note("c1"), ApprovalReply(approved=True, scope="always")
    )
    assert asked
    assert target.read_text() == "{broken", "a file the user broke is not overwritten"
    again, asked_again = await call_and_answer(
        executor, broker, root, note("c2"), ApprovalReply(approved=False)
    )
    assert again.ok and not asked_again


def test_the_rules_file_is_written_atomically_and_keeps_what_else_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "permissions.json"
    file = PermissionsFile(path)
    file.add_rule("deny", "read_file(**/.env*)")
    path.write_text(json.dumps({"deny": ["read_file(**/.env*)"], "mode": "accept-edits", "note": "mine"}))
    file.add_rule("allow", "ls")
    file.add_rule("allow", "ls")
    assert json.loads(path.read_text()) == {
        "deny": ["read_file(**/.env*)"],
        "mode": "accept-edits",
        "note": "mine",
        "allow": ["ls"],
    }
    assert os.listdir(path.parent) == ["permissions.json"], "no temporary file is left behind"
    loaded = file.load()
    assert (loaded.deny, loaded.allow, loaded.mode) == (["read_file(**/.env*)"], ["ls"], "accept-edits")


def test_the_default_file_is_in_the_jupyter_config_dir_and_nothing_is_written_until_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    assert default_permissions_path() == tmp_path / "jupyter-config" / "hdsp_agent" / "permissions.json"
    from hdsp_agent.config import HdspAgentConfig
    from hdsp_agent.permissions.policy import build_policy

    policy = build_policy(HdspAgentConfig(), tmp_path)
    assert policy.permissions_file is not None and policy.permissions_file.path == default_permissions_path()
    assert not (tmp_path / "jupyter-config").exists()


@pytest.mark.asyncio
async def test_the_server_extension_uses_this_policy_and_records_grants(jp_serverapp: Any) -> None:
    app = jp_serverapp.web_app.settings["hdsp_agent"]
    assert isinstance(app.policy, RulePolicy)
    assert app.runtime.policy is app.policy
    broker = app.runtime.new_broker(lambda event: None)
    assert broker.on_reply == app.policy.grants.record
