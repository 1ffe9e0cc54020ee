"""``hdsp-agent audit``: what the audit log says, summed up (tool calls by decision, approvals by who and how,
model calls and tokens by model), from the log and its rotated files."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .log import audit_files

_AGO = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: float | None = None) -> float:
    """``2h``, ``3d``, ``90m`` ago, or an ISO date/time (``2026-11-25``, ``2026-11-25T09:00``), local."""
    found = _AGO.match(text.strip())
    if found:
        return (now if now is not None else time.time()) - float(found.group(1)) * _UNIT_SECONDS[
            found.group(2)
        ]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        raise ValueError(
            f"--since {text!r}: use a duration such as 2h, 3d, 30m, or a date such as 2026-11-25"
        ) from None


def read_records(path: Path, since: float | None = None) -> Iterator[dict[str, Any]]:
    """Every record from ``since`` on, oldest first; a line that is not JSON (a torn write) is skipped."""
    for file in audit_files(path):
        with file.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict) and (since is None or float(record.get("ts", 0)) >= since):
                    yield record


@dataclass
class AuditSummary:
    first: float | None = None
    last: float | None = None
    users: Counter[str] = field(default_factory=Counter)
    tool_calls: Counter[tuple[str, str]] = field(default_factory=Counter)  # (tool, status)
    decisions: Counter[str] = field(default_factory=Counter)
    approvals: Counter[tuple[str, str]] = field(default_factory=Counter)  # (by, scope)
    model_calls: Counter[str] = field(default_factory=Counter)
    prompt_tokens: Counter[str] = field(default_factory=Counter)
    completion_tokens: Counter[str] = field(default_factory=Counter)
    refused_turns: Counter[str] = field(default_factory=Counter)

    def add(self, record: dict[str, Any]) -> None:
        ts = float(record.get("ts", 0))
        self.first = ts if self.first is None else min(self.first, ts)
        self.last = ts if self.last is None else max(self.last, ts)
        self.users[str(record.get("user", "?"))] += 1
        kind = record.get("event")
        if kind == "tool_call":
            self.tool_calls[(str(record.get("tool")), str(record.get("status")))] += 1
            self.decisions[str(record.get("decision") or "none")] += 1
            approval = record.get("approval") or {}
            if approval:
                self.approvals[(str(approval.get("by")), str(approval.get("scope") or "-"))] += 1
        elif kind == "model_call":
            model = str(record.get("model"))
            self.model_calls[model] += 1
            self.prompt_tokens[model] += int(record.get("prompt_tokens") or 0)
            self.completion_tokens[model] += int(record.get("completion_tokens") or 0)
        elif kind == "quota":
            self.refused_turns[str(record.get("code"))] += 1

    def public(self) -> dict[str, Any]:
        return {
            "from": self.first,
            "to": self.last,
            "users": dict(self.users),
            "tool_calls": [
                {"tool": tool, "status": status, "count": count}
                for (tool, status), count in sorted(self.tool_calls.items())
            ],
            "decisions": dict(self.decisions),
            "approvals": [
                {"by": by, "scope": scope, "count": count}
                for (by, scope), count in sorted(self.approvals.items())
            ],
            "models": [
                {
                    "model": model,
                    "calls": calls,
                    "prompt_tokens": self.prompt_tokens[model],
                    "completion_tokens": self.completion_tokens[model],
                }
                for model, calls in sorted(self.model_calls.items())
            ],
            "quota_refusals": dict(self.refused_turns),
        }

    def text(self) -> str:
        if self.first is None:
            return "No audit records in this period."
        when = f"{_stamp(self.first)} .. {_stamp(self.last or self.first)}"
        lines = [
            f"Audit {when}  users: {', '.join(sorted(self.users))}",
            "",
            "Tool calls (tool, status, count):",
        ]
        lines += [
            f"  {tool:<28} {status:<9} {count}" for (tool, status), count in sorted(self.tool_calls.items())
        ]
        lines += [
            "",
            "Decisions: " + ", ".join(f"{name} {count}" for name, count in sorted(self.decisions.items())),
        ]
        lines += [
            "Approvals (by, scope): "
            + ", ".join(f"{by}/{scope} {n}" for (by, scope), n in sorted(self.approvals.items()))
        ]
        lines += ["", "Model calls (model, calls, prompt tokens, completion tokens):"]
        lines += [
            f"  {model:<28} {calls:<6} {self.prompt_tokens[model]:<10} {self.completion_tokens[model]}"
            for model, calls in sorted(self.model_calls.items())
        ]
        if self.refused_turns:
            lines += [
                "",
                "Quota refusals: "
                + ", ".join(f"{code} {n}" for code, n in sorted(self.refused_turns.items())),
            ]
        return "\n".join(lines)


def summarize(records: Iterable[dict[str, Any]]) -> AuditSummary:
    summary = AuditSummary()
    for record in records:
        summary.add(record)
    return summary


def _stamp(ts: float) -> str:
    return datetime.fromtimestamp(ts).isoformat(timespec="seconds")
