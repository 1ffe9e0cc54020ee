"""Per-user quotas: model tokens and requests per day, requests running at once.

The day's counts are kept in SQLite in the gateway's data dir, so a restart of the hub (and its services) does
not hand everyone a fresh day; the running requests are counted in memory (a restart ends them anyway).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path


@dataclass(frozen=True)
class Limits:
    """Per user; 0 means no limit."""

    daily_tokens: int = 0
    daily_requests: int = 0
    concurrent_requests: int = 0


class QuotaRefused(Exception):
    """A request over one of the user's limits; ``message`` is what the user reads (in the sidebar or a
    ``/v1`` client), ``code`` names the limit."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class UsageLedger:
    """Tokens and requests per user per day, in ``usage.sqlite3``."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Small single-row writes, one process: fast enough on the event loop, and never lost in a crash.
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS usage (user TEXT, day TEXT, tokens INTEGER, requests INTEGER,"
            " PRIMARY KEY (user, day))"
        )

    def used(self, user: str, day: str) -> tuple[int, int]:
        row = self._db.execute(
            "SELECT tokens, requests FROM usage WHERE user=? AND day=?", (user, day)
        ).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def add(self, user: str, day: str, *, tokens: int = 0, requests: int = 0) -> None:
        self._db.execute(
            "INSERT INTO usage (user, day, tokens, requests) VALUES (?, ?, ?, ?) ON CONFLICT (user, day)"
            " DO UPDATE SET tokens = tokens + excluded.tokens, requests = requests + excluded.requests",
            (user, day, tokens, requests),
        )

    def close(self) -> None:
        self._db.close()


class Quotas:
    """``admit(user)`` before forwarding (raises ``QuotaRefused``), ``spent(user, tokens)`` when the answer is
    in, ``release(user)`` when the request ends however it ends."""

    def __init__(self, limits: Limits, ledger: UsageLedger, today: Callable[[], date] = date.today) -> None:
        self.limits = limits
        self.ledger = ledger
        self._today = today
        self._running: dict[str, int] = {}

    def running(self, user: str) -> int:
        return self._running.get(user, 0)

    def admit(self, user: str) -> None:
        limits = self.limits
        running = self.running(user)
        if limits.concurrent_requests and running >= limits.concurrent_requests:
            raise QuotaRefused(
                "concurrent_requests",
                f"{user} already has {running} model requests running, the most allowed at once "
                f"({limits.concurrent_requests}); wait for one to finish, then send again.",
            )
        day = self._today().isoformat()
        tokens, requests = self.ledger.used(user, day)
        if limits.daily_tokens and tokens >= limits.daily_tokens:
            raise QuotaRefused(
                "daily_tokens",
                f"{user} has used {tokens:,} of the {limits.daily_tokens:,} model tokens allowed per day; "
                "the count starts again tomorrow. Ask the administrator for a higher daily token limit.",
            )
        if limits.daily_requests and requests >= limits.daily_requests:
            raise QuotaRefused(
                "daily_requests",
                f"{user} has made {requests:,} of the {limits.daily_requests:,} model requests allowed per "
                "day; the count starts again tomorrow. Ask the administrator for a higher daily request "
                "limit.",
            )
        self.ledger.add(user, day, requests=1)
        self._running[user] = running + 1

    def spent(self, user: str, tokens: int) -> None:
        if tokens > 0:
            self.ledger.add(user, self._today().isoformat(), tokens=tokens)

    def release(self, user: str) -> None:
        left = self.running(user) - 1
        if left > 0:
            self._running[user] = left
        else:
            self._running.pop(user, None)
