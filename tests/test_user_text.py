"""Server-written strings the user reads: English for the model and the logs, translatable in the sidebar.

``hdsp_agent/user_text.py`` makes them; ``scripts/translations.js`` puts their templates into the sidebar's
catalog; ``src/serverText.ts`` shows them translated. These tests hold the server's half: the English text the
model reads is unchanged, every template is a literal the catalog extraction can see and has a Korean
translation, and what the pipeline emits (denials, approval reasons, turn notices) says how to translate it.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import hdsp_agent
from hdsp_agent.events import ApprovalRequestEvent, ToolStatusEvent, TurnEndEvent
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest
from hdsp_agent.permissions.policy import AdminFloor, PermissionsFile, RulePolicy
from hdsp_agent.tools.base import PermissionAction, PermissionKind, Tool, ToolArgs, ToolCall, ToolContext
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.output import model_text
from hdsp_agent.tools.registry import ToolRegistry
from hdsp_agent.user_text import UserText, join_texts, user_text

PACKAGE = Path(hdsp_agent.__file__).parent
CATALOG: dict[str, Any] = json.loads(
    (PACKAGE / "locale" / "ko_KR" / "LC_MESSAGES" / "hdsp_agent.json").read_text(encoding="utf-8")
)
MARKERS = {"user_text", "user_template"}


def korean(text: str, texts: dict[str, Any]) -> str:
    """What the sidebar shows for ``text`` in Korean: ``serverText.ts`` with the shipped catalog."""
    ref = texts.get(text)
    if ref is None:
        return text
    params = [korean(param, texts) if param != text else param for param in ref["params"]]
    template = (CATALOG.get(ref["id"]) or [ref["id"]])[0] or ref["id"]
    return re.sub(r"%(\d+)", lambda match: params[int(match.group(1)) - 1], template)


# -- the string itself -----------------------------------------------------------------------------------


def test_user_text_is_the_english_text_and_remembers_its_template() -> None:
    reason = user_text("runs commands with another user's privileges (%1)", "sudo")
    denial = user_text("not allowed: %1", reason)
    assert denial == "not allowed: runs commands with another user's privileges (sudo)"
    assert isinstance(denial, str) and denial.template == "not allowed: %1"
    assert denial.params == (reason,) and isinstance(denial.params[0], UserText)
    # Plain strings in a join stay as they are; one translatable part is enough to keep the rest.
    assert join_texts("; ", ["a", "b"]) == "a; b" and not isinstance(join_texts("; ", ["a", "b"]), UserText)
    joined = join_texts("; ", [reason, "typed by hand"])
    assert joined == "runs commands with another user's privileges (sudo); typed by hand"
    assert isinstance(joined, UserText) and joined.template == "%1; %2"


def test_an_event_says_how_to_translate_its_strings_and_keeps_that_through_the_store() -> None:
    event = TurnEndEvent(
        turn_id="t1",
        reason="step_limit",
        message=user_text("Stopped after %1 steps (the step limit). Send a message to continue.", 30),
    )
    stored = json.loads(json.dumps(event.model_dump(mode="json")))
    assert stored["message"] == "Stopped after 30 steps (the step limit). Send a message to continue."
    assert stored["texts"] == {
        stored["message"]: {
            "id": "Stopped after %1 steps (the step limit). Send a message to continue.",
            "params": ["30"],
        }
    }
    # A replayed event (read back from the store as JSON) has plain strings and keeps its map.
    assert TurnEndEvent.model_validate(stored).texts == event.texts
    assert (
        korean(stored["message"], stored["texts"])
        == "30단계 후 중지되었습니다(단계 제한). 계속하려면 메시지를 보내세요."
    )
    # A string nobody marked (a reason the user typed) is simply not in the map.
    typed = ApprovalReply(approved=False, reason="use the staging folder")
    assert ApprovalRequest(call_id="c", tool="t", arguments={}, reasons=[typed.reason or ""]).texts == {}


# -- the catalog -----------------------------------------------------------------------------------------


def _marker_calls() -> list[tuple[Path, ast.Call]]:
    calls = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "labextension" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKERS:
                calls.append((path, node))
    return calls


def test_every_server_template_is_a_literal_with_a_korean_translation() -> None:
    calls = _marker_calls()
    assert len(calls) > 250  # the executor, the loop, the policy and the shell analyser all mark theirs
    not_literal = [
        f"{path.relative_to(PACKAGE)}:{call.lineno}"
        for path, call in calls
        if not call.args
        or not (isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str))
    ]
    # An f-string or a variable would reach the user in English: the extraction cannot see it.
    assert not_literal == []
    templates = {call.args[0].value for _, call in calls}  # type: ignore[attr-defined]
    untranslated = sorted(
        template
        for template in templates
        if re.search(r"[A-Za-z]", re.sub(r"%\d+", "", template)) and not (CATALOG.get(template) or [""])[0]
    )
    assert untranslated == [], "run `node scripts/translations.js update`, translate, then `compile`"
    for template in templates:
        if template in CATALOG:
            placeholders = sorted(set(re.findall(r"%\d+", template)))
            assert sorted(set(re.findall(r"%\d+", CATALOG[template][0]))) == placeholders, template


# -- through the pipeline --------------------------------------------------------------------------------


class CommandArgs(ToolArgs):
    command: str


class ShellTool(Tool[CommandArgs]):
    """Stands for the terminal tool: the policy judges its command; running it only records that it ran."""

    name = "run_terminal_command"
    description = "Run a command."
    args_model = CommandArgs

    def __init__(self) -> None:
        self.ran = 0

    def permission(self, args: CommandArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(PermissionKind.EXECUTE, args.command)

    async def run(self, args: CommandArgs, ctx: ToolContext) -> str:
        self.ran += 1
        return "ran"


class Approver:
    def __init__(self, reply: ApprovalReply) -> None:
        self.reply = reply

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        return self.reply


async def _call(tmp_path: Path, command: str, reply: ApprovalReply) -> tuple[Any, list[BaseModel], ShellTool]:
    tool = ShellTool()
    policy = RulePolicy(AdminFloor(), PermissionsFile(tmp_path / "permissions.json"))
    executor = ToolExecutor(ToolRegistry([tool]), policy=policy, approver=Approver(reply))
    events: list[BaseModel] = []
    ctx = ToolContext(root_dir=tmp_path, emit=events.append, call_id="call-1")
    call = ToolCall(id="call-1", name=tool.name, arguments=json.dumps({"command": command}))
    return await executor.execute(call, ctx), events, tool


@pytest.mark.asyncio
async def test_a_policy_denial_is_english_for_the_model_and_korean_in_the_sidebar(tmp_path: Path) -> None:
    result, events, tool = await _call(tmp_path, "sudo ls", ApprovalReply(approved=True))
    assert tool.ran == 0 and result.status == "denied"
    # The model's view is the same English as ever.
    assert model_text(result).startswith(
        "Error [E_TOOL_DENIED]: not allowed: sudo ls: runs commands with another user's privileges (sudo)"
    )
    final = [event for event in events if isinstance(event, ToolStatusEvent)][-1].model_dump(mode="json")
    message = final["error"]["message"]
    assert final["texts"][message]["id"] == "not allowed: %1"
    assert (
        korean(message, final["texts"])
        == "허용되지 않음: sudo ls: 다른 사용자의 권한으로 명령을 실행합니다 (sudo)"
    )
    suggestion = final["error"]["suggestion"]
    assert korean(suggestion, final["texts"]) == CATALOG[suggestion][0]


@pytest.mark.asyncio
async def test_approval_reasons_and_a_decline_are_translatable(tmp_path: Path) -> None:
    result, events, tool = await _call(
        tmp_path, "pip install requests", ApprovalReply(approved=False, reason="not now")
    )
    assert tool.ran == 0
    request = next(event for event in events if isinstance(event, ApprovalRequestEvent)).model_dump(
        mode="json"
    )
    reasons = request["request"]["reasons"]
    assert "pip install requests: installs or changes packages (pip install)" in reasons
    shown = [korean(reason, request["request"]["texts"]) for reason in reasons]
    assert "pip install requests: 패키지를 설치하거나 바꿉니다 (pip install)" in shown
    # The reason the user typed goes to the model as typed, and is shown as typed.
    assert result.error is not None and result.error.message == "the user declined this call. Reason: not now"
    final = [event for event in events if isinstance(event, ToolStatusEvent)][-1].model_dump(mode="json")
    assert (
        korean(final["error"]["message"], final["texts"]) == "사용자가 이 호출을 거절했습니다. 이유: not now"
    )
