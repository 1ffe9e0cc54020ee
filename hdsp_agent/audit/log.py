"""One JSON object per line for every tool call (its decision, who approved and how) and every model call (the
model and its token counts), in ``<jupyter data dir>/hdsp_agent/audit.jsonl`` of the user's server.

Rotation is bounded and by size: the standard library's ``RotatingFileHandler`` keeps ``audit.jsonl`` under
``max_bytes`` and at most ``backups`` older files (``audit.jsonl.1`` the newest of them), so the log never
takes more than ``(backups + 1) * max_bytes`` of the user's disk. Writes are whole lines, flushed at once.

What is written is for the administrator and the user, never for the model: arguments are cut to a few hundred
characters, tool output is not written at all, and keys never reach it (they never reach a tool either).
"""

from __future__ import annotations

import getpass
import json
import logging
import logging.handlers
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..permissions.approval import ApprovalReply
    from ..permissions.decision import PolicyDecision
    from ..tools.base import ToolCall, ToolResult

AUDIT_FILENAME = "audit.jsonl"
ARGUMENT_CHARS = 500
# ``approval.by`` of a call refused because no person could be asked (no sidebar connected, no terminal).
NO_ONE_TO_ASK = "no one to ask"

# What a pipeline hands the log: one finished record (``ToolExecutor(on_audit=...)``).
AuditSink = Callable[[dict[str, Any]], None]


def server_user() -> str:
    """Whose server this is: the hub's user name when spawned by JupyterHub, else the OS user."""
    return os.environ.get("JUPYTERHUB_USER") or getpass.getuser()


def cut_arguments(arguments: Any) -> str:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, default=str)
    return text if len(text) <= ARGUMENT_CHARS else text[:ARGUMENT_CHARS] + f"... ({len(text):,} chars)"


class AuditTrail:
    """What the pipeline learned about one call, turned into its audit record when the call is finished."""

    def __init__(self, call: ToolCall, session_id: str) -> None:
        self.call = call
        self.session_id = session_id
        self.decision: PolicyDecision | None = (
            None  # None: refused before the policy (unknown tool, bad args)
        )
        self.approval: dict[str, Any] | None = None

    def decided(self, decision: PolicyDecision) -> None:
        self.decision = decision
        if decision.decision != "ask":
            # Nobody was asked: the policy allowed or denied (by a rule, a grant or the tool's default).
            self.approval = {"by": "policy", "approved": decision.decision == "allow", "rule": decision.rule}

    def answered(self, reply: ApprovalReply, *, by_person: bool) -> None:
        self.approval = {
            "by": server_user() if by_person else NO_ONE_TO_ASK,
            "approved": reply.approved,
            "scope": reply.scope,
            **({"reason": reply.reason} if reply.reason else {}),
        }

    def record(self, result: ToolResult) -> dict[str, Any]:
        decision = self.decision
        return {
            "event": "tool_call",
            "session": self.session_id,
            "call_id": self.call.id,
            "tool": self.call.name,
            "arguments": cut_arguments(self.call.arguments or ""),
            "decision": decision.decision if decision else None,
            "rule": decision.rule if decision else None,
            "reasons": decision.reasons[:3] if decision else [],
            "approval": self.approval,
            "status": result.status,
            "error_code": result.error.code if result.error else None,
        }


class AuditLog:
    """Appends records as JSON lines, rotating by size; safe from any thread, never raises to callers."""

    def __init__(self, path: Path, *, max_bytes: int = 5 * 1024 * 1024, backups: int = 5) -> None:
        self.path = path
        self.user = server_user()
        self._lock = threading.Lock()
        self._handler: logging.handlers.RotatingFileHandler | None = None
        self._max_bytes = max(1024, max_bytes)
        self._backups = max(1, backups)
        self.failures = 0

    def _open(self) -> logging.handlers.RotatingFileHandler:
        if self._handler is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handler = _Handler(self, maxBytes=self._max_bytes, backupCount=self._backups)
            self._handler.setFormatter(logging.Formatter("%(message)s"))
        return self._handler

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps({"ts": time.time(), "user": self.user, **record}, ensure_ascii=False, default=str)
        entry = logging.LogRecord("hdsp_agent.audit", logging.INFO, __file__, 0, line, None, None)
        with self._lock:
            try:
                self._open().emit(entry)  # emit() rotates first when the line would pass max_bytes
            except OSError:  # the directory cannot be made
                self.failed()

    def failed(self) -> None:
        # A full disk must not stop the agent; it shows in the server log.
        self.failures += 1
        logging.getLogger("hdsp_agent").warning("hdsp-agent: could not write the audit log %s", self.path)

    __call__ = write

    def close(self) -> None:
        with self._lock:
            if self._handler is not None:
                self._handler.close()
                self._handler = None


def audit_files(path: Path) -> list[Path]:
    """The log and its rotated files, oldest first."""
    rotated = sorted(
        (candidate for candidate in path.parent.glob(path.name + ".*") if candidate.suffix[1:].isdigit()),
        key=lambda candidate: int(candidate.suffix[1:]),
        reverse=True,
    )
    return rotated + ([path] if path.exists() else [])


class _Handler(logging.handlers.RotatingFileHandler):
    def __init__(self, log: AuditLog, **options: Any) -> None:
        super().__init__(log.path, encoding="utf-8", **options)
        self._log = log

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        self._log.failed()
