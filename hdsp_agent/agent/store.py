"""Conversations on disk: sessions, their event log and their messages, in one SQLite file.

Writes go through one writer thread in batches, so the event loop never waits on the disk and a burst of
streamed deltas costs one transaction. Each batch is a transaction: a crash loses at most the last unflushed
batch, never half of one. A file that SQLite cannot read is moved aside (and reported), and the server starts
with a new one.

Beside the conversations it keeps what undo needs after a restart (``agent/undo_records.py`` writes and reads
it): each session's undo items (a file's prior bytes, a notebook change's inverse or snapshot) in the order
they were recorded, its checkpoints and redo stack, and the journal of the agent's unsaved changes per
document. The tables are created when missing, so a store written by an older version opens with its
conversations as they were.
"""

from __future__ import annotations

import json
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'idle',
    notebooks TEXT NOT NULL DEFAULT '[]'
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
CREATE TABLE IF NOT EXISTS undo_items (
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    item_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    content BLOB,
    size INTEGER NOT NULL,
    PRIMARY KEY (session_id, kind, item_id)
);
CREATE TABLE IF NOT EXISTS undo_state (
    session_id TEXT PRIMARY KEY,
    payload TEXT NOT NULL,
    size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS journals (
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (path, kind)
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
    # The notebooks the conversation works on (contents paths, first tied first): the one in view when a
    # message was sent, and every one a tool of it changed or ran.
    notebooks: list[str] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "updated": self.updated,
            "model": self.model,
            "status": self.status,
            "notebooks": list(self.notebooks),
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
            _add_missing_columns(connection)
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
        notebooks = json.dumps(record.notebooks, ensure_ascii=False)
        values = (
            record.id,
            record.title,
            record.created,
            record.updated,
            record.model,
            record.status,
            notebooks,
        )
        self._submit(
            lambda db: db.execute(
                "INSERT INTO sessions (id, title, created, updated, model, status, notebooks) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET title=excluded.title, updated=excluded.updated, "
                "model=excluded.model, status=excluded.status, notebooks=excluded.notebooks",
                values,
            )
        )

    def delete_session(self, session_id: str) -> None:
        def delete(db: sqlite3.Connection) -> None:
            for table, column in (
                ("events", "session_id"),
                ("messages", "session_id"),
                ("undo_items", "session_id"),
                ("undo_state", "session_id"),
                ("sessions", "id"),
            ):
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

    # -- undo history and journals (rows in the order they were recorded: rowid) ----------------------------

    def put_undo_item(
        self, session_id: str, kind: str, item_id: str, payload: dict[str, Any], content: bytes | None
    ) -> None:
        text = json.dumps(payload, ensure_ascii=False)
        size = len(text) + (len(content) if content is not None else 0)
        # An update keeps the row's place (rowid): an amended record stays where it was in the history.
        self._submit(
            lambda db: db.execute(
                "INSERT INTO undo_items (session_id, kind, item_id, payload, content, size) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(session_id, kind, item_id) DO UPDATE SET "
                "payload=excluded.payload, content=excluded.content, size=excluded.size",
                (session_id, kind, item_id, text, content, size),
            )
        )

    def delete_undo_item(self, session_id: str, kind: str, item_id: str) -> None:
        self._submit(
            lambda db: db.execute(
                "DELETE FROM undo_items WHERE session_id = ? AND kind = ? AND item_id = ?",
                (session_id, kind, item_id),
            )
        )

    def delete_undo(self, session_id: str) -> None:
        def delete(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM undo_items WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM undo_state WHERE session_id = ?", (session_id,))

        self._submit(delete)

    def save_undo_state(self, session_id: str, payload: dict[str, Any]) -> None:
        text = json.dumps(payload, ensure_ascii=False)
        self._submit(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO undo_state (session_id, payload, size) VALUES (?, ?, ?)",
                (session_id, text, len(text)),
            )
        )

    def save_journal(self, path: str, kind: str, payload: Any) -> None:
        """``payload`` None: the document has no journal of that kind any more."""
        if payload is None:
            self._submit(
                lambda db: db.execute("DELETE FROM journals WHERE path = ? AND kind = ?", (path, kind))
            )
            return
        text = json.dumps(payload, ensure_ascii=False)
        self._submit(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO journals (path, kind, payload) VALUES (?, ?, ?)", (path, kind, text)
            )
        )

    def load_undo_items(self) -> list[tuple[str, str, dict[str, Any], bytes | None]]:
        """Every session's undo items, oldest first: (session id, kind, payload, content)."""
        rows = self._query("SELECT session_id, kind, payload, content FROM undo_items ORDER BY rowid")
        return [(row[0], row[1], json.loads(row[2]), row[3]) for row in rows]

    def load_undo_states(self) -> dict[str, dict[str, Any]]:
        rows = self._query("SELECT session_id, payload FROM undo_state")
        return {row[0]: json.loads(row[1]) for row in rows}

    def load_journals(self) -> list[tuple[str, str, Any]]:
        rows = self._query("SELECT path, kind, payload FROM journals")
        return [(row[0], row[1], json.loads(row[2])) for row in rows]

    def undo_bytes(self) -> int:
        """What the stored undo history takes (items and checkpoint/redo state), in bytes."""
        rows = self._query(
            "SELECT (SELECT COALESCE(SUM(size), 0) FROM undo_items) + "
            "(SELECT COALESCE(SUM(size), 0) FROM undo_state)"
        )
        return int(rows[0][0])

    # -- reading ---------------------------------------------------------------------------------------------

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._read_lock:
            return self._read.execute(sql, args).fetchall()

    def load_sessions(self) -> list[SessionRecord]:
        rows = self._query(
            "SELECT id, title, created, updated, model, status, notebooks FROM sessions ORDER BY updated DESC"
        )
        return [
            SessionRecord(
                id=row[0],
                title=row[1],
                created=row[2],
                updated=row[3],
                model=row[4],
                status=row[5],
                notebooks=_notebooks(row[6]),
            )
            for row in rows
        ]

    def load_events(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._query("SELECT payload FROM events WHERE session_id = ? ORDER BY seq", (session_id,))
        return [json.loads(row[0]) for row in rows]

    def load_messages(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT payload FROM messages WHERE session_id = ? ORDER BY position", (session_id,)
        )
        return [json.loads(row[0]) for row in rows]


def _add_missing_columns(connection: sqlite3.Connection) -> None:
    """A store written by an older version lacks the columns added since: add them (with their default)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(sessions)")}
    if "notebooks" not in columns:
        connection.execute("ALTER TABLE sessions ADD COLUMN notebooks TEXT NOT NULL DEFAULT '[]'")


def _notebooks(text: str) -> list[str]:
    try:
        paths = json.loads(text)
    except ValueError:  # a hand-edited row: the conversation is still listed, tied to nothing
        return []
    return [path for path in paths if isinstance(path, str)] if isinstance(paths, list) else []
