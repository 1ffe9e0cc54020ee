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
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import tornado.web
import tornado.websocket
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.extension.handler import ExtensionHandlerMixin
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from .. import __version__
from ..agent.conversation import Conversation, InvalidRequest, TurnAlreadyRunning
from ..agent.conversations import SessionNotFound
from ..agent.hunks import HunkConflict, public_hunks
from ..agent.undo import NothingToRedo, NothingToUndo, UndoConflicts, UndoResult
from ..permissions.approval import ApprovalReply
from ..permissions.grants import GrantStore, PermissionsFileError
from ..tools.base import ToolError
from ..tools.definitions import to_summary
from ..user_text import texts_for
from ..wire import ClientCommand, parse_command
from .errors import RestError
from .rest_models import (
    CreateSessionRequest,
    ErrorReply,
    EventsPage,
    EventsQuery,
    ExportQuery,
    HunksQuery,
    HunksReply,
    KeepCellReply,
    KeepCellRequest,
    ModelsOverview,
    PermissionsOverview,
    PermissionsQuery,
    RenameSessionRequest,
    RestoreRequest,
    RevokeSavedRequest,
    RevokeSessionRequest,
    ServerInfo,
    SessionDetail,
    SessionList,
    SessionRecord,
    UndoCellRequest,
    UndoHunkReply,
    UndoHunkRequest,
    UndoReply,
    UndoRequest,
)

if TYPE_CHECKING:
    from ..app import HdspAgentApp

NAMESPACE = "hdsp-agent"
Body = TypeVar("Body", bound=BaseModel)
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
            raise RestError("session_not_found", session_id) from None


class _AgentHandler(_AgentMixin, APIHandler):
    """Every REST handler: bodies and query strings read into their models (``rest_models.py``), replies
    validated against theirs, refusals from the one error table (``errors.py``)."""

    def write_json(self, payload: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(payload))

    def reply(self, model: type[BaseModel], payload: Any, status: int = 200) -> None:
        """``payload`` checked against ``model`` and sent; fields the domain left out stay out."""
        checked = payload if isinstance(payload, model) else model.model_validate(payload)
        self.write_json(checked.model_dump(mode="json", exclude_unset=True), status)

    def body(self, model: type[Body] | TypeAdapter[Body]) -> Body:
        """The JSON body as ``model``; a malformed one is a 400 naming the field, before anything happens."""
        try:
            raw = json.loads(self.request.body or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise RestError("invalid_json", error) from None
        return _validated(model, raw)

    def query(self, model: type[Body]) -> Body:
        """The query string as ``model`` (each argument's last value)."""
        raw = {name: self.get_query_argument(name) for name in self.request.query_arguments}
        return _validated(model, raw)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = kwargs.get("exc_info", (None, None, None))[1]
        if not isinstance(error, RestError):
            super().write_error(status_code, **kwargs)
            return
        fields: dict[str, Any] = {"field": error.field} if error.field else {}
        reply = ErrorReply(
            code=error.code, message=str(error.text), texts=texts_for(error.text), **fields, **error.extra
        )
        self.set_header("Content-Type", "application/json")
        # Absent, not null, what does not apply (a conflict's cell_id of None stays: it is the data).
        self.finish(json.dumps(reply.model_dump(mode="json", exclude_unset=True)))


def _validated(model: type[Body] | TypeAdapter[Body], raw: Any) -> Body:
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(raw)
        return model.model_validate(raw)
    except ValidationError as invalid:
        first = invalid.errors()[0]
        location = [str(part) for part in first["loc"]]
        if isinstance(model, TypeAdapter) and location:
            location = location[1:]  # a union's member, by its tag: not a field of the body
        discriminator = (first.get("ctx") or {}).get("discriminator")
        if not location and discriminator:
            location = [str(discriminator).strip("'")]
        if not location:
            raise RestError("invalid_request", first["msg"]) from None
        field = ".".join(location)
        raise RestError("invalid_field", field, first["msg"], field=field) from None


class InfoHandler(_AgentHandler):
    """``GET /hdsp-agent/info``: the server's version (for the frontend's handshake), the tool catalog and the
    OS sandbox in force (``layer``, ``active``, ``reason``, ``required``) for the sidebar's banner."""

    @tornado.web.authenticated
    def get(self) -> None:
        self.reply(
            ServerInfo,
            {
                "name": NAMESPACE,
                "version": __version__,
                "tools": [to_summary(tool) for tool in self.agent.catalog()],
                "sandbox": self.agent.os_sandbox.status.public(),
            },
        )


class ModelsHandler(_AgentHandler):
    """``GET /hdsp-agent/models``: configured models (never their keys), or local servers found and how to set
    up."""

    @tornado.web.authenticated
    async def get(self) -> None:
        self.reply(ModelsOverview, await self.agent.models_overview())


class SessionsHandler(_AgentHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        self.reply(SessionList, {"sessions": self.agent.sessions.list()})

    @tornado.web.authenticated
    def post(self) -> None:
        body = self.body(CreateSessionRequest)
        session = self.agent.sessions.create(title=body.title, model=body.model or "")
        self.reply(SessionRecord, session.record.public(), status=201)


class SessionHandler(_AgentHandler):
    @tornado.web.authenticated
    async def get(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        self.reply(SessionDetail, {**session.record.public(), "last_seq": session.last_seq})

    @tornado.web.authenticated
    async def patch(self, session_id: str) -> None:
        body = self.body(RenameSessionRequest)
        await self.session_or_404(session_id)
        self.reply(SessionRecord, await self.agent.sessions.rename(session_id, body.title))

    @tornado.web.authenticated
    async def delete(self, session_id: str) -> None:
        await self.session_or_404(session_id)
        await self.agent.sessions.delete(session_id)
        self.set_status(204)
        self.finish()


def _unsaved_paths(body: UndoRequest) -> frozenset[str]:
    """The contents paths the tab has open with unsaved changes (an undo must not write under them)."""
    return frozenset(path.lstrip("/") for path in body.unsaved)


class _UndoHandler(_AgentHandler):
    """Undo, restore and redo: all or nothing; a conflict answers 409 with the cells and files concerned."""

    async def answer(self, action: Callable[[], Awaitable[UndoResult]]) -> None:
        try:
            result = await action()
        except (NothingToUndo, NothingToRedo) as error:
            raise RestError("nothing_to_undo", error) from None
        except TurnAlreadyRunning as error:
            raise RestError("turn_running", error) from None
        except UndoConflicts as error:
            conflicts = [{"path": c.path, "cell_id": c.cell_id, "reason": c.reason} for c in error.conflicts]
            raise RestError("undo_conflicts", error.args[0], extra={"conflicts": conflicts}) from None
        except ToolError as error:  # e.g. the tab holding the notebook went away while the undo applied
            raise RestError("document_unavailable", error.message) from None
        self.reply(
            UndoReply, {"restored": result.restored, "turn_ids": result.turn_ids, "paths": result.paths}
        )


class SessionUndoHandler(_UndoHandler):
    """``POST .../undo`` ``{"unsaved"?}``: restore the files and notebook cells the last turn changed."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        unsaved = _unsaved_paths(self.body(UndoRequest))
        await self.answer(lambda: session.undo_last_turn(unsaved))


class SessionRestoreHandler(_UndoHandler):
    """``POST .../restore`` ``{"turn_id", "unsaved"?}``: back to the checkpoint before that turn (it and every
    later turn undone)."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body(RestoreRequest)
        unsaved = _unsaved_paths(body)
        await self.answer(lambda: session.restore(body.turn_id, unsaved))


class SessionRedoHandler(_UndoHandler):
    """``POST .../redo`` ``{"unsaved"?}``: re-do the last undo or restore."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        unsaved = _unsaved_paths(self.body(UndoRequest))
        await self.answer(lambda: session.redo(unsaved))


class SessionUndoCellHandler(_AgentHandler):
    """``POST .../undo-cell`` ``{"path", "cell_id"}``: undo what the last turn did to one cell."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body(UndoCellRequest)
        try:
            restored = await session.undo_cell(body.path, body.cell_id)
        except NothingToUndo as error:
            raise RestError("nothing_to_undo", error) from None
        except TurnAlreadyRunning as error:
            raise RestError("turn_running", error) from None
        except ToolError as error:
            raise RestError("document_unavailable", error.message) from None
        self.reply(UndoReply, {"restored": restored})


class SessionKeepCellHandler(_AgentHandler):
    """``POST .../keep-cell`` ``{"path", "cell_id"}``: keep the agent's change to one cell (no undo takes it
    back any more)."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body(KeepCellRequest)
        self.reply(KeepCellReply, {"kept": session.keep_cell(body.path, body.cell_id)})


class SessionHunksHandler(_AgentHandler):
    """``GET .../hunks?path=P``: the last turn's changes to one file, hunk by hunk, between what it was before
    the turn and what it is on disk now (``[]`` when the turn did not change it); an open editor shows them
    for review."""

    @tornado.web.authenticated
    async def get(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        path = self.query(HunksQuery).path
        try:
            hunks = await session.file_hunks(path)
        except InvalidRequest as error:
            raise RestError("invalid_request", error) from None
        except ToolError as error:  # e.g. the file is no longer UTF-8 text
            raise RestError("document_unavailable", error.message) from None
        self.reply(HunksReply, {"path": path, "hunks": public_hunks(hunks)})


class SessionUndoHunkHandler(_AgentHandler):
    """``POST .../undo-hunk`` ``{"path", "hunk": {old_start, old_lines, new_start, new_lines}}``: undo one
    hunk of the last turn's change to a file; 409 (nothing changed) when its lines were edited since."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        body = self.body(UndoHunkRequest)
        try:
            restored = await session.undo_hunk(body.path, body.hunk)
        except InvalidRequest as error:
            raise RestError("invalid_request", error) from None
        except NothingToUndo as error:
            raise RestError("nothing_to_undo", error) from None
        except HunkConflict as error:
            raise RestError("hunk_conflict", error) from None
        except TurnAlreadyRunning as error:
            raise RestError("turn_running", error) from None
        except ToolError as error:
            raise RestError("document_unavailable", error.message) from None
        hunks = public_hunks(await session.file_hunks(body.path))
        self.reply(UndoHunkReply, {"restored": restored, "hunks": hunks})


class SessionEventsHandler(_AgentHandler):
    """``GET .../events?since=N``: the event log after N (what the WebSocket's ``resume`` replays)."""

    @tornado.web.authenticated
    async def get(self, session_id: str) -> None:
        session = await self.session_or_404(session_id)
        since = self.query(EventsQuery).since
        self.reply(EventsPage, {"events": session.events_since(since), "last_seq": session.last_seq})


class SessionExportHandler(_AgentHandler):
    """``GET .../export?format=markdown|json``: the conversation as a document (not JSON for markdown)."""

    @tornado.web.authenticated
    async def get(self, session_id: str) -> None:
        fmt = self.query(ExportQuery).format
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
            raise RestError("no_grants")
        return grants

    @tornado.web.authenticated
    def get(self) -> None:
        session_id = self.query(PermissionsQuery).session_id
        self.reply(PermissionsOverview, self._grants().overview(session_id))


RevokeRequest: TypeAdapter[RevokeSavedRequest | RevokeSessionRequest] = TypeAdapter(
    Annotated[RevokeSavedRequest | RevokeSessionRequest, Field(discriminator="kind")]
)


class PermissionsRevokeHandler(PermissionsHandler):
    @tornado.web.authenticated
    def post(self) -> None:
        body = self.body(RevokeRequest)
        grants = self._grants()
        if isinstance(body, RevokeSavedRequest):
            try:
                removed = grants.remove_saved(body.rule)
            except (OSError, PermissionsFileError) as error:
                raise RestError("permissions_file", error) from None
            session_id = None
        else:
            removed = grants.revoke_session(body.session_id, body.tool, body.subject)
            session_id = body.session_id
        if not removed:
            raise RestError("permission_not_found")
        self.reply(PermissionsOverview, grants.overview(session_id))


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
        elif command.type == "run_plan":
            session.run_plan(command.path, command.mode, command.context, command.model)
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
