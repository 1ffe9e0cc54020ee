"""What the sidebar's Permissions view relies on: "always" rules saved for a file, its folder or everywhere
(only for writes), and the REST routes that list and remove grants and saved rules on a real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tornado.httpclient
from pydantic import ValidationError
from test_grants import build, call_and_answer, note

from hdsp_agent.permissions.approval import ApprovalReply
from hdsp_agent.permissions.grants import rule_for_scope
from hdsp_agent.tools.base import ToolCall
from hdsp_agent.web.routes import NAMESPACE
from hdsp_agent.wire import parse_command


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


def saved_rules(tmp_path: Path) -> list[str]:
    return json.loads((tmp_path / "config" / "permissions.json").read_text())["allow"]


@pytest.mark.asyncio
async def test_always_for_this_folder_covers_its_files_and_no_others(tmp_path: Path, root: Path) -> None:
    _, broker, executor = build(tmp_path)
    reply = ApprovalReply(approved=True, scope="always", rule_scope="folder")
    _, asked = await call_and_answer(executor, broker, root, note("c1", "notes/a.md"), reply)
    assert asked
    assert saved_rules(tmp_path) == ["write_note(notes/**)"]

    _, new_broker, new_executor = build(tmp_path)  # a new server reading the same file
    sibling, asked_sibling = await call_and_answer(
        new_executor, new_broker, root, note("c2", "notes/deeper/b.md"), ApprovalReply(approved=False)
    )
    assert sibling.ok and not asked_sibling
    _, asked_elsewhere = await call_and_answer(
        new_executor, new_broker, root, note("c3", "other/c.md"), ApprovalReply(approved=False)
    )
    assert asked_elsewhere


@pytest.mark.asyncio
async def test_always_everywhere_saves_the_bare_tool(tmp_path: Path, root: Path) -> None:
    _, broker, executor = build(tmp_path)
    reply = ApprovalReply(approved=True, scope="always", rule_scope="everywhere")
    await call_and_answer(executor, broker, root, note("c1", "notes/a.md"), reply)
    assert saved_rules(tmp_path) == ["write_note"]


@pytest.mark.asyncio
async def test_a_command_is_saved_exactly_whatever_scope_the_client_asks(tmp_path: Path, root: Path) -> None:
    _, broker, executor = build(tmp_path)
    call = ToolCall(id="c1", name="describe_command", arguments=json.dumps({"command": "make test"}))
    reply = ApprovalReply(approved=True, scope="always", rule_scope="everywhere")
    _, asked = await call_and_answer(executor, broker, root, call, reply)
    assert asked
    assert saved_rules(tmp_path) == ["describe_command(make test)"]


@pytest.mark.asyncio
async def test_removing_an_always_rule_removes_the_chat_grant_it_made(tmp_path: Path, root: Path) -> None:
    policy, broker, executor = build(tmp_path)
    always = ApprovalReply(approved=True, scope="always")
    await call_and_answer(executor, broker, root, note("c1", "notes/a.md"), always)
    assert saved_rules(tmp_path) == ["write_note(notes/a.md)"]
    assert policy.grants.remove_saved("write_note(notes/a.md)")
    assert policy.grants.overview("s1")["session"] == []
    _, asked = await call_and_answer(
        executor, broker, root, note("c2", "notes/a.md"), ApprovalReply(approved=False)
    )
    assert asked, "the chat that said 'always' is asked again once the rule is gone"


@pytest.mark.parametrize(
    ("subject", "scope", "kind", "rule"),
    [
        ("errors.ipynb", "folder", "Kernel", "insert_cell(**)"),
        ("/home/u/p/a[1].py", "folder", "FileWrite", "insert_cell(/home/u/p/**)"),
        ("data/a[1]/x.py", "folder", "FileWrite", "insert_cell(data/a[[]1]/**)"),
        ("data/x.py", "exact", "FileWrite", "insert_cell(data/x.py)"),
        ("secret.env", "everywhere", "FileReadSensitive", "insert_cell(secret.env)"),
        ("https://x.org/a", "folder", "Network", "insert_cell(https://x.org/a)"),
        ("", "everywhere", "FileWrite", "insert_cell"),
    ],
)
def test_rule_for_scope(subject: str, scope: Any, kind: str, rule: str) -> None:
    assert rule_for_scope("insert_cell", subject, scope, kind) == rule


async def test_the_permissions_routes_list_and_remove_grants_and_saved_rules(
    jp_fetch: Any, jp_serverapp: Any
) -> None:
    policy = jp_serverapp.web_app.settings["hdsp_agent"].policy
    session_id = "a" * 32
    policy.grants.sessions.grant(session_id, "write_note", "notes/a.md")
    policy.grants.sessions.grant("b" * 32, "write_note", "elsewhere.md")
    policy.permissions_file.add_rule("allow", "write_note(notes/**)")
    policy.reload()

    listed = json.loads((await jp_fetch(NAMESPACE, "permissions", params={"session_id": session_id})).body)
    assert listed["session"] == [{"tool": "write_note", "subject": "notes/a.md"}]
    assert listed["saved"] == ["write_note(notes/**)"]
    assert listed["file"] == str(policy.permissions_file.path)

    async def revoke(body: dict[str, Any]) -> dict[str, Any]:
        response = await jp_fetch(NAMESPACE, "permissions", "revoke", method="POST", body=json.dumps(body))
        return json.loads(response.body)

    after = await revoke(
        {"kind": "session", "session_id": session_id, "tool": "write_note", "subject": "notes/a.md"}
    )
    assert after["session"] == []
    assert not policy.grants.sessions.allows(session_id, "write_note", "notes/a.md")
    assert policy.grants.sessions.allows("b" * 32, "write_note", "elsewhere.md"), "other chats keep theirs"

    after = await revoke({"kind": "saved", "rule": "write_note(notes/**)"})
    assert after["saved"] == []
    assert [rule.text for rule in policy.user_rules["allow"]] == [], "the policy forgets the rule at once"

    for body, code in [
        ({"kind": "saved", "rule": "write_note(notes/**)"}, 404),
        ({"kind": "session", "session_id": session_id, "tool": "write_note", "subject": "x"}, 404),
        ({"kind": "everything"}, 400),
        ({"kind": "saved"}, 400),
    ]:
        with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
            await revoke(body)
        assert caught.value.code == code, body


def test_the_approve_command_carries_the_rule_scope_and_refuses_others() -> None:
    command = parse_command(
        json.dumps({"type": "approve", "call_id": "c1", "scope": "always", "rule_scope": "folder"})
    )
    assert (command.scope, command.rule_scope) == ("always", "folder")
    assert parse_command(json.dumps({"type": "approve", "call_id": "c1"})).rule_scope == "exact"
    with pytest.raises(ValidationError):
        parse_command(json.dumps({"type": "approve", "call_id": "c1", "rule_scope": "/etc"}))
