"""Conversations on disk: sessions, their event log and their messages, in one SQLite file.

Writes go through one writer thread in batches, so the event loop never waits on the disk and a burst of
streamed deltas costs one transaction. Each batch is a transaction: a crash loses at most the last unflushed
batch, never half of one. A file that SQLite cannot read is moved aside (and reported), and the server starts
with a new one.
"""

from __future__ import annotations

import json
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'idle'
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
);
"""

Write = Callable[[sqlite3.Connection], object]  # whatever it returns (a cursor) is not used
_STOP = object()


@dataclass
class SessionRecord:
    id: str
    title: str
    created: float
    updated: float
    model: str = ""
    status: str = "idle"

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "updated": self.updated,
            "model": self.model,
            "status": self.status,
        }


class SessionStore:
    def __init__(self, path: Path, logger: logging.Logger | None = None) -> None:
        self.path = path
        self.log = logger or logging.getLogger("hdsp_agent.store")
        self.moved_aside: Path | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        self._read = self._open_checked()
        self._read_lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._writer = threading.Thread(target=self._write_loop, name="hdsp-agent-store", daemon=True)
        self._writer.start()

    # -- opening ---------------------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        return connection

    def _open_checked(self) -> sqlite3.Connection:
        try:
            connection = self._connect()
            if connection.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("quick_check failed")
            connection.executescript(SCHEMA)
            return connection
        except sqlite3.DatabaseError as error:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            for suffix in ("", "-wal", "-shm"):
                candidate = Path(str(self.path) + suffix)
                if candidate.exists():
                    candidate.rename(Path(str(aside) + suffix))
            self.moved_aside = aside
            self.log.error(
                "hdsp-agent: conversation store %s was unreadable (%s); moved to %s", self.path, error, aside
            )
            connection = self._connect()
            connection.executescript(SCHEMA)
            return connection

    # -- writing ---------------------------------------------------------------------------------------------

    def _write_loop(self) -> None:
        connection = self._connect()
        while True:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(item is _STOP for item in batch)
            writes = [item for item in batch if callable(item)]
            waiters = [item for item in batch if isinstance(item, threading.Event)]
            if writes:
                try:
                    connection.execute("BEGIN")
                    for write in writes:
                        write(connection)
                    connection.execute("COMMIT")
                except sqlite3.Error:
                    self.log.exception("hdsp-agent: writing the conversation store failed")
                    connection.execute("ROLLBACK")
            for waiter in waiters:
                waiter.set()
            if stop:
                connection.close()
                return

    def _submit(self, write: Write) -> None:
        self._queue.put(write)

    def flush(self, timeout: float = 10.0) -> None:
        """Block until everything submitted so far is on disk (tests, shutdown)."""
        done = threading.Event()
        self._queue.put(done)
        done.wait(timeout)

    def close(self) -> None:
        self.flush()
        self._queue.put(_STOP)
        self._writer.join(timeout=10)
        self._read.close()

    def upsert_session(self, record: SessionRecord) -> None:
        values = (record.id, record.title, record.created, record.updated, record.model, record.status)
        self._submit(
            lambda db: db.execute(
                "INSERT INTO sessions (id, title, created, updated, model, status) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET title=excluded.title, updated=excluded.updated, "
                "model=excluded.model, status=excluded.status",
                values,
            )
        )

    def delete_session(self, session_id: str) -> None:
        def delete(db: sqlite3.Connection) -> None:
            for table, column in (("events", "session_id"), ("messages", "session_id"), ("sessions", "id")):
                db.execute(f"DELETE FROM {table} WHERE {column} = ?", (session_id,))

        self._submit(delete)

    def append_event(self, session_id: str, seq: int, event: dict[str, Any]) -> None:
        payload = json.dumps(event, ensure_ascii=False)
        self._submit(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO events (session_id, seq, payload) VALUES (?, ?, ?)",
                (session_id, seq, payload),
            )
        )

    def save_messages(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        rows = [
            (session_id, position, json.dumps(message, ensure_ascii=False))
            for position, message in enumerate(messages)
        ]

        def save(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            db.executemany("INSERT INTO messages (session_id, position, payload) VALUES (?, ?, ?)", rows)

        self._submit(save)

    # -- reading ---------------------------------------------------------------------------------------------

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._read_lock:
            return self._read.execute(sql, args).fetchall()

    def load_sessions(self) -> list[SessionRecord]:
        rows = self._query(
            "SELECT id, title, created, updated, model, status FROM sessions ORDER BY updated DESC"
        )
        return [SessionRecord(*row) for row in rows]

    def load_events(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._query("SELECT payload FROM events WHERE session_id = ? ORDER BY seq", (session_id,))
        return [json.loads(row[0]) for row in rows]

    def load_messages(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT payload FROM messages WHERE session_id = ? ORDER BY position", (session_id,)
        )
        return [json.loads(row[0]) for row in rows]
