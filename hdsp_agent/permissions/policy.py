"""The permission policy: every call is allowed, asked about or denied here, on the server, with reasons.

Order of precedence, for each part of a call (a shell command has one part per simple command):

1. the administrator's floor: tools in ``disabled_tools`` and the admin's deny rules → deny;
2. what the analysis denies outright (``rm -rf ~``, a write outside the root, a refused URL) → deny;
3. the user's deny rules → deny; read-only mode denies every tool that is not a read;
4. a write to a protected path (``protected.py``: ``.hdsp/``, git hooks, shell start-up files, secrets) and
   the administrator's ask rules → ask (nothing lifts them but the user's approval of that call);
5. a grant for this session (the user chose "allow for this session" for this very call) → allow;
6. the user's ask rules → ask;
7. allow rules (the user's, then the administrator's, and the URL allow-list) → allow, except that a caution
   (a secret file, a path outside the root, a command name known only at run time) stands unless the rule
   names this exact subject;
8. the default: the tool's level, or for shell commands what the analysis says of each part, made stricter by
   any caution; accept-edits mode lets file edits inside the root through; the run-in-view mode
   (``modes.RUN_IN_VIEW_MODE``) also lets ``run_cell`` on the notebook in view through, nothing else.

An ask that the user approved twice already (same tool, same subject) and that a grant for this session
would lift carries ``offer_session``: the approval card offers that grant in one click.

The whole call is as strict as its strictest part, so an allow rule for ``run_terminal_command(git*)`` never
allows ``git status; rm -rf ~``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ..sandbox.status import SandboxStatus
from ..tools.base import PermissionAction, PermissionKind, Tool, ToolContext
from ..user_text import user_text
from .decision import PolicyDecision
from .defaults import (
    default_level,
    edit_tools,
    is_read_tool,
    make_subject,
    read_tools,
    subject_kind,
    subject_text,
)
from .findings import Finding, allow, caution, deny, strictest
from .grants import GrantStore, PermissionsFile, UserPermissions, default_permissions_path
from .modes import (  # MODES, mode_filter re-exported: callers import them from here
    MODES,
    RUN_IN_VIEW_MODE,
    RUN_IN_VIEW_TOOLS,
    PermissionMode,
    accepts_edits,
    mode_filter,
)
from .paths import hard_link_reason, inspect_path, resolved_root
from .protected import admin_paths_from_config, write_protection
from .protected import configure as configure_protection
from .rules import Rule, RuleError, Subject, SubjectKind, parse_rules
from .run_mode import with_run_mode
from .shell.analyser import CommandAnalysis, analyze_command
from .urls import UrlAllowlist, check_url_syntax


@dataclass(frozen=True)
class AdminFloor:
    """The administrator's settings (traitlets): nobody below can loosen the deny and ask parts."""

    denied_tools: tuple[str, ...] = ()
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    allow: tuple[Rule, ...] = ()
    url_allowlist: tuple[str, ...] = ()
    mode: PermissionMode = "default"


@dataclass
class _Unit:
    """One thing to decide: a whole call, or one part of a shell command."""

    subject: Subject | None
    findings: list[Finding]
    label: str = ""


@dataclass
class _Outcome:
    decision: Literal["allow", "ask", "deny"]
    reasons: list[str] = field(default_factory=list)
    rule: str | None = None


class RulePolicy:
    """Implements ``PermissionPolicy``: the executor calls ``decide`` for every call."""

    def __init__(
        self,
        admin: AdminFloor,
        permissions_file: PermissionsFile | None = None,
        root_dir: Path | None = None,
        sandbox: SandboxStatus | None = None,
    ) -> None:
        self.admin = admin
        # The OS sandbox in force: decides shell commands' run modes; with none, only inert ones are allowed.
        self.sandbox = sandbox
        self.root_dir = root_dir
        self.permissions_file = permissions_file
        self.grants = GrantStore(permissions_file, on_saved=self.reload)
        self.user = UserPermissions()
        self.user_rules: dict[str, list[Rule]] = {"deny": [], "ask": [], "allow": []}
        self.problems: list[str] = []
        self._stamp: tuple[int, int] | None = None
        self._session_modes: dict[str, PermissionMode] = {}
        self._url_allowlist = UrlAllowlist.parse(list(admin.url_allowlist))
        self.reload()

    # -- configuration
    # -------------------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the user's permissions file again (also done automatically when it changes on disk)."""
        if self.permissions_file is None:
            return
        self._stamp = self.permissions_file.stamp()
        self.user = self.permissions_file.load()
        self.problems = list(self.user.problems)
        for name in ("deny", "ask", "allow"):
            rules, problems = parse_rules(getattr(self.user, name), "user")
            self.user_rules[name] = rules
            self.problems += [f"{self.permissions_file.path}: {problem}" for problem in problems]
        if self.user.mode is not None and self.user.mode not in MODES:
            self.problems.append(
                f"{self.permissions_file.path}: unknown mode {self.user.mode!r} (use {', '.join(MODES)})"
            )

    def _refresh(self) -> None:
        if self.permissions_file is not None and self.permissions_file.stamp() != self._stamp:
            self.reload()

    @property
    def mode(self) -> PermissionMode:
        """The mode in effect: the user's choice (saved in their file), else the administrator's default."""
        chosen = self.user.mode
        return chosen if chosen in MODES else self.admin.mode  # type: ignore[return-value]

    def mode_for(self, session_id: str) -> PermissionMode:
        return self._session_modes.get(session_id, self.mode)

    def set_mode(self, mode: str, session_id: str | None = None) -> None:
        """Switch modes: for one session, or for the user (saved in their permissions file)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        if session_id is not None:
            self._session_modes[session_id] = mode  # type: ignore[assignment]
        elif self.permissions_file is not None:
            self.permissions_file.set_mode(mode)
            self.reload()
        else:
            self.user.mode = mode

    async def forget_session(self, session_id: str) -> None:
        """The conversation was deleted: its "for this session" grants, pending asks and mode go with it."""
        self.grants.forget_session(session_id)
        self._session_modes.pop(session_id, None)

    def catalog_filter(self, tool: Tool[Any]) -> bool:
        """For ``AgentRuntime.catalog_filter``: the tools the current mode offers the model."""
        return mode_filter(self.mode)(tool)

    # -- deciding
    # ------------------------------------------------------------------------------------------------

    def decide(
        self, tool: Tool[Any], args: BaseModel, action: PermissionAction | None, ctx: ToolContext
    ) -> PolicyDecision:
        arguments = args.model_dump(mode="json")
        active = ctx.client_context.get("active_document") or {}
        in_view = active.get("path") if isinstance(active, dict) else None
        decision, subject = self._evaluate(
            tool.name,
            arguments,
            action,
            ctx.root_dir,
            ctx.session_id,
            tool.read_only,
            in_view=in_view if isinstance(in_view, str) else None,
        )
        if decision.decision == "ask":
            self.grants.note_ask(ctx.call_id, ctx.session_id, tool.name, subject or "")
        return decision

    def check(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        action: PermissionAction | None,
        root: Path,
        *,
        session_id: str = "",
        read_only: bool | None = None,
    ) -> PolicyDecision:
        """The decision for a call described by name and arguments (``hdsp-agent policy check``)."""
        return self._evaluate(tool_name, arguments, action, root, session_id, read_only)[0]

    def _evaluate(
        self,
        name: str,
        arguments: dict[str, Any],
        action: PermissionAction | None,
        root: Path,
        session_id: str,
        read_only: bool | None,
        in_view: str | None = None,
    ) -> tuple[PolicyDecision, str | None]:
        """``in_view``: the path of the document the user has in front of them (the sidebar's active one)."""
        self._refresh()
        subject_raw, field_name = subject_text(action, arguments)
        if any(fnmatchcase(name, denied) for denied in self.admin.denied_tools):
            return PolicyDecision(
                "deny", [user_text("%1 is disabled by the administrator", name)], name
            ), subject_raw
        mode = self.mode_for(session_id)
        if mode == "read-only" and not is_read_tool(name, read_only):
            return PolicyDecision(
                "deny", [user_text("read-only mode: %1 may change things", name)]
            ), subject_raw
        if mode == "plan" and not is_read_tool(name, read_only):
            return PolicyDecision(
                "deny",
                [
                    user_text(
                        "plan mode: %1 may change things; only reading is allowed until the user approves "
                        "the plan. Finish the plan as a checklist instead.",
                        name,
                    )
                ],
            ), subject_raw
        kind = subject_kind(action, field_name, name)
        units, analysis = self._units(name, kind, subject_raw, arguments, action, root, read_only)
        if mode == RUN_IN_VIEW_MODE and _runs_in_view(name, action, subject_raw, in_view, root):
            # The tool's default ask (the first finding); cautions found in the arguments stand.
            units[0].findings[0] = replace(units[0].findings[0], in_view=True)
        whole = Subject(kind, subject_raw) if kind is not None and subject_raw is not None else None
        granted = subject_raw is not None and self.grants.sessions.allows(session_id, name, subject_raw)
        outcomes = [self._settle(name, unit, whole, granted, mode) for unit in units]
        final = strictest((outcome.decision for outcome in outcomes), default="ask")
        reasons = [reason for outcome in outcomes if outcome.decision == final for reason in outcome.reasons]
        rule = next(
            (outcome.rule for outcome in outcomes if outcome.decision == final and outcome.rule), None
        )
        decision = PolicyDecision(final, list(dict.fromkeys(reasons)), rule)
        if kind == "command":
            decision = with_run_mode(decision, analysis, self.sandbox, granted=granted)
        if (
            decision.decision == "ask"
            and subject_raw is not None
            and not granted
            and self.grants.approvals(session_id, name, subject_raw) >= 2
            and self._grant_would_allow(name, units, whole, mode, kind, analysis)
        ):
            decision = replace(decision, offer_session=True)
        return decision, subject_raw

    def _grant_would_allow(
        self,
        name: str,
        units: list[_Unit],
        whole: Subject | None,
        mode: PermissionMode,
        kind: SubjectKind | None,
        analysis: CommandAnalysis | None,
    ) -> bool:
        """Whether a grant for this session would let this call through (a protected path or an
        administrator's ask rule still asks: then no grant is offered)."""
        outcomes = [self._settle(name, unit, whole, True, mode) for unit in units]
        final = strictest((outcome.decision for outcome in outcomes), default="ask")
        if kind == "command":
            final = with_run_mode(PolicyDecision(final), analysis, self.sandbox, granted=True).decision
        return final == "allow"

    def _units(
        self,
        name: str,
        kind: SubjectKind | None,
        subject_raw: str | None,
        arguments: dict[str, Any],
        action: PermissionAction | None,
        root: Path,
        read_only: bool | None,
    ) -> tuple[list[_Unit], CommandAnalysis | None]:
        if kind == "command" and subject_raw is not None:
            return self._command_units(subject_raw, arguments, root)
        level, why = default_level(name, read_only)
        editing = (action is not None and action.kind == PermissionKind.FILE_WRITE) or name in edit_tools()
        findings = [Finding(level, why, edit=editing and level == "ask")]
        findings += self._action_findings(name, kind, subject_raw, action, root)
        return [_Unit(make_subject(kind, subject_raw, root), findings)], None

    def _command_units(
        self, command: str, arguments: dict[str, Any], root: Path
    ) -> tuple[list[_Unit], CommandAnalysis]:
        units: list[_Unit] = []
        cwd = None
        working_directory = arguments.get("workingDirectory")
        if isinstance(working_directory, str) and working_directory.strip():
            facts = inspect_path(root, working_directory)
            if facts.resolved is None or not facts.inside:
                units.append(
                    _Unit(
                        None,
                        [caution(user_text("runs in %1, outside the project", working_directory))],
                        "workingDirectory",
                    )
                )
            cwd = facts.resolved
        analysis = analyze_command(command, root, cwd)
        for part in analysis.parts:
            subject = Subject("command", part.text.strip(), part.argv or None)
            units.append(_Unit(subject, list(part.findings), part.text.strip()))
        return units, analysis

    def _action_findings(
        self,
        name: str,
        kind: SubjectKind | None,
        subject_raw: str | None,
        action: PermissionAction | None,
        root: Path,
    ) -> list[Finding]:
        action_kind = action.kind if action is not None else None
        if kind == "url" and subject_raw is not None:
            verdict = check_url_syntax(subject_raw, self._url_allowlist)
            return (
                [] if verdict.allowed else [deny(user_text("%1 is refused: %2", subject_raw, verdict.reason))]
            )
        if kind != "path" or subject_raw is None:
            return []
        facts = inspect_path(root, subject_raw)
        if facts.problem or facts.resolved is None:
            return [deny(user_text("%1 is not a usable path: %2", repr(subject_raw), facts.problem))]
        if action_kind in (PermissionKind.FILE_WRITE, PermissionKind.FILE_DELETE):
            deleting = action_kind == PermissionKind.FILE_DELETE
            verb = user_text("deletes") if deleting else user_text("writes")
            protection = write_protection(facts.resolved, resolved_root(root), subject_raw, delete=deleting)
            if protection is not None and (protection.level == "deny" or facts.inside):
                return [protection.finding(verb, subject_raw)]
            if not facts.inside:
                return [deny(user_text("%1 %2, outside the project", verb, subject_raw))]
            if facts.git_internal:
                return [
                    caution(user_text("%1 %2, inside the repository's .git directory", verb, subject_raw))
                ]
            if facts.resolved == resolved_root(root):
                return [caution(user_text("%1 the project root itself", verb))]
            return (
                [caution(user_text("%1 %2, which may hold secrets", verb, subject_raw))]
                if facts.sensitive
                else []
            )
        if action_kind in (PermissionKind.FILE_READ, PermissionKind.FILE_READ_SENSITIVE) or (
            action is None and name in read_tools()
        ):
            if not facts.inside:
                return [caution(user_text("reads %1, outside the project", subject_raw))]
            if facts.sensitive:
                return [caution(user_text("reads %1, which may hold secrets", subject_raw))]
            if facts.hard_linked:
                return [caution(hard_link_reason(user_text("reads"), subject_raw))]
        return []

    def _settle(
        self, name: str, unit: _Unit, whole: Subject | None, granted: bool, mode: PermissionMode
    ) -> _Outcome:
        """Steps 1-8 of the module docstring for one unit."""

        def labeled(reason: str) -> str:
            # Which part of a shell command a reason is about: "git push: needs the network".
            return user_text("%1: %2", unit.label, reason) if unit.label else reason

        def matching(rules: tuple[Rule, ...] | list[Rule]) -> Rule | None:
            return next(
                (
                    r
                    for r in rules
                    if r.matches(name, unit.subject)
                    or (whole is not None and r.is_exact_for(whole) and r.covers_tool(name))
                ),
                None,
            )

        def because(
            decision: Literal["allow", "ask", "deny"], findings: list[Finding], rule: str | None = None
        ) -> _Outcome:
            # The risks first (a secret, a path outside), then the default they add to.
            ranked = sorted(findings, key=lambda f: not f.firm)
            chosen = [f.reason for f in ranked if f.decision == decision] or [f.reason for f in ranked]
            return _Outcome(decision, [labeled(reason) for reason in chosen], rule)

        if (rule := matching(self.admin.deny)) is not None:
            return _Outcome(
                "deny", [labeled(user_text("denied by the administrator's rule %1", rule.text))], rule.text
            )
        hard = [f for f in unit.findings if f.firm and f.decision == "deny"]
        if hard:
            return because("deny", hard)
        if (rule := matching(self.user_rules["deny"])) is not None:
            return _Outcome("deny", [labeled(user_text("denied by your rule %1", rule.text))], rule.text)
        protected = [f for f in unit.findings if f.protected]
        if protected:
            # Protected paths (protected.py): no rule, mode or grant lifts this; only the user's approval of
            # this very call does.
            return because("ask", protected)
        if (rule := matching(self.admin.ask)) is not None:
            return _Outcome(
                "ask", [labeled(user_text("the administrator's rule %1 always asks", rule.text))], rule.text
            )
        if granted:
            return _Outcome(
                "allow", [labeled(user_text("allowed for this session (you approved this call)"))]
            )
        if (rule := matching(self.user_rules["ask"])) is not None:
            return _Outcome("ask", [labeled(user_text("your rule %1 asks", rule.text))], rule.text)
        cautions = [f for f in unit.findings if f.firm and f.decision == "ask"]
        rule = matching(self.user_rules["allow"]) or matching(self.admin.allow) or self._allowlisted(unit)
        if rule is not None:
            exact = (
                unit.subject is not None
                and rule.is_exact_for(unit.subject)
                or (whole is not None and rule.is_exact_for(whole))
            )
            if cautions and not exact:
                return because("ask", cautions)
            allowed_by = (
                user_text("allowed by the administrator's rule %1", rule.text)
                if rule.source == "admin"
                else user_text("allowed by your rule %1", rule.text)
            )
            return _Outcome("allow", [labeled(allowed_by)], rule.text)
        findings = [
            allow(user_text("%1 (accept-edits mode)", f.reason))
            if accepts_edits(mode) and f.edit and f.decision == "ask"
            else allow(user_text("runs a cell of the notebook in view (accept edits and run mode)"))
            if mode == RUN_IN_VIEW_MODE and f.in_view and f.decision == "ask" and not f.firm
            else f
            for f in unit.findings
        ]
        decision = strictest((f.decision for f in findings), default="ask")
        return because(decision, findings)

    def _allowlisted(self, unit: _Unit) -> Rule | None:
        """The URL allow-list acts as the administrator's allow rule for the hosts it names."""
        if unit.subject is None or unit.subject.kind != "url" or not self.admin.url_allowlist:
            return None
        verdict = check_url_syntax(unit.subject.text, self._url_allowlist)
        if verdict.allowed and self._url_allowlist.admits_host(verdict.host):
            return Rule(f"url_allowlist: {verdict.host}", "*", None, "admin")
        return None

    # -- introspection
    # -------------------------------------------------------------------------------------------

    def effective_rules(self) -> list[dict[str, str]]:
        """Every rule in force with its level and source, strictest first (``hdsp-agent policy show``)."""
        rows: list[dict[str, str]] = []
        for tool_name in self.admin.denied_tools:
            rows.append({"rule": tool_name, "level": "disabled", "source": "admin (disabled_tools)"})
        source_file = str(self.permissions_file.path) if self.permissions_file else "user"
        for level, admin_rules, user_rules in (
            ("disabled", self.admin.deny, self.user_rules["deny"]),
            ("allowedWithPermission", self.admin.ask, self.user_rules["ask"]),
            ("allowedWithoutPermission", self.admin.allow, self.user_rules["allow"]),
        ):
            rows += [{"rule": r.text, "level": level, "source": "admin"} for r in admin_rules]
            rows += [{"rule": r.text, "level": level, "source": f"user ({source_file})"} for r in user_rules]
        for host in self.admin.url_allowlist:
            rows.append(
                {
                    "rule": f"fetch_url_content({host})",
                    "level": "allowedWithoutPermission",
                    "source": "admin (url_allowlist)",
                }
            )
        return rows


def _runs_in_view(
    name: str, action: PermissionAction | None, subject: str | None, in_view: str | None, root: Path
) -> bool:
    """Whether this call runs a cell of the notebook the user has in view: ``run_cell`` on that very
    notebook (never another notebook, a file, a shell command or code outside a cell)."""
    if name not in RUN_IN_VIEW_TOOLS or action is None or action.kind != PermissionKind.KERNEL:
        return False
    if not subject or not in_view or not in_view.endswith(".ipynb"):
        return False
    # JupyterLab prefixes paths on other drives ("RTC:"); the tools resolve them without it.
    drive, sep, rest = in_view.partition(":")
    if sep and "/" not in drive and rest:
        in_view = rest
    target, shown = inspect_path(root, subject), inspect_path(root, in_view.lstrip("/"))
    return target.resolved is not None and target.inside and target.resolved == shown.resolved


def build_policy(
    config: Any,
    root_dir: Path | None = None,
    permissions_file: Path | None = None,
    sandbox: SandboxStatus | None = None,
) -> RulePolicy:
    """The policy the server and the CLI use, from an ``HdspAgentConfig`` (the administrator's traits) and the
    user's permissions file (``permissions_file``, else the ``permissions_file`` trait, else the default
    path).

    An administrator's rule that cannot be read stops here with ``RuleError``: a floor that is silently
    ignored would be worse than a server that refuses to start.
    """
    admin_rules: dict[str, tuple[Rule, ...]] = {}
    for trait in ("deny_rules", "ask_rules", "allow_rules"):
        rules, problems = parse_rules(list(getattr(config, trait)), "admin")
        if problems:
            raise RuleError(f"HdspAgentApp.{trait}: " + "; ".join(problems))
        admin_rules[trait] = tuple(rules)
    admin = AdminFloor(
        denied_tools=tuple(config.disabled_tools),
        deny=admin_rules["deny_rules"],
        ask=admin_rules["ask_rules"],
        allow=admin_rules["allow_rules"],
        url_allowlist=tuple(config.url_allowlist),
        mode=config.permission_mode,
    )
    if permissions_file is None:
        configured = str(getattr(config, "permissions_file", "") or "")
        permissions_file = Path(configured).expanduser() if configured else default_permissions_path()
    # Protected paths and secret patterns are global to the process (every tool and the shell analyser ask
    # them); the policy the server or a CLI command builds installs the configured ones, including the
    # permissions file in use (it decides what the agent may do, so the agent never writes it).
    admin_paths, sensitive_patterns = admin_paths_from_config(config)
    admin_paths = replace(admin_paths, own_files=(*admin_paths.own_files, str(permissions_file)))
    configure_protection(admin_paths, sensitive_patterns)
    if sandbox is None:
        from ..sandbox.runner import sandbox_from_config

        sandbox = sandbox_from_config(config).status
    return RulePolicy(admin, PermissionsFile(permissions_file), root_dir, sandbox)
