"""One conversation: its messages, its numbered event log, its running turn, and the people watching it.

Every event gets the next sequence number, is kept in memory and written to the store, and is fanned out to
each subscriber (a browser tab, the headless CLI). A tab that reconnects asks for everything after the last
number it saw, so it misses nothing and sees nothing twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ..events import (
    ApprovalResolvedEvent,
    CellReviewedEvent,
    ErrorEvent,
    KernelChangesEvent,
    SessionUpdatedEvent,
    TurnEndEvent,
    TurnEndReason,
    TurnRedoneEvent,
    TurnStartEvent,
    TurnUndoneEvent,
    UserMessageEvent,
    VariableChangeInfo,
)
from ..permissions.approval import ApprovalReply
from ..tools.base import CancelToken, ToolContext, ToolError
from ..tools.profiles import tools_used
from ..tools.registry import ToolCatalog
from ..user_text import user_text
from .answer_numbers import turn_number_marks
from .hunks import Hunk, TurnFile, current_hunks, turn_file, undo_hunk
from .loop import AgentLoop, TurnOutcome
from .models import ModelNotConfigured
from .quotas import QuotaExceeded
from .runtime import AgentRuntime
from .store import SessionRecord, SessionStore
from .undo import NothingToUndo, UndoResult

Subscriber = Callable[[dict[str, Any]], None]
DEFAULT_TITLE = "New chat"
USER_STOPPED = user_text("stopped by the user")


class TurnAlreadyRunning(Exception):
    pass


class InvalidRequest(ValueError):
    """A client command the session cannot carry out as sent (e.g. an unknown mode)."""


class Conversation:
    def __init__(
        self,
        record: SessionRecord,
        store: SessionStore,
        runtime: AgentRuntime,
        *,
        events: list[dict[str, Any]] | None = None,
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        self.record = record
        self.store = store
        self.runtime = runtime
        self.events: list[dict[str, Any]] = events or []
        self.messages: list[dict[str, Any]] = messages or []
        self.broker = runtime.new_broker(self.emit)
        self._subscribers: list[Subscriber] = []
        self._turn: asyncio.Task[None] | None = None
        self._cancel: CancelToken | None = None
        self._interrupted = False
        self._change_mark = 0
        # Prefix sizes the user was already warned about (see AgentLoop), so the warning is not repeated.
        self._warned_prefixes: set[int] = set()
        # The context window of each model this conversation used, asked of its server once.
        self._windows: dict[int, int] = {}
        # Tools called in this conversation, by first use; kept when a compaction drops the calls (a tool
        # once used stays offered). After a restart it starts again from the stored messages.
        self._tools_in_use: dict[str, None] = {}
        self.log = logging.getLogger("hdsp_agent.session")

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def last_seq(self) -> int:
        return int(self.events[-1]["seq"]) if self.events else 0

    @property
    def running(self) -> bool:
        return self._turn is not None and not self._turn.done()

    # -- events ----------------------------------------------------------------------------------------------

    def emit(self, event: BaseModel) -> dict[str, Any]:
        envelope = {
            "seq": self.last_seq + 1,
            "session_id": self.id,
            "ts": time.time(),
            **event.model_dump(mode="json"),
        }
        self.events.append(envelope)
        self.store.append_event(self.id, envelope["seq"], envelope)
        for subscriber in list(self._subscribers):
            try:
                subscriber(envelope)
            except Exception:  # one broken tab must not stop the turn or the other tabs
                self.log.exception("hdsp-agent: a subscriber of session %s failed", self.id)
        return envelope

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    @property
    def watched(self) -> bool:
        """Whether someone (a sidebar tab, the headless CLI) is subscribed, i.e. could answer an approval."""
        return bool(self._subscribers)

    def events_since(self, seq: int) -> list[dict[str, Any]]:
        return [event for event in self.events if event["seq"] > seq]

    # -- turns -----------------------------------------------------------------------------------------------

    def send(self, content: str, context: dict[str, Any] | None = None, model: str | None = None) -> str:
        """Start a turn with the user's message; returns the turn id. One turn at a time per session."""
        if self.running:
            raise TurnAlreadyRunning("a turn is already running in this session; stop it or wait")
        turn_id = f"turn_{uuid.uuid4().hex[:12]}"
        context = context or {}
        if isinstance(context.get("mode"), str):
            try:
                self.runtime.set_mode(self.id, context["mode"])
            except ValueError as error:
                raise InvalidRequest(str(error)) from None
        self.emit(UserMessageEvent(turn_id=turn_id, content=content, context=context))
        self.messages.append({"role": "user", "content": content})
        self.store.save_messages(self.id, self.messages)
        if self.record.title == DEFAULT_TITLE and content.strip():
            self.record.title = _title_from(content)
        self._set_status("running")
        self._cancel = CancelToken()
        self.runtime.undo.mark(self.id, turn_id)  # the turn's checkpoint
        # Open documents this turn changes are settled at its end; other conversations' are theirs.
        mark = getattr(self.runtime.tool_context(session_id=self.id).notebook_gateway, "change_mark", None)
        self._change_mark = mark(self.id) if callable(mark) else 0
        self._turn = asyncio.create_task(self._run_turn(turn_id, context, model, self._cancel))
        return turn_id

    async def undo_last_turn(self, unsaved: frozenset[str] = frozenset()) -> UndoResult:
        """Restore every file and cell the last turn changed, all or nothing (``agent/undo.py``).

        Raises ``NothingToUndo`` when there is none, ``UndoConflicts`` when the user changed some of it since.
        """
        if self.running:
            raise TurnAlreadyRunning("stop the running turn before undoing it")
        result = await self.runtime.undo.undo_last(self.id, unsaved)
        await self._settle_documents(result.paths)
        self._tell_undone(result)
        return result

    async def restore(self, turn_id: str, unsaved: frozenset[str] = frozenset()) -> UndoResult:
        """Go back to the checkpoint before turn ``turn_id``: undo it and every later turn, all or nothing."""
        if self.running:
            raise TurnAlreadyRunning("stop the running turn before restoring a checkpoint")
        result = await self.runtime.undo.restore(self.id, turn_id, unsaved)
        await self._settle_documents(result.paths)
        self._tell_undone(result)
        return result

    async def redo(self, unsaved: frozenset[str] = frozenset()) -> UndoResult:
        """Re-do the last undo or restore, all or nothing; raises ``NothingToRedo`` or ``UndoConflicts``."""
        if self.running:
            raise TurnAlreadyRunning("stop the running turn before redoing")
        result = await self.runtime.undo.redo(self.id, unsaved)
        await self._settle_documents(result.paths)
        self.emit(TurnRedoneEvent(turn_ids=result.turn_ids, restored=result.restored, paths=result.paths))
        self._note(
            "The user redid what they had undone; these changes are back:\n" + "\n".join(result.restored)
        )
        return result

    def _tell_undone(self, result: UndoResult) -> None:
        self.emit(
            TurnUndoneEvent(
                turn_id=result.turn_ids[0],
                turn_ids=result.turn_ids,
                restored=result.restored,
                paths=result.paths,
            )
        )
        # Tell the model, so its next step does not assume the undone changes are still there.
        what = "the previous turn" if len(result.turn_ids) == 1 else f"the last {len(result.turn_ids)} turns"
        self._note(f"The user undid {what}. Restored:\n" + "\n".join(result.restored))

    def _note(self, text: str) -> None:
        self.messages.append({"role": "user", "content": f"(hdsp-agent note) {text}"})
        self.store.save_messages(self.id, self.messages)

    async def undo_cell(self, path: str, cell_id: str) -> list[str]:
        """Undo the last turn's changes to one cell (the review's per-cell "Undo"); the rest of the turn
        stays."""
        if self.running:
            raise TurnAlreadyRunning("stop the running turn before undoing its changes")
        # A cell's mark stays reviewable across later turns: its changes since the first checkpoint.
        mark = self.runtime.undo.first_mark(self.id)
        if mark is None:
            raise NothingToUndo("no turn to undo in this session (undo history does not survive a restart)")
        restored = await self.runtime.undo.undo_cell(self.id, mark, path, cell_id)
        await self._settle_documents([path])
        self.emit(CellReviewedEvent(path=path, cell_id=cell_id, outcome="undone"))
        self.messages.append(
            {
                "role": "user",
                "content": f"(hdsp-agent note) The user undid your change to cell {cell_id} of {path}. "
                "Restored:\n" + "\n".join(restored),
            }
        )
        self.store.save_messages(self.id, self.messages)
        return restored

    def keep_cell(self, path: str, cell_id: str) -> int:
        """The user keeps the agent's change to one cell (the review's per-cell "Keep"): final, so undo,
        undo-all and restore leave it; said in the event log, so a reloaded page shows it kept."""
        kept = self.runtime.undo.keep_cell(self.id, path, cell_id)
        self.emit(CellReviewedEvent(path=path, cell_id=cell_id, outcome="kept"))
        return kept

    def _turn_file(self, path: str) -> TurnFile | None:
        mark = self.runtime.undo.last_mark(self.id)
        if mark is None:
            return None
        try:
            root = self.runtime.tool_context().root_dir
            return turn_file(self.runtime.undo.file_state, self.id, mark.file_records, root, path)
        except ToolError as error:  # a path outside the project, or malformed
            raise InvalidRequest(error.message) from None

    async def file_hunks(self, path: str) -> list[Hunk]:
        """The last turn's changes to one file, hunk by hunk, as they are on disk now ([]: none to review)."""
        changed = self._turn_file(path)
        if changed is None:
            return []
        return await asyncio.to_thread(current_hunks, changed)

    async def undo_hunk(self, path: str, hunk: Hunk) -> list[str]:
        """Undo one hunk of the last turn's change to a file (the review's per-hunk "Undo"); the rest stays.
        ``HunkConflict`` when its lines changed since: nothing is overwritten."""
        if self.running:
            raise TurnAlreadyRunning("stop the running turn before undoing its changes")
        mark = self.runtime.undo.last_mark(self.id)
        if mark is None:
            raise NothingToUndo("no turn to undo in this session (undo history does not survive a restart)")
        changed = self._turn_file(path)
        if changed is None:
            raise NothingToUndo(f"the last turn did not change {path}")
        undone = await undo_hunk(changed, hunk)
        # The hunks kept still count as the agent's change: a later whole-turn undo checks the file against
        # what it holds now, and still restores what was there before the turn.
        file_state = self.runtime.undo.file_state
        records = [r for r in file_state.records(self.id)[mark.file_records :] if r.path == changed.path]
        if records and changed.path.is_file():
            file_state.amend_after(records[-1], hashlib.sha256(changed.path.read_bytes()).hexdigest())
        # What the model last read is gone: it must read the file again before editing it.
        self.runtime.undo.file_state.forget_read(self.id, changed.path)
        first, last = undone.new_start + 1, undone.new_start + len(undone.new_lines)
        where = f"line {first}" + (f"-{last}" if last > first else "")
        restored: list[str] = [
            user_text("%1: line %2 restored", changed.shown_as, first)
            if last <= first
            else user_text("%1: lines %2-%3 restored", changed.shown_as, first, last)
        ]
        self.messages.append(
            {
                "role": "user",
                "content": f"(hdsp-agent note) The user undid part of your change to {changed.shown_as} "
                f"({where}); the rest of it stays. Read the file again before editing it.",
            }
        )
        self.store.save_messages(self.id, self.messages)
        return restored

    async def _run_turn(
        self, turn_id: str, context: dict[str, Any], model: str | None, cancel: CancelToken
    ) -> None:
        outcome = TurnOutcome("error", user_text("the turn did not finish"))
        try:
            await self.runtime.models.discover()
            settings = self.runtime.model_settings(model or self.record.model or None)
            if id(settings) not in self._windows:
                self._windows[id(settings)] = await self.runtime.context_window(settings)
            window = self._windows[id(settings)]
            profile = self.runtime.profile(settings, window)
            self.emit(
                TurnStartEvent(turn_id=turn_id, model=settings.label, context_window=window, profile=profile)
            )
            client = self.runtime.model_client(settings)
            await self.runtime.resolve_tool_mode(settings)
            # Tools include images in their results only for a model that can read them.
            client_context = {**context, "vision": settings.vision}
            ctx = self.runtime.tool_context(
                session_id=self.id, cancel=cancel, emit=self.emit, client_context=client_context
            )
            loop_settings = self.runtime.loop_settings(settings, window)
            loop_settings.profile = profile
            loop = AgentLoop(
                client,
                self.runtime.executor(self.broker),
                loop_settings,
                self.emit,
                checkpoint=lambda: self.store.save_messages(self.id, self.messages),
                meter=self.runtime.usage_meter(settings, self.id),
                warned_prefixes=self._warned_prefixes,
                live_state=lambda: self._live_notebook_outline(ctx),
                load_tools=self.runtime.load_tools,
            )
            # Fixed for the turn: a tool loaded on demand and first used in this turn is offered from the
            # next one on, appended to the list, so the prefix stays byte-identical within a turn.
            for name in tools_used(self.messages):
                self._tools_in_use.setdefault(name, None)
            in_use = list(self._tools_in_use)
            # Full profile: MCP servers connect (once) and list their tools; others: only what is in use.
            await self.runtime.prepare_catalog(ctx, profile, self.messages, in_use)

            def catalog_for_step(messages: list[dict[str, Any]]) -> ToolCatalog:
                return self.runtime.catalog(ctx, profile, messages, in_use)

            self.runtime.quotas.start_turn()
            try:
                outcome = await loop.run_turn(
                    self.messages, self.runtime.system_prompt(ctx), ctx, catalog_for_step
                )
            finally:
                self.runtime.quotas.end_turn()
        except asyncio.CancelledError:
            reason: TurnEndReason = "interrupted" if self._interrupted else "canceled"
            outcome = TurnOutcome(reason, cancel.reason or reason)
            if not cancel.cancelled:
                raise  # the server is shutting down, not the user stopping the turn
        except QuotaExceeded as error:
            self.emit(ErrorEvent(code=error.code, message=error.message))
            if self.runtime.audit is not None:
                self.runtime.audit({"event": "quota", "session": self.id, "code": error.code})
            outcome = TurnOutcome("error", error.message)
        except ModelNotConfigured as error:
            setup_help = error.args[0] if error.args else str(error)  # a UserText, translatable
            self.emit(ErrorEvent(code="E_MODEL_NOT_CONFIGURED", message=setup_help))
            outcome = TurnOutcome("error", user_text("no model is configured"))
        except Exception as error:  # a bug must end the turn visibly, not leave it "running" forever
            self.log.exception("hdsp-agent: turn %s failed", turn_id)
            self.emit(
                ErrorEvent(
                    code="E_INTERNAL",
                    message=user_text("the turn failed: %1", f"{type(error).__name__}: {error}"),
                )
            )
            outcome = TurnOutcome("error", str(error))
        finally:
            self.broker.cancel_all("the turn ended")
            if not self._interrupted:  # the server is going away: it writes what no tab holds as it stops
                await self._settle_documents()
            if not self._interrupted:
                await self._report_kernel_changes(turn_id)
            if outcome.reason == "completed":
                self._tie_answer_numbers(turn_id)
            self.emit(TurnEndEvent(turn_id=turn_id, reason=outcome.reason, message=outcome.message))
            self.store.save_messages(self.id, self.messages)
            self._set_status("idle")

    async def _report_kernel_changes(self, turn_id: str) -> None:
        """The variables the turn's runs created, changed or deleted in each kernel, for the review bar."""
        try:
            changed = await self.runtime.state.notebooks.kernel_changes.end_turn(self.id)
        except Exception:  # a summary for the review must never keep the turn from ending
            self.log.exception("hdsp-agent: summarizing the kernel changes of turn %s failed", turn_id)
            return
        if changed:
            notebooks = {
                path: [VariableChangeInfo(**change) for change in rows] for path, rows in changed.items()
            }
            self.emit(KernelChangesEvent(turn_id=turn_id, notebooks=notebooks))

    def _tie_answer_numbers(self, turn_id: str) -> None:
        """Link each number of the final answer to the output it came from, or mark it found in none."""
        try:
            marks = turn_number_marks(self.events, turn_id)
        except Exception:  # a check of the answer must never keep the turn from ending
            self.log.exception("hdsp-agent: checking the numbers of turn %s failed", turn_id)
            return
        if marks is not None:
            self.emit(marks)

    async def _settle_documents(self, paths: list[str] | None = None) -> None:
        """Before the turn says it ended: the agent's unsaved changes to open notebooks are saved, left for
        the user (who has unsaved edits of their own there), or written to the file no tab holds any more
        (``LiveNotebooks.settle``). A change that could not be kept safe is said, not hidden behind "Done".

        ``paths``: the documents an undo or a redo changed, settled by the same rule, so the file holds what
        the tab shows unless the user has unsaved edits of their own there (a Discard, a restart or a crash
        would otherwise bring the undone change back)."""
        try:
            ctx = self.runtime.tool_context(session_id=self.id)
            settle = getattr(ctx.notebook_gateway, "settle", None)
            if settle is None or ctx.contents_manager is None:
                return
            outcomes = await settle(ctx.contents_manager, since=self._change_mark, paths=paths)
        except Exception:  # settling is a safety net: its own failure must not leave the turn "running"
            self.log.exception("hdsp-agent: settling the documents at the end of a turn failed")
            return
        for outcome in outcomes:
            if outcome.problem:
                self.emit(
                    ErrorEvent(
                        code="E_NOT_SAVED",
                        message=user_text(
                            "The agent's changes to %1 are not saved yet: %2", outcome.path, outcome.problem
                        ),
                    )
                )

    async def _live_notebook_outline(self, ctx: ToolContext) -> str | None:
        """The active notebook as read_notebook's brief outline (live, without outputs), for a compaction."""
        document = ctx.client_context.get("active_document") or {}
        path = document.get("path")
        tool = self.runtime.registry.get("read_notebook")
        if tool is None or not isinstance(path, str) or not path.endswith(".ipynb"):
            return None
        try:
            args = tool.args_model(path=path, include_outputs=False)
            output = await tool.run(args, ctx.for_call(f"compaction_{uuid.uuid4().hex[:8]}"))
        except Exception:  # the outline is a help, never a reason for the turn to fail
            self.log.debug("hdsp-agent: no notebook outline for the compaction", exc_info=True)
            return None
        return output if isinstance(output, str) else output.content

    async def cancel(self, reason: str = USER_STOPPED, *, interrupted: bool = False) -> None:
        """Stop the running turn: the model stream is aborted, running tools stopped, pending approvals
        canceled.

        ``interrupted``: the server is going away, not the user stopping; the turn is marked so.
        """
        if not self.running or self._cancel is None or self._turn is None:
            return
        self._interrupted = interrupted
        self._cancel.cancel(reason)
        self.broker.cancel_all(reason)
        self._turn.cancel()
        await asyncio.wait({self._turn}, timeout=15)

    async def wait(self) -> None:
        """Wait for the running turn (tests, headless runs)."""
        if self._turn is not None:
            await asyncio.wait({self._turn})

    def resolve_approval(self, call_id: str, reply: ApprovalReply) -> None:
        """Answer a pending approval. Raises KeyError for a call id this session is not waiting on."""
        self.broker.resolve(call_id, reply)
        self.emit(
            ApprovalResolvedEvent(
                call_id=call_id, approved=reply.approved, scope=reply.scope, reason=reply.reason
            )
        )

    # -- record ----------------------------------------------------------------------------------------------

    def rename(self, title: str) -> None:
        self.record.title = title.strip() or DEFAULT_TITLE
        self._set_status(self.record.status)

    def _set_status(self, status: str) -> None:
        self.record.status = status
        self.record.updated = time.time()
        self.store.upsert_session(self.record)
        self.emit(
            SessionUpdatedEvent(title=self.record.title, status="running" if status == "running" else "idle")
        )


def _title_from(content: str) -> str:
    line = content.strip().splitlines()[0]
    return line if len(line) <= 60 else line[:57] + "..."
