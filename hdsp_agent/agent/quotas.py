"""Per-server limits an administrator sets for each user: turns at once and model tokens per day.

On a hub every user has their own server, so these are per-user limits. They are checked on the server, at the
start of a turn (turns at once, tokens left) and before every model call of a turn (tokens left), where the
conversation's history is whole; a refusal is an ``error`` event the sidebar shows, and the turn ends.

Tokens are the model's reported usage when its stream carries one, else an estimate (4 characters a token) of
what was sent and received; the day's count is kept in ``usage.json`` beside the conversations, so a restart
does not reset it.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..user_text import user_text
from .context_budget import estimate_tokens

E_QUOTA_TURNS = "E_QUOTA_TURNS"
E_QUOTA_TOKENS = "E_QUOTA_TOKENS"


class QuotaExceeded(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _today() -> str:
    return time.strftime("%Y-%m-%d")


@dataclass
class Quotas:
    """The server's counters. ``max_turns``/``daily_tokens`` 0 mean no limit."""

    max_turns: int = 0
    daily_tokens: int = 0
    usage_path: Path | None = None
    running: int = 0
    _day: str = field(default_factory=_today)
    _tokens: int = 0

    def __post_init__(self) -> None:
        if self.usage_path is not None and self.usage_path.exists():
            try:
                saved = json.loads(self.usage_path.read_text(encoding="utf-8"))
                if saved.get("day") == self._day:
                    self._tokens = int(saved.get("tokens", 0))
            except (OSError, ValueError, AttributeError):
                logging.getLogger("hdsp_agent").warning(
                    "hdsp-agent: %s unreadable, counting from 0", self.usage_path
                )

    @property
    def tokens_today(self) -> int:
        if self._day != _today():
            self._day, self._tokens = _today(), 0
        return self._tokens

    def start_turn(self) -> None:
        """Count a turn in, or raise ``QuotaExceeded`` (then it was not counted)."""
        if self.max_turns and self.running >= self.max_turns:
            raise QuotaExceeded(
                E_QUOTA_TURNS,
                user_text(
                    (
                        "You already have %1 turn(s) running, the most your administrator "
                        "allows at once (%2). Wait for one to finish or stop it, then send "
                        "again."
                    ),
                    self.running,
                    self.max_turns,
                ),
            )
        self.check_tokens()
        self.running += 1

    def end_turn(self) -> None:
        self.running = max(0, self.running - 1)

    def check_tokens(self) -> None:
        if self.daily_tokens and self.tokens_today >= self.daily_tokens:
            raise QuotaExceeded(
                E_QUOTA_TOKENS,
                user_text(
                    (
                        "Today's model token allowance is used up (%1 of %2, set by your "
                        "administrator). It renews at midnight; ask your administrator for "
                        "more."
                    ),
                    format(self.tokens_today, ","),
                    format(self.daily_tokens, ","),
                ),
            )

    def add_tokens(self, count: int) -> None:
        self._tokens = self.tokens_today + count
        if self.usage_path is not None and self.daily_tokens:  # kept only where there is a limit to keep
            try:
                self.usage_path.parent.mkdir(parents=True, exist_ok=True)
                self.usage_path.write_text(json.dumps({"day": self._day, "tokens": self._tokens}))
            except OSError:
                logging.getLogger("hdsp_agent").warning("hdsp-agent: could not save %s", self.usage_path)


@dataclass
class UsageMeter:
    """One turn's view of the quotas and the audit log, for the loop: ``check`` before a model call,
    ``record`` after it."""

    quotas: Quotas
    model: str
    session_id: str = ""
    audit: Callable[[dict[str, Any]], None] | None = None
    # Which way the call came in when not a conversation's turn (``"v1"``): written in the audit record.
    door: str = ""

    def check(self) -> None:
        self.quotas.check_tokens()

    def record(
        self, request: list[dict[str, Any]], tools: list[dict[str, Any]], answer: dict[str, Any], usage: Any
    ) -> None:
        reported = isinstance(usage, dict) and "prompt_tokens" in usage
        if reported:
            prompt, completion = (
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
            )
        else:
            prompt, completion = estimate_tokens([request, tools]), estimate_tokens(answer)
        self.quotas.add_tokens(prompt + completion)
        if self.audit is not None:
            self.audit(
                {
                    "event": "model_call",
                    "session": self.session_id,
                    "model": self.model,
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "estimated": not reported,
                    "tokens_today": self.quotas.tokens_today,
                    **({"door": self.door} if self.door else {}),
                }
            )
