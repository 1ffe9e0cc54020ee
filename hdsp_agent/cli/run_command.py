"""``hdsp-agent run -p PROMPT``: the same agent loop as the sidebar, headless (MCP servers included).

Prints the reply as it streams (tool activity on stderr), or with ``--json`` every event as one JSON line —
the same events the sidebar receives. Exit 0 when the turn completed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..agent.store import SessionStore
from ..assembly import assemble
from ..config import HdspAgentConfig, load_cli_config
from ..permissions.approval import ApprovalReply, ApprovalRequest, Approver
from ..permissions.broker import ApprovalBroker
from ..tools.base import ToolContext
from ..tools.jupyter.headless import headless_jupyter
from .approvers import approver_for
from .mcp_servers import mcp_servers


def add_parser(commands: Any) -> None:
    run = commands.add_parser("run", help="run the agent on one prompt, headless")
    run.add_argument("-p", "--prompt", required=True, help="the user's message")
    run.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: cwd)")
    run.add_argument("--notebook", help="the notebook the prompt is about (tools default to it)")
    run.add_argument("--model", help="model name (default: the configured one)")
    run.add_argument(
        "--base-url", help="OpenAI-compatible endpoint (default: configured, then $OPENAI_BASE_URL)"
    )
    run.add_argument(
        "--approve", choices=("ask", "all", "none"), default="ask", help="how to answer approvals"
    )
    run.add_argument("--json", action="store_true", help="print every event as a JSON line")
    run.set_defaults(handler=run_prompt)


class _DelegatingBroker(ApprovalBroker):
    """The session's broker, answering through a command-line approver instead of a browser."""

    def __init__(self, approver: Approver) -> None:
        super().__init__()
        self.approver = approver

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        return await self.approver.request_approval(request)


def run_prompt(args: argparse.Namespace) -> int:
    if not args.root.is_dir():
        print(f"hdsp-agent: --root {args.root} is not a directory", file=sys.stderr)
        return 2
    config = load_cli_config()
    if (args.model or args.base_url) and config.admin_fixed & {"model", "base_url"}:
        # The same floor as the sidebar's: a flag must not send the admin's conversation elsewhere.
        print(
            "hdsp-agent: the model is set by the administrator (hdsp_agent/admin.json); "
            "--model and --base-url cannot change it",
            file=sys.stderr,
        )
        return 2
    if args.model:
        config.model = args.model
    if args.base_url:
        config.base_url = args.base_url
    return asyncio.run(_run(args, config))


async def _run(args: argparse.Namespace, config: HdspAgentConfig) -> int:
    root = args.root.resolve()
    approver = approver_for(args.approve)
    audit = config.open_audit_log()
    # Jupyter's managers without a server, so the notebook tools read, edit and run notebooks as in the
    # sidebar; the kernels they start are shut down when the run ends.
    async with headless_jupyter(root) as jupyter:
        built = assemble(
            config,
            root,
            lambda **overrides: ToolContext(
                root_dir=root,
                kernel_manager=jupyter.kernel_manager,
                session_manager=jupyter.session_manager,
                contents_manager=jupyter.contents_manager,
                **overrides,
            ),
            broker_factory=lambda emit: _DelegatingBroker(approver),
            # The server's audit log and the day's token count: a run inside the user's server is one more
            # door to the same model, under the same quotas.
            audit=audit,
            quotas=config.open_quotas(),
        )
        runtime = built.runtime
        context = {"active_document": {"path": args.notebook}} if args.notebook else {}
        async with mcp_servers(runtime.registry, root, config) as servers:
            # As in the server: a server starts when the policy allows it (mcp_start_server, which asks
            # unless a rule allows it); the full profile lists at the turn's start those that may start.
            servers.attach(runtime)
            with tempfile.TemporaryDirectory(prefix="hdsp-agent-run-") as scratch:
                manager = built.conversations(SessionStore(Path(scratch) / "sessions.sqlite3"))
                session = manager.create(title=args.prompt[:60])
                printer = _JsonPrinter() if args.json else _TextPrinter()
                session.subscribe(printer)
                session.send(args.prompt, context)
                await session.wait()
                await manager.shutdown()
        await built.aclose()
    if audit is not None:
        audit.close()
    return 0 if printer.end_reason == "completed" else 1


class _JsonPrinter:
    end_reason: str | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        if event["type"] == "turn.end":
            self.end_reason = event["reason"]
        sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
        sys.stdout.flush()


class _TextPrinter:
    end_reason: str | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "assistant.delta" and event["kind"] == "text":
            sys.stdout.write(event["text"])
            sys.stdout.flush()
        elif kind == "tool.status" and event["status"] in (
            "calling",
            "done",
            "errored",
            "denied",
            "canceled",
        ):
            detail = f": {event['error']['message']}" if event.get("error") else ""
            sys.stderr.write(f"\n[{event['name']} {event['status']}{detail}]\n")
        elif kind == "error":
            sys.stderr.write(f"\nerror {event['code']}: {event['message']}\n")
        elif kind == "answer.numbers":
            unfound = [mark["text"] for mark in event["marks"] if not mark["found"]]
            if unfound:
                sys.stderr.write(f"\n[not found in any output: {', '.join(unfound)}]\n")
        elif kind == "turn.end":
            self.end_reason = event["reason"]
            if event["reason"] != "completed" and event.get("message"):
                sys.stderr.write(f"\n[{event['reason']}] {event['message']}\n")
            sys.stdout.write("\n")
