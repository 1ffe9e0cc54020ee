"""Approvers for the command line: ``--approve all|none|ask``."""

from __future__ import annotations

import asyncio
import json
import sys

from ..permissions.approval import ApprovalReply, ApprovalRequest, Approver, FixedApprover


class TerminalApprover:
    """Asks on the terminal. Without a TTY nobody can answer, so the call is declined, saying why."""

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        if not sys.stdin.isatty():
            return ApprovalReply.nobody_to_ask("approval needed but stdin is not a terminal")
        arguments = json.dumps(request.arguments, ensure_ascii=False)
        prompt = f"\n{request.tool} {arguments}\n  {'; '.join(request.reasons)}\nAllow? [y/N] "
        answer = await asyncio.to_thread(_ask, prompt)
        if answer.strip().lower() in {"y", "yes"}:
            return ApprovalReply(approved=True)
        return ApprovalReply(approved=False, reason="declined at the terminal")


def _ask(prompt: str) -> str:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return sys.stdin.readline()


def approver_for(mode: str) -> Approver:
    if mode == "all":
        return FixedApprover(True)
    if mode == "none":
        return FixedApprover(False, reason="the command line was run with --approve none")
    return TerminalApprover()
