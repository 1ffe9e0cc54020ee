"""``hdsp-agent policy check`` and ``hdsp-agent policy show``: the permission policy from a shell.

``check TOOL ARGS_JSON`` prints the decision the server would make for that call, as one JSON object
(``decision``, ``level``, ``reasons``, ``rule``, ``run_mode`` — how a shell command would run, null for
other tools — and ``sandbox``, the OS sandbox layer in force); without ARGS_JSON it reads JSON Lines of
arguments from stdin and prints one decision per line. Tools that are not registered here are still decided,
from their name and arguments (the tools' own facts, read by ``permissions/defaults.py``). ``show`` prints
the rules in force and where each comes from.

Exit codes: 0 decided (whatever the decision), 2 a usage error (invalid JSON, unreadable rules, bad --root).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..assembly import assemble
from ..config import load_cli_config
from ..permissions.decision import LEVEL_FOR_DECISION
from ..permissions.defaults import default_level, derive_action, read_tools
from ..permissions.policy import MODES, RulePolicy
from ..permissions.rules import RuleError
from ..tools.args import validate_arguments
from ..tools.base import PermissionAction, ToolContext, ToolError
from ..tools.registry import ToolRegistry

EXIT_OK = 0
EXIT_USAGE = 2


class _UsageError(Exception):
    pass


def add_parser(commands: Any) -> None:
    policy = commands.add_parser(
        "policy", help="see what the permission policy decides for a call, or its rules"
    )
    actions = policy.add_subparsers(dest="action", required=True, metavar="ACTION")

    check = actions.add_parser("check", help="print the decision for a call: allow, ask or deny, and why")
    check.add_argument("tool", help="tool name, registered or not (e.g. run_terminal_command, read_file)")
    check.add_argument(
        "arguments", nargs="?", help="the arguments as a JSON object; omitted: JSON Lines on stdin"
    )
    _common_options(check)
    check.add_argument("--mode", choices=MODES, help="decide as in this mode (not saved)")
    check.set_defaults(handler=check_policy)

    show = actions.add_parser("show", help="print the rules in force and where each comes from")
    _common_options(show)
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.set_defaults(handler=show_policy)


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: cwd)")
    parser.add_argument(
        "--permissions-file", type=Path, help="the user's rules file (default: the configured one)"
    )


def _load(args: argparse.Namespace) -> tuple[RulePolicy, ToolRegistry, Path] | None:
    """The policy and the tools as the server would build them for ``--root`` (``assembly.py``)."""
    if not args.root.is_dir():
        print(f"hdsp-agent: --root {args.root} is not a directory", file=sys.stderr)
        return None
    root = args.root.resolve()
    try:
        built = assemble(
            load_cli_config(),
            root,
            lambda **overrides: ToolContext(root_dir=root, **overrides),
            permissions_file=args.permissions_file,
        )
    except RuleError as error:
        print(f"hdsp-agent: {error}", file=sys.stderr)
        return None
    return built.rule_policy, built.registry, root


def check_policy(args: argparse.Namespace) -> int:
    loaded = _load(args)
    if loaded is None:
        return EXIT_USAGE
    policy, registry, root = loaded
    if args.mode:
        policy.set_mode(args.mode, session_id="")
    if args.arguments is not None:
        try:
            print(
                json.dumps(
                    decide(policy, registry, args.tool, _arguments(args.arguments), root), ensure_ascii=False
                )
            )
        except _UsageError as error:
            print(f"hdsp-agent: {error}", file=sys.stderr)
            return EXIT_USAGE
        return EXIT_OK
    failed = False
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            answer = decide(policy, registry, args.tool, _arguments(line), root)
        except _UsageError as error:
            failed = True
            answer = {"error": f"line {number}: {error}"}
        print(json.dumps(answer, ensure_ascii=False), flush=True)
    return EXIT_USAGE if failed else EXIT_OK


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise _UsageError(f"the arguments are not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise _UsageError('the arguments must be a JSON object, e.g. \'{"command": "ls"}\'')
    return value


def decide(
    policy: RulePolicy, registry: ToolRegistry, tool_name: str, arguments: dict[str, Any], root: Path
) -> dict[str, Any]:
    """The decision as ``policy check`` prints it; a registered tool reports its own action (as in the
    executor)."""
    tool = registry.get(tool_name)
    action: PermissionAction | None
    if tool is not None:
        try:
            validated = validate_arguments(tool.args_model, arguments)
        except ToolError as error:
            raise _UsageError(f"invalid arguments for {tool_name}: {error.message}") from None
        try:
            action = tool.permission(validated, ToolContext(root_dir=root))
        except Exception:
            # The tool refuses the path itself (outside the root) or needs the server's managers to say what
            # it does: the policy decides from the defaults table, with its own path and command checks.
            action = derive_action(tool_name, arguments, root)
        decision = policy.check(
            tool_name, validated.model_dump(mode="json"), action, root, read_only=tool.read_only
        )
    else:
        decision = policy.check(tool_name, arguments, derive_action(tool_name, arguments, root), root)
    return {
        "decision": decision.decision,
        "level": decision.level,
        "reasons": decision.reasons,
        "rule": decision.rule,
        "run_mode": decision.run_mode,
        "sandbox": policy.sandbox.layer if policy.sandbox is not None else None,
    }


def show_policy(args: argparse.Namespace) -> int:
    loaded = _load(args)
    if loaded is None:
        return EXIT_USAGE
    policy, registry, _root = loaded
    defaults: dict[str, list[str]] = {level: [] for level in LEVEL_FOR_DECISION.values()}
    for name in sorted(set(registry.names()) | read_tools() | _table_tools()):
        tool = registry.get(name)
        level, _why = default_level(name, tool.read_only if tool is not None else None)
        defaults[LEVEL_FOR_DECISION[level]].append(name)
    file_path = policy.permissions_file.path if policy.permissions_file else None
    report = {
        "mode": policy.mode,
        "mode_source": "user file" if policy.user.mode in MODES else "admin default (permission_mode)",
        "sandbox": policy.sandbox.public() if policy.sandbox is not None else None,
        "permissions_file": str(file_path) if file_path else None,
        "permissions_file_exists": bool(file_path and file_path.is_file()),
        "rules": policy.effective_rules(),
        "defaults": defaults,
        "problems": policy.problems,
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(_as_text(report))
    return EXIT_OK


def _table_tools() -> set[str]:
    from ..permissions.defaults import table_tools

    return set(table_tools())


def _sandbox_line(sandbox: dict[str, Any] | None) -> str:
    if sandbox is None:
        return "Sandbox: unknown"
    required = ", required by the administrator" if sandbox["required"] else ""
    return f"Sandbox: {sandbox['layer']}{required} — {sandbox['reason']}"


def _as_text(report: dict[str, Any]) -> str:
    exists = "" if report["permissions_file_exists"] else " (not created yet)"
    lines = [
        f"Mode: {report['mode']} (from the {report['mode_source']})",
        _sandbox_line(report["sandbox"]),
        f"User rules file: {report['permissions_file']}{exists}",
        "",
        "Rules, in order of precedence (admin floor, then deny, ask, allow):",
    ]
    rules = report["rules"] or []
    width = max((len(row["level"]) for row in rules), default=0)
    lines += [f"  {row['level']:<{width}}  {row['rule']}    [{row['source']}]" for row in rules] or [
        "  (none)"
    ]
    lines += ["", "Defaults when no rule matches (source: defaults):"]
    for level, names in report["defaults"].items():
        lines.append(f"  {level}: {', '.join(names) or '-'}")
    lines.append("  MCP tools (server__tool) and unknown tools: allowedWithPermission")
    lines.append("  run_terminal_command: decided per part of the command by the shell analysis")
    if report["problems"]:
        lines += [
            "",
            "Problems (these entries are ignored):",
            *[f"  {problem}" for problem in report["problems"]],
        ]
    return "\n".join(lines)
