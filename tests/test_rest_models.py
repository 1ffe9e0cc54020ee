"""The REST routes' edges on a real Jupyter server: a malformed body or query is a 400 naming the field that
changes nothing; every refusal comes from the one error table (web/errors.py) in one shape; replies are
checked against their models (web/rest_models.py).

One test per route family: sessions, undo/restore/hunks, events, permissions, model setup, MCP.
These run on pytest-jupyter's own event loop (no asyncio mark).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
import tornado.httpclient

from hdsp_agent.agent.model_setup import default_setup_path
from hdsp_agent.web import errors
from hdsp_agent.web.rest_models import ErrorReply

WEB = Path(__file__).resolve().parent.parent / "hdsp_agent" / "web"


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    return {**jp_server_config, "HdspAgentApp": {"store_path": str(tmp_path / "sessions.sqlite3")}}


async def call(jp_fetch: Any, path: str, method: str = "GET", body: Any = None, **params: str) -> Any:
    """(status, JSON reply); ``body`` a str is sent as it is (not JSON-encoded)."""
    data = None if body is None else body if isinstance(body, str) else json.dumps(body)
    try:
        response = await jp_fetch(
            "hdsp-agent",
            *path.split("/"),
            method=method,
            body=data,
            params=params or None,
            allow_nonstandard_methods=True,
        )
    except tornado.httpclient.HTTPClientError as error:
        assert error.response is not None
        return error.code, json.loads(error.response.body)
    return response.code, json.loads(response.body) if response.body else None


def refused(reply: Any, code: str, field: str | None = None) -> bool:
    """The reply is an ``ErrorReply`` of ``code`` (naming ``field``), its message translatable."""
    ErrorReply.model_validate(reply)
    assert reply["code"] == code, reply
    assert reply.get("field") == field, reply
    assert reply["message"] in reply["texts"], "the sidebar can translate it"
    return True


async def test_sessions_refuse_malformed_bodies_and_create_nothing(jp_fetch: Any) -> None:
    code, reply = await call(jp_fetch, "sessions", "POST", {"title": 5})
    assert code == 400 and refused(reply, "invalid_field", "title")
    assert "title" in reply["message"]
    code, reply = await call(jp_fetch, "sessions", "POST", "{not json")
    assert code == 400 and refused(reply, "invalid_json")
    code, reply = await call(jp_fetch, "sessions", "POST", '["a list"]')
    assert code == 400 and refused(reply, "invalid_request")
    code, reply = await call(jp_fetch, "sessions", "POST", {"title": "t", "colour": "red"})
    assert code == 400 and refused(reply, "invalid_field", "colour"), "an unknown field is a mistake"
    assert (await call(jp_fetch, "sessions"))[1] == {"sessions": []}, "nothing was created"

    code, created = await call(jp_fetch, "sessions", "POST", {"title": "Kept"})
    fields = {"id", "title", "created", "updated", "model", "status", "notebooks"}
    assert code == 201 and set(created) == fields
    code, reply = await call(jp_fetch, f"sessions/{created['id']}", "PATCH", {"title": None})
    assert code == 400 and refused(reply, "invalid_field", "title")
    assert (await call(jp_fetch, f"sessions/{created['id']}"))[1]["title"] == "Kept", "not renamed"
    code, reply = await call(jp_fetch, f"sessions/{'0' * 32}")
    assert code == 404 and refused(reply, "session_not_found")


async def test_undo_routes_name_the_field_at_fault(jp_fetch: Any) -> None:
    session_id = (await call(jp_fetch, "sessions", "POST", {}))[1]["id"]
    base = f"sessions/{session_id}"
    code, reply = await call(jp_fetch, f"{base}/undo", "POST", {"unsaved": "a.ipynb"})
    assert code == 400 and refused(reply, "invalid_field", "unsaved")
    code, reply = await call(jp_fetch, f"{base}/restore", "POST", {})
    assert code == 400 and refused(reply, "invalid_field", "turn_id")
    code, reply = await call(jp_fetch, f"{base}/undo-cell", "POST", {"path": "a.ipynb", "cell_id": 3})
    assert code == 400 and refused(reply, "invalid_field", "cell_id")
    hunk = {"old_start": -1, "old_lines": [], "new_start": 0, "new_lines": ["x"]}
    code, reply = await call(jp_fetch, f"{base}/undo-hunk", "POST", {"path": "a.py", "hunk": hunk})
    assert code == 400 and refused(reply, "invalid_field", "hunk.old_start")
    code, reply = await call(jp_fetch, f"{base}/hunks")
    assert code == 400 and refused(reply, "invalid_field", "path")
    # A well-formed request with nothing to undo: the table's 409.
    code, reply = await call(jp_fetch, f"{base}/undo", "POST", {"unsaved": []})
    assert code == 409 and refused(reply, "nothing_to_undo")


async def test_events_and_export_check_their_query(jp_fetch: Any) -> None:
    session_id = (await call(jp_fetch, "sessions", "POST", {}))[1]["id"]
    code, reply = await call(jp_fetch, f"sessions/{session_id}/events", since="ten")
    assert code == 400 and refused(reply, "invalid_field", "since")
    code, page = await call(jp_fetch, f"sessions/{session_id}/events", since="0", cache_buster="1")
    assert code == 200 and page == {"events": [], "last_seq": 0}, "unknown query arguments are ignored"
    code, reply = await call(jp_fetch, f"sessions/{session_id}/export", format="pdf")
    assert code == 400 and refused(reply, "invalid_field", "format")


async def test_permission_revoke_names_the_missing_field(jp_fetch: Any) -> None:
    code, reply = await call(jp_fetch, "permissions/revoke", "POST", {"kind": "everything"})
    assert code == 400 and refused(reply, "invalid_field", "kind")
    code, reply = await call(jp_fetch, "permissions/revoke", "POST", {"kind": "saved"})
    assert code == 400 and refused(reply, "invalid_field", "rule")
    code, reply = await call(
        jp_fetch, "permissions/revoke", "POST", {"kind": "session", "session_id": "s", "tool": "t"}
    )
    assert code == 400 and refused(reply, "invalid_field", "subject")


async def test_model_setup_refuses_a_bad_mode_and_saves_nothing(jp_fetch: Any) -> None:
    body = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "tool_calls": "sometimes"}
    code, reply = await call(jp_fetch, "model-setup", "PUT", body)
    assert code == 400 and refused(reply, "invalid_field", "tool_calls")
    code, reply = await call(jp_fetch, "model-setup/models", "POST", {"base_url": "ftp://example"})
    assert code == 400 and refused(reply, "invalid_endpoint", "base_url")
    code, reply = await call(jp_fetch, "model-setup/test", "POST", {"base_url": "http://127.0.0.1:9/v1"})
    assert code == 400 and refused(reply, "invalid_field", "model")
    assert not default_setup_path().exists(), "nothing is saved from a refused request"


async def test_mcp_trust_needs_the_reviewed_digest(jp_fetch: Any) -> None:
    code, reply = await call(jp_fetch, "mcp/trust", "POST", {})
    assert code == 400 and refused(reply, "invalid_field", "sha256")
    code, report = await call(jp_fetch, "mcp/servers", refresh="0")
    assert code == 200 and set(report) == {
        "servers",
        "project",
        "problems",
        "declared_tool_problems",
        "endpoint",
    }


def test_every_error_code_has_a_status_and_a_translatable_template() -> None:
    for code, (status, template) in errors.ERRORS.items():
        assert 400 <= status < 500, code
        assert template and template[0].isupper(), code


def test_no_handler_under_web_answers_around_the_models_or_the_error_table() -> None:
    """Sidebar routes write replies with ``reply(Model, …)`` and refuse with ``RestError`` only; the
    OpenAI-compatible /v1 endpoint answers in OpenAI's own error shape."""
    offenders = []
    for path in sorted(WEB.glob("*.py")):
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or function.name == "reply":
                continue  # ``reply`` is where a checked reply is written
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                name = ast.unparse(node.func)
                if name.endswith("HTTPError") and path.name != "errors.py":
                    offenders.append(f"{path.name}:{node.lineno} {name}")
                if name == "self.write_json" and path.name != "openai_v1.py":
                    offenders.append(f"{path.name}:{node.lineno} {name}")
    assert offenders == []
