"""The one table of the REST routes' refusals: a stable code → its HTTP status and the words the user reads.

A handler raises ``RestError(code, *params)``; ``_AgentHandler.write_error`` answers with an ``ErrorReply``
(``rest_models.py``): ``{"code", "message", "texts", "field"?, "conflicts"?}``. ``message`` is the English
text (what logs and scripts read); ``texts`` tells the sidebar how to translate it. Domain errors are mapped
to a code here, in ``web/``, nowhere else. The OpenAI-compatible ``/v1`` and the MCP endpoint answer in their
own protocols' error shapes and are not in this table.
"""

from __future__ import annotations

from typing import Any

import tornado.web

from ..user_text import UserText, user_template

# code → (HTTP status, template: %1, %2, … are the parameters the raiser gives).
ERRORS: dict[str, tuple[int, str]] = {
    # The request itself.
    "invalid_json": (400, user_template("The request body is not valid JSON: %1")),
    "invalid_field": (400, user_template("Invalid request: '%1': %2")),
    "invalid_request": (400, user_template("Invalid request: %1")),
    "invalid_endpoint": (400, user_template("Invalid model endpoint: %1")),
    # Who may.
    "models_locked": (403, user_template("Models are set by the administrator; ask %1.")),
    # What is not there.
    "session_not_found": (404, user_template("No conversation %1")),
    "no_grants": (404, user_template("This server keeps no grants")),
    "permission_not_found": (404, user_template("No such permission")),
    "mcp_endpoint_disabled": (
        404,
        user_template("The MCP endpoint is disabled (c.HdspAgentApp.mcp_endpoint_enabled)"),
    ),
    "mcp_project_file_missing": (404, user_template("No project MCP file: %1")),
    "skill_not_found": (404, user_template("No such skill: %1")),
    # Not now, or not any more: nothing was changed.
    "turn_running": (409, user_template("A turn is running: %1")),
    "nothing_to_undo": (409, user_template("Nothing to undo: %1")),
    "undo_conflicts": (409, user_template("Nothing was undone: %1")),
    "hunk_conflict": (409, user_template("The change cannot be undone: %1")),
    "document_unavailable": (409, user_template("The document could not be changed: %1")),
    "permissions_file": (409, user_template("The permissions file was not changed: %1")),
    "mcp_trust_changed": (409, user_template("The project MCP file was not trusted: %1")),
    "skill_trust_changed": (409, user_template("The skill was not trusted: %1")),
    "mcp_prompt_failed": (409, user_template("The MCP prompt could not be had: %1")),
    "completion_unavailable": (409, user_template("Inline completion has no model: %1")),
    "completion_failed": (409, user_template("The completion model failed: %1")),
}


class RestError(tornado.web.HTTPError):
    """A refusal from the table: tornado's ``HTTPError`` (so it is not logged as a crash) carrying the code,
    the parameters of its template and, for a malformed request, the field at fault."""

    def __init__(
        self, code: str, *params: object, field: str | None = None, extra: dict[str, Any] | None = None
    ) -> None:
        status, template = ERRORS[code]
        super().__init__(status)
        self.code = code
        # The template is the table's (extracted from it); a parameter that is a server string stays one.
        self.text = UserText(template, (p if isinstance(p, UserText) else str(p) for p in params))
        self.field = field
        self.extra = extra or {}

    def __str__(self) -> str:
        return str(self.text)
