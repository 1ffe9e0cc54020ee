"""What the user's approvals leave behind: grants for the session, and "always allow" rules in a file.

The policy notes, for every call it answers ``ask``, which session asked and what the call was about (its rule
subject). When the user's reply arrives through the ``ApprovalBroker`` (its ``on_reply`` hook), ``GrantStore``
turns it into:

- ``once``: nothing but a count: after the second approval of the same tool on the same subject (notebook,
  file, exact command) in one session, the policy offers that session grant on the next card
  (``GrantStore.approvals``, ``PolicyDecision.offer_session``);
- ``session``: the same tool with the same subject is allowed for the rest of that session (in memory only);
- ``always``: the same, plus an allow rule saved in the user's ``permissions.json``: ``tool(subject)``, or
  for file and notebook writes, when the user chose it, ``tool(folder/**)`` or the bare ``tool``
  (``rule_for_scope``).

The sidebar's "Permissions" view lists both (``GrantStore.overview``) and removes them (``revoke_session``,
``remove_saved``).

Grants never turn a deny into an allow; the policy consults them after every deny (see ``policy.py``).

The file lives in ``jupyter_config_dir()/hdsp_agent/permissions.json`` unless a path is given; it is written
atomically (a temporary file in the same directory, then ``os.replace``) and never at import time.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .approval import ApprovalReply, ApprovalRequest, RuleScope
from .decision import DECISION_FOR_LEVEL
from .rules import glob_escape, rule_for_subject

PERMISSIONS_FILENAME = "permissions.json"
RULE_LISTS = ("deny", "ask", "allow")
_PENDING_LIMIT = 1024
# Only writes to files and notebooks may be allowed for a whole folder or everywhere: a shell command, a
# network fetch or a secret read is always saved for exactly what was approved.
BROAD_SCOPE_KINDS = frozenset({"FileWrite", "Kernel"})
log = logging.getLogger("hdsp_agent.permissions")


def default_permissions_path() -> Path:
    """The user's permissions file, next to their Jupyter configuration (honours ``JUPYTER_CONFIG_DIR``)."""
    from jupyter_core.paths import jupyter_config_dir

    return Path(jupyter_config_dir()) / "hdsp_agent" / PERMISSIONS_FILENAME


class PermissionsFileError(Exception):
    pass


@dataclass
class UserPermissions:
    """The user's side of the policy, as read from the file."""

    deny: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    mode: str | None = None
    problems: list[str] = field(default_factory=list)


class PermissionsFile:
    """``permissions.json``: ``{"mode": ..., "allow": [...], "ask": [...], "deny": [...], "tools": {name:
    level}}``.

    ``tools`` gives whole tools a level in Continue's words (``allowedWithoutPermission``,
    ``allowedWithPermission``, ``disabled``); it is the same as a bare rule in the matching list.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def stamp(self) -> tuple[int, int] | None:
        """Changes whenever the file does (so the policy re-reads a file the user edited by hand)."""
        try:
            status = self.path.stat()
        except OSError:
            return None
        return (status.st_mtime_ns, status.st_size)

    def load(self) -> UserPermissions:
        try:
            raw = self._read_raw()
        except PermissionsFileError as error:
            return UserPermissions(problems=[str(error)])
        loaded = UserPermissions()
        for name in RULE_LISTS:
            values = raw.get(name, [])
            if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
                loaded.problems.append(f"{self.path}: {name!r} must be a list of rule strings")
                continue
            getattr(loaded, name).extend(values)
        tools = raw.get("tools", {})
        if not isinstance(tools, dict):
            loaded.problems.append(f"{self.path}: 'tools' must map tool names to levels")
            tools = {}
        for tool_name, level in tools.items():
            decision = DECISION_FOR_LEVEL.get(str(level))
            if decision is None:
                loaded.problems.append(
                    f"{self.path}: unknown level {level!r} for {tool_name} "
                    f"(use one of {', '.join(DECISION_FOR_LEVEL)})"
                )
                continue
            getattr(loaded, decision).append(str(tool_name))
        mode = raw.get("mode")
        loaded.mode = mode if isinstance(mode, str) else None
        return loaded

    def add_rule(self, list_name: str, rule: str) -> None:
        """Append ``rule`` to ``list_name`` (``allow``/``ask``/``deny``) unless it is already there."""
        with self._lock:
            raw = self._read_raw()
            rules = raw.setdefault(list_name, [])
            if not isinstance(rules, list):
                raise PermissionsFileError(f"{self.path}: {list_name!r} is not a list; not changing the file")
            if rule not in rules:
                rules.append(rule)
                self._write(raw)

    def remove_rule(self, list_name: str, rule: str) -> bool:
        """Remove ``rule`` from ``list_name``; False when it is not there (nothing is written then)."""
        with self._lock:
            raw = self._read_raw()
            rules = raw.get(list_name)
            if not isinstance(rules, list) or rule not in rules:
                return False
            raw[list_name] = [existing for existing in rules if existing != rule]
            self._write(raw)
            return True

    def rules(self, list_name: str) -> list[str]:
        """The rule strings of one list as the file holds them (none when it cannot be read)."""
        try:
            values = self._read_raw().get(list_name, [])
        except PermissionsFileError:
            return []
        return [value for value in values if isinstance(value, str)] if isinstance(values, list) else []

    def set_mode(self, mode: str) -> None:
        with self._lock:
            raw = self._read_raw()
            raw["mode"] = mode
            self._write(raw)

    def _read_raw(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise PermissionsFileError(f"{self.path}: cannot be read ({error})") from None
        try:
            raw = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as error:
            raise PermissionsFileError(f"{self.path}: not valid JSON ({error}); fix or remove it") from None
        if not isinstance(raw, dict):
            raise PermissionsFileError(f"{self.path}: must hold a JSON object")
        return raw

    def _write(self, raw: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Written beside the target and renamed over it: a crash leaves the old file or the new one, never
        # half.
        handle = tempfile.NamedTemporaryFile(
            "w",
            encoding="utf-8",
            dir=self.path.parent,
            prefix=f".{self.path.name}.",
            suffix=".tmp",
            delete=False,
        )
        try:
            with handle:
                json.dump(raw, handle, indent=2, ensure_ascii=False)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(handle.name, self.path)
        except BaseException:
            Path(handle.name).unlink(missing_ok=True)
            raise


class SessionGrants:
    """Approvals "for this session": (tool, subject) pairs per session id, in memory."""

    def __init__(self) -> None:
        self._grants: dict[str, set[tuple[str, str]]] = {}

    def grant(self, session_id: str, tool_name: str, subject: str) -> None:
        self._grants.setdefault(session_id, set()).add((tool_name, subject.strip()))

    def allows(self, session_id: str, tool_name: str, subject: str) -> bool:
        return (tool_name, subject.strip()) in self._grants.get(session_id, set())

    def forget(self, session_id: str) -> None:
        self._grants.pop(session_id, None)

    def listed(self, session_id: str) -> list[tuple[str, str]]:
        return sorted(self._grants.get(session_id, set()))

    def revoke(self, session_id: str, tool_name: str, subject: str) -> bool:
        grants = self._grants.get(session_id, set())
        key = (tool_name, subject.strip())
        if key not in grants:
            return False
        grants.discard(key)
        return True


def rule_for_scope(tool_name: str, subject: str, scope: RuleScope, action_kind: str | None) -> str:
    """The allow rule an "always" approval saves: exactly this subject, everything in its folder, or the tool.

    A broader scope is honoured only for file and notebook writes (``BROAD_SCOPE_KINDS``) with a subject;
    anything else gets the exact rule whatever the client asked.
    """
    subject = subject.strip()
    if scope == "exact" or not subject or action_kind not in BROAD_SCOPE_KINDS:
        return rule_for_subject(tool_name, subject)
    if scope == "everywhere":
        return tool_name
    folder = os.path.dirname(subject.rstrip("/"))
    return f"{tool_name}({glob_escape(folder)}/**)" if folder else f"{tool_name}(**)"


@dataclass(frozen=True)
class _Asked:
    session_id: str
    tool_name: str
    subject: str


class GrantStore:
    """Turns approval replies into grants. ``record`` is the ``ApprovalBroker``'s ``on_reply`` hook."""

    def __init__(
        self, permissions_file: PermissionsFile | None, on_saved: Callable[[], None] | None = None
    ) -> None:
        self.permissions_file = permissions_file
        self.sessions = SessionGrants()
        self.on_saved = on_saved
        self._asked: OrderedDict[str, _Asked | None] = OrderedDict()
        # (session, tool, subject) → how many times the user approved it: what the scope offer counts.
        self._approved: dict[tuple[str, str, str], int] = {}
        # Saved rule → the session grants its "always" approvals made: removing the rule removes them too, or
        # the chat that approved it would go on without asking.
        self._granted_with: dict[str, set[_Asked]] = {}

    def approvals(self, session_id: str, tool_name: str, subject: str) -> int:
        """How many calls of ``tool_name`` on ``subject`` the user approved in this session."""
        return self._approved.get((session_id, tool_name, subject.strip()), 0)

    def forget_session(self, session_id: str) -> None:
        """The conversation was deleted: its grants, and what its unanswered calls asked about."""
        self.sessions.forget(session_id)
        self._approved = {key: n for key, n in self._approved.items() if key[0] != session_id}
        for granted in self._granted_with.values():
            granted.difference_update({asked for asked in granted if asked.session_id == session_id})
        mine = [call_id for call_id, asked in self._asked.items() if asked and asked.session_id == session_id]
        for call_id in mine:
            del self._asked[call_id]

    def note_ask(self, call_id: str, session_id: str, tool_name: str, subject: str) -> None:
        """Remember what call ``call_id`` asked about. A call id pending in two sessions at once is ambiguous
        and never granted (model call ids are not guaranteed unique across conversations)."""
        if not call_id:
            return
        asked = _Asked(session_id, tool_name, subject)
        previous = self._asked.get(call_id, asked)
        # Within one session a later call with the same id replaces the earlier one (calls run one at a time).
        self._asked[call_id] = asked if previous is not None and previous.session_id == session_id else None
        self._asked.move_to_end(call_id)
        while len(self._asked) > _PENDING_LIMIT:
            self._asked.popitem(last=False)

    def record(self, request: ApprovalRequest, reply: ApprovalReply) -> None:
        asked = self._asked.pop(request.call_id, None)
        if not reply.approved or asked is None or asked.tool_name != request.tool:
            return
        key = (asked.session_id, asked.tool_name, asked.subject.strip())
        self._approved[key] = self._approved.get(key, 0) + 1
        if reply.scope == "once":
            return
        self.sessions.grant(asked.session_id, asked.tool_name, asked.subject)
        if reply.scope != "always":
            return
        if self.permissions_file is None:
            log.warning(
                "hdsp-agent: 'always allow' for %s kept for this session only: no permissions file",
                request.tool,
            )
            return
        rule = rule_for_scope(asked.tool_name, asked.subject, reply.rule_scope, request.action_kind)
        try:
            self.permissions_file.add_rule("allow", rule)
        except (OSError, PermissionsFileError) as error:
            log.error(
                "hdsp-agent: could not save the rule %s (%s); it holds for this session only", rule, error
            )
            return
        self._granted_with.setdefault(rule, set()).add(asked)
        log.info("hdsp-agent: saved allow rule %s in %s", rule, self.permissions_file.path)
        if self.on_saved is not None:
            self.on_saved()

    # -- what the sidebar's Permissions view shows and removes
    # ---------------------------------------------------------------------------------------------------

    def overview(self, session_id: str | None) -> dict[str, Any]:
        """The grants of one conversation and the saved allow rules, for ``GET /hdsp-agent/permissions``."""
        file = self.permissions_file
        return {
            "session": [
                {"tool": tool, "subject": subject} for tool, subject in self.sessions.listed(session_id or "")
            ],
            "saved": file.rules("allow") if file is not None else [],
            "file": str(file.path) if file is not None else None,
        }

    def revoke_session(self, session_id: str, tool_name: str, subject: str) -> bool:
        return self.sessions.revoke(session_id, tool_name, subject)

    def remove_saved(self, rule: str) -> bool:
        """Remove a saved allow rule and the chat grants its approvals made; the policy re-reads the file at
        once."""
        if self.permissions_file is None or not self.permissions_file.remove_rule("allow", rule):
            return False
        for asked in self._granted_with.pop(rule, set()):
            self.sessions.revoke(asked.session_id, asked.tool_name, asked.subject)
        if self.on_saved is not None:
            self.on_saved()
        return True
