"""The sidebar's REST and session WebSocket routes: each handler translates between the wire and the domain
objects the app built.

HTTP lives in this package only (``web/``: these routes, the NotebookBridge socket in ``bridge.py``, MCP in
``mcp.py``/``mcp_endpoint.py``, the OpenAI-compatible endpoint in ``openai_v1.py``). Every route lives under
``/hdsp-agent/`` on the Jupyter port and requires Jupyter authentication (and XSRF for cookie-authenticated
writes, which ``APIHandler`` enforces). Domain errors become HTTP errors in this package, nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import tornado.web
import tornado.websocket
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.extension.handler import ExtensionHandlerMixin
from pydantic import ValidationError

from .. import __version__
from ..agent.conversation import Conversation, InvalidRequest, TurnAlreadyRunning
from ..agent.conversations import SessionNotFound
from ..agent.hunks import Hunk, HunkConflict, public_hunks
from ..agent.undo import NothingToRedo, NothingToUndo, UndoConflicts, UndoResult
from ..permissions.approval import ApprovalReply
from ..permissions.grants import GrantStore, PermissionsFileError
from ..tools.base import ToolError
from ..tools.definitions import to_summary
from ..wire import ClientCommand, parse_command

if TYPE_CHECKING:
    from ..app import HdspAgentApp

NAMESPACE = "hdsp-agent"
SESSION_ID = r"(?P<session_id>[0-9a-f]{32})"


class _AgentMixin(ExtensionHandlerMixin):
    settings: dict[str, Any]

    @property
    def agent(self) -> HdspAgentApp:
        agent: HdspAgentApp = self.settings["hdsp_agent"]
        return agent

    async def session_or_404(self, session_id: str) -> Conversation:
        try:
            return await self.agent.sessions.get(session_id)
        except SessionNotFound:
            raise tornado.web.HTTPError(404, f"no conversation {session_id}") from None


class _AgentHandler(_AgentMixin, APIHandler):
    def write_json(self, payload: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(payload))

    def body_json(self) -> dict[str, Any]:
        try:
            body = json.loads(self.request.body or b"{}")
        except json.JSONDecodeError as error:
            raise tornado.web.HTTPError(400, f"invalid JSON body: {error}") from None
        if not isinstance(body, dict):
            raise tornado.web.HTTPError(400, "the body must be a JSON object")
        return body


class InfoHandler(_AgentHandler):
    """``GET /hdsp-agent/info``: the server's version (for the frontend's handshake), the tool catalog and the
    OS sandbox in force (``layer``, ``active``, ``reason``, ``required``) for the sidebar's banner."""

    @tornado.web.authenticated
    def get(self) -> None:
        self.write_json(
            {
                "name": NAMESPACE,
                "version": __version__,
                "tools": [to_summary(tool) for tool in self.agent.catalog()],
                "sandbox": self.agent.os_sandbox.status.public(),
            }
        )


class ModelsHandler(_AgentHandler):
    """``GET /hdsp-agent/models``: configured models (never their keys), or local servers found and how to set
    up."""

    @tornado.web.authenticated
    async def get(self) -> None:
        self.write_json(await self.agent.models_overview())


class SessionsHandler(_AgentHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        self.write_json({"sessions": self.agent.sessions.list()})

    @tornado.web.authenticated
    def post(self) -> None:
        body = self.body_json()
        session = self.agent.sessions.create(title=body.get("title"), model=str(body.get("model") or ""))
        self.write_json(session.record.public(), status=201)


class SessionHandler(_AgentHandler):
    @tornado.web.authenticated
    async def get(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        self.write_json({**session.record.public(), "last_seq": session.last_seq})

    @tornado.web.authenticated
    async def patch(self, session_id: str) -> None:
        title = self.body_json().get("title")
        if not isinstance(title, str):
            raise tornado.web.HTTPError(400, "'title' (a string) is required")
        await self.session_or_404(session_id)
        self.write_json(await self.agent.sessions.rename(session_id, title))

    @tornado.web.authenticated
    async def delete(self, session_id: str) -> None:
        await self.session_or_404(session_id)
        await self.agent.sessions.delete(session_id)
        self.set_status(204)
        self.finish()


def _unsaved_paths(body: dict[str, Any]) -> frozenset[str]:
    """The contents paths the tab has open with unsaved changes (an undo must not write under them)."""
    unsaved = body.get("unsaved", [])
    if not isinstance(unsaved, list) or not all(isinstance(path, str) for path in unsaved):
        raise tornado.web.HTTPError(400, "'unsaved' must be a list of paths")
    return frozenset(path.lstrip("/") for path in unsaved)


class _UndoHandler(_AgentHandler):
    """Undo, restore and redo: all or nothing; a conflict answers 409 with the cells and files concerned."""

    async def answer(self, action: Callable[[], Awaitable[UndoResult]]) -> None:
        try:
            result = await action()
        except (NothingToUndo, NothingToRedo, TurnAlreadyRunning) as error:
            raise tornado.web.HTTPError(409, str(error)) from None
        except UndoConflicts as error:
            self.write_json(
                {
                    "message": str(error),
                    "conflicts": [
                        {"path": c.path, "cell_id": c.cell_id, "reason": c.reason} for c in error.conflicts
                    ],
                },
                status=409,
            )
            return
        except ToolError as error:  # e.g. the tab holding the notebook went away while the undo applied
            raise tornado.web.HTTPError(409, error.message) from None
        self.write_json({"restored": result.restored, "turn_ids": result.turn_ids, "paths": result.paths})


class SessionUndoHandler(_UndoHandler):
    """``POST .../undo`` ``{"unsaved"?}``: restore the files and notebook cells the last turn changed."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        unsaved = _unsaved_paths(self.body_json())
        await self.answer(lambda: session.undo_last_turn(unsaved))


class SessionRestoreHandler(_UndoHandler):
    """``POST .../restore`` ``{"turn_id", "unsaved"?}``: back to the checkpoint before that turn (it and every
    later turn undone)."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body_json()
        turn_id = body.get("turn_id")
        if not isinstance(turn_id, str) or not turn_id:
            raise tornado.web.HTTPError(400, "'turn_id' is required")
        unsaved = _unsaved_paths(body)
        await self.answer(lambda: session.restore(turn_id, unsaved))


class SessionRedoHandler(_UndoHandler):
    """``POST .../redo`` ``{"unsaved"?}``: re-do the last undo or restore."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        unsaved = _unsaved_paths(self.body_json())
        await self.answer(lambda: session.redo(unsaved))


class SessionUndoCellHandler(_AgentHandler):
    """``POST .../undo-cell`` ``{"path", "cell_id"}``: undo what the last turn did to one cell."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body_json()
        path, cell_id = body.get("path"), body.get("cell_id")
        if not isinstance(path, str) or not isinstance(cell_id, str) or not path or not cell_id:
            raise tornado.web.HTTPError(400, "path and cell_id are required")
        try:
            restored = await session.undo_cell(path, cell_id)
        except (NothingToUndo, TurnAlreadyRunning) as error:
            raise tornado.web.HTTPError(409, str(error)) from None
        except ToolError as error:
            raise tornado.web.HTTPError(409, error.message) from None
        self.write_json({"restored": restored})


class SessionKeepCellHandler(_AgentHandler):
    """``POST .../keep-cell`` ``{"path", "cell_id"}``: keep the agent's change to one cell (no undo takes it
    back any more)."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body_json()
        path, cell_id = body.get("path"), body.get("cell_id")
        if not isinstance(path, str) or not isinstance(cell_id, str) or not path or not cell_id:
            raise tornado.web.HTTPError(400, "path and cell_id are required")
        self.write_json({"kept": session.keep_cell(path, cell_id)})


class SessionHunksHandler(_AgentHandler):
    """``GET .../hunks?path=P``: the last turn's changes to one file, hunk by hunk, between what it was before
    the turn and what it is on disk now (``[]`` when the turn did not change it); an open editor shows them
    for review."""

    @tornado.web.authenticated
    async def get(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        path = self.get_query_argument("path", "")
        if not path:
            raise tornado.web.HTTPError(400, "'path' is required")
        try:
            hunks = await session.file_hunks(path)
        except InvalidRequest as error:
            raise tornado.web.HTTPError(400, str(error)) from None
        except ToolError as error:  # e.g. the file is no longer UTF-8 text
            raise tornado.web.HTTPError(409, error.message) from None
        self.write_json({"path": path, "hunks": public_hunks(hunks)})


class SessionUndoHunkHandler(_AgentHandler):
    """``POST .../undo-hunk`` ``{"path", "hunk": {old_start, old_lines, new_start, new_lines}}``: undo one
    hunk of the last turn's change to a file; 409 (nothing changed) when its lines were edited since."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body_json()
        path = body.get("path")
        if not isinstance(path, str) or not path:
            raise tornado.web.HTTPError(400, "'path' (a string) is required")
        try:
            hunk = Hunk.model_validate(body.get("hunk"))
        except ValidationError as error:
            raise tornado.web.HTTPError(400, f"invalid 'hunk': {error.errors()[0]['msg']}") from None
        try:
            restored = await session.undo_hunk(path, hunk)
        except InvalidRequest as error:
            raise tornado.web.HTTPError(400, str(error)) from None
        except (NothingToUndo, TurnAlreadyRunning, HunkConflict) as error:
            raise tornado.web.HTTPError(409, str(error)) from None
        except ToolError as error:
            raise tornado.web.HTTPError(409, error.message) from None
        self.write_json({"restored": restored, "hunks": public_hunks(await session.file_hunks(path))})


class SessionEventsHandler(_AgentHandler):
    """``GET .../events?since=N``: the event log after N (what the WebSocket's ``resume`` replays)."""

    @tornado.web.authenticated
    async def get(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        try:
            since = int(self.get_query_argument("since", "0"))
        except ValueError:
            raise tornado.web.HTTPError(400, "'since' must be an integer") from None
        self.write_json({"events": session.events_since(since), "last_seq": session.last_seq})


class SessionExportHandler(_AgentHandler):
    @tornado.web.authenticated
    async def get(self, session_id: str) -> None:
        fmt = self.get_query_argument("format", "markdown")
        if fmt not in ("markdown", "json"):
            raise tornado.web.HTTPError(400, "format must be 'markdown' or 'json'")
        await self.session_or_404(session_id)
        text = await self.agent.sessions.export(session_id, fmt)
        self.set_header(
            "Content-Type", "application/json" if fmt == "json" else "text/markdown; charset=utf-8"
        )
        self.finish(text)


class PermissionsHandler(_AgentHandler):
    """``GET /hdsp-agent/permissions?session_id=…``: that conversation's grants and the saved "always" rules.

    ``POST /hdsp-agent/permissions/revoke`` ``{"kind": "session", "session_id", "tool", "subject"}`` or
    ``{"kind": "saved", "rule"}``: remove one (404 when it is not there). Thin: ``permissions/grants.py``
    does the work.
    """

    def _grants(self) -> GrantStore:
        grants = getattr(self.agent.policy, "grants", None)
        if not isinstance(grants, GrantStore):
            raise tornado.web.HTTPError(404, "this server keeps no grants")
        return grants

    @tornado.web.authenticated
    def get(self) -> None:
        session_id = self.get_query_argument("session_id", None)
        self.write_json(self._grants().overview(session_id))


class PermissionsRevokeHandler(PermissionsHandler):
    @tornado.web.authenticated
    def post(self) -> None:
        body = self.body_json()
        grants = self._grants()
        kind = body.get("kind")
        if kind == "saved":
            rule = body.get("rule")
            if not isinstance(rule, str) or not rule:
                raise tornado.web.HTTPError(400, "'rule' (a string) is required")
            try:
                removed = grants.remove_saved(rule)
            except (OSError, PermissionsFileError) as error:
                raise tornado.web.HTTPError(409, f"the permissions file was not changed: {error}") from None
        elif kind == "session":
            fields = [body.get(name) for name in ("session_id", "tool", "subject")]
            if not all(isinstance(value, str) for value in fields):
                raise tornado.web.HTTPError(400, "'session_id', 'tool' and 'subject' (strings) are required")
            session_id, tool, subject = (str(value) for value in fields)
            removed = grants.revoke_session(session_id, tool, subject)
        else:
            raise tornado.web.HTTPError(400, "'kind' must be 'session' or 'saved'")
        if not removed:
            raise tornado.web.HTTPError(404, "no such permission")
        self.write_json(grants.overview(body.get("session_id") if kind == "session" else None))


class SessionSocketHandler(_AgentMixin, WebSocketMixin, tornado.websocket.WebSocketHandler, JupyterHandler):  # type: ignore[misc]
    """``/hdsp-agent/sessions/{id}/ws``: events out, commands in (send, approve, deny, cancel, resume).

    Nothing is sent until the client says ``resume {since_seq}``: the replay and the subscription then happen
    in the same tick of the event loop, so the client misses no event and sees none twice.
    """

    session: Conversation | None = None
    _unsubscribe: Any = None

    @ws_authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        self.session = await self.session_or_404(kwargs["session_id"])
        await super().get(*args, **kwargs)

    async def on_message(self, message: str | bytes) -> None:
        assert self.session is not None
        try:
            command = parse_command(message)
        except (ValidationError, ValueError) as error:
            self._reply("command.error", None, f"invalid command: {error}")
            return
        try:
            await self._handle(self.session, command)
        except (TurnAlreadyRunning, InvalidRequest, KeyError) as error:
            self._reply("command.error", command, str(error).strip("'\""))
        else:
            self._reply("command.ok", command)

    async def _handle(self, session: Conversation, command: ClientCommand) -> None:
        if command.type == "resume":
            self._subscribe(session, command.since_seq)
            return
        if self._unsubscribe is None:
            self._subscribe(session, session.last_seq)
        if command.type == "send":
            session.send(command.content, command.context, command.model)
        elif command.type == "approve":
            session.resolve_approval(
                command.call_id,
                ApprovalReply(approved=True, scope=command.scope, rule_scope=command.rule_scope),
            )
        elif command.type == "deny":
            session.resolve_approval(command.call_id, ApprovalReply(approved=False, reason=command.reason))
        elif command.type == "cancel":
            await session.cancel()

    def _subscribe(self, session: Conversation, since_seq: int) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        for event in session.events_since(since_seq):
            self._send(event)
        self._unsubscribe = session.subscribe(self._send)

    def _send(self, payload: dict[str, Any]) -> None:
        try:
            self.write_message(json.dumps(payload))
        except tornado.websocket.WebSocketClosedError:
            self.on_close()

    def _reply(self, kind: str, command: ClientCommand | None, message: str | None = None) -> None:
        reply: dict[str, Any] = {"type": kind, "command": command.type if command else None}
        if command is not None and command.id is not None:
            reply["id"] = command.id
        if message:
            reply["message"] = message
        self._send(reply)

    def on_close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None


def route(endpoint: str) -> str:
    return f"/{NAMESPACE}/{endpoint}"


def build_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [
        (route("info"), InfoHandler),
        (route("models"), ModelsHandler),
        (route("permissions"), PermissionsHandler),
        (route("permissions/revoke"), PermissionsRevokeHandler),
        (route("sessions"), SessionsHandler),
        (route(f"sessions/{SESSION_ID}"), SessionHandler),
        (route(f"sessions/{SESSION_ID}/events"), SessionEventsHandler),
        (route(f"sessions/{SESSION_ID}/undo"), SessionUndoHandler),
        (route(f"sessions/{SESSION_ID}/undo-cell"), SessionUndoCellHandler),
        (route(f"sessions/{SESSION_ID}/keep-cell"), SessionKeepCellHandler),
        (route(f"sessions/{SESSION_ID}/restore"), SessionRestoreHandler),
        (route(f"sessions/{SESSION_ID}/redo"), SessionRedoHandler),
        (route(f"sessions/{SESSION_ID}/hunks"), SessionHunksHandler),
        (route(f"sessions/{SESSION_ID}/undo-hunk"), SessionUndoHunkHandler),
        (route(f"sessions/{SESSION_ID}/export"), SessionExportHandler),
        (route(f"sessions/{SESSION_ID}/ws"), SessionSocketHandler),
    ]
