"""``codebase``: ranked retrieval of code snippets for a natural-language query (Continue's name and
parameter).

The index is an SQLite FTS5 table of ~40-line windows of every text file ripgrep would search (.gitignore
respected; hidden, binary and huge files skipped), ranked with bm25. It is built on first use and refreshed
incrementally before every query by comparing each file's mtime and size with a copy of the files table
kept in memory, all off the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import sqlite3
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ....permissions.paths import resolved_root
from ....tools.facts import ToolFacts, ToolWords
from ....user_text import user_template, user_text
from ...base import Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .ripgrep import list_files

CHUNK_LINES = 40
MAX_FILE_BYTES = 1024 * 1024
MAX_RESULTS = 8
MAX_CHUNKS_PER_FILE = 2
MAX_SNIPPET_CHARS = 2_500
_SCHEMA_VERSION = "1"
_BINARY_SNIFF_BYTES = 8192
# Rowids encode (file id, chunk number) so a file's chunks are one rowid range: cheap to delete.
_CHUNK_BITS = 20
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOPWORDS = frozenset(
    "a an and are as at be by can code do does for from how i in is it of on or the this that to what where "
    "which "
    "who why with we you".split()
)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE, mtime_ns INTEGER, size "
    "INTEGER)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5("
    "path, body, terms, start_line UNINDEXED, end_line UNINDEXED, tokenize='porter unicode61')",
)


def identifier_words(text: str) -> list[str]:
    """camelCase and PascalCase split into words (snake_case is already split by the tokenizer)."""
    words: list[str] = []
    for token in _WORD.findall(text):
        if token.lower() != token and token.upper() != token:
            words += [part.lower() for part in _CAMEL_PART.findall(token)]
    return words


def query_terms(query: str) -> list[str]:
    """The words of a query worth matching: identifiers whole and split, without stopwords."""
    terms: list[str] = []
    for token in _WORD.findall(query):
        for word in [token.lower(), *identifier_words(token)]:
            if len(word) > 1 and word not in _STOPWORDS and word not in terms:
                terms.append(word)
    return terms


@dataclass(frozen=True)
class RefreshStats:
    total_files: int
    indexed: int
    removed: int


@dataclass(frozen=True)
class Snippet:
    path: str
    start_line: int
    end_line: int
    text: str
    score: float


class CodebaseIndex:
    """One project's index in one SQLite file. Methods block: call them through ``asyncio.to_thread``, one at
    a time (the tool holds a lock per index).

    The connection stays open and the files table is mirrored in memory, so a query on an unchanged tree
    costs a listing and a stat per file, not a schema check and a 20,000-row read. A generation number in
    the database tells when another process (the CLI on the same project) changed it: then the mirror is
    read again.
    """

    def __init__(self, root: Path, db_path: Path) -> None:
        self.root = root
        self.db_path = db_path
        self._connection: sqlite3.Connection | None = None
        self._known: dict[str, tuple[int, int, int]] = {}  # path -> (id, mtime_ns, size)
        self._generation: str | None = None  # of ``_known``; None: read it from the database

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit: refresh opens its own write transaction (BEGIN IMMEDIATE) so two processes never
        # interleave their changes to the files table.
        connection = sqlite3.connect(self.db_path, timeout=30, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        try:
            row = connection.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            version = row[0] if row else None
        except sqlite3.OperationalError:
            version = None
        if version not in (None, _SCHEMA_VERSION):  # built by another version: start over
            connection.executescript(
                "DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS chunks; DROP TABLE meta;"
            )
        for statement in _SCHEMA:
            connection.execute(statement)
        connection.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
        self._connection = connection
        return connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self._generation = None

    def refresh(self, paths: Sequence[str]) -> RefreshStats:
        """Bring the index in line with ``paths`` (relative to the root): new and changed files are
        re-chunked, vanished ones dropped. Unchanged files (same mtime and size) are not read."""
        connection = self._connect()
        connection.execute("BEGIN IMMEDIATE")
        try:
            stats = self._refresh(connection, paths)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            self._generation = None  # the mirror may hold changes that were rolled back
            raise
        return stats

    def _refresh(self, connection: sqlite3.Connection, paths: Sequence[str]) -> RefreshStats:
        row = connection.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        generation = row[0] if row else ""
        if generation != self._generation:
            self._known = {
                path: (file_id, mtime_ns, size)
                for file_id, path, mtime_ns, size in connection.execute(
                    "SELECT id, path, mtime_ns, size FROM files"
                )
            }
        known = self._known
        on_disk = set(paths)
        removed = list(known.keys() - on_disk)
        for path in removed:
            self._drop(connection, known.pop(path)[0])
        indexed = 0
        root = str(self.root)
        for path in paths:
            try:
                stat = os.stat(f"{root}/{path}")  # a string join: a Path per file cost as much as the stat
            except OSError:
                continue
            entry = known.get(path)
            if entry is not None and entry[1] == stat.st_mtime_ns and entry[2] == stat.st_size:
                continue
            file_id = self._index_file(connection, path, stat, entry[0] if entry else None)
            known[path] = (file_id, stat.st_mtime_ns, stat.st_size)
            indexed += 1
        if indexed or removed or generation != self._generation:
            generation = uuid.uuid4().hex
            connection.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (generation,))
        self._generation = generation
        return RefreshStats(len(on_disk), indexed, len(removed))

    @staticmethod
    def _drop(connection: sqlite3.Connection, file_id: int) -> None:
        low = file_id << _CHUNK_BITS
        connection.execute(
            "DELETE FROM chunks WHERE rowid BETWEEN ? AND ?", (low, low + (1 << _CHUNK_BITS) - 1)
        )
        connection.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _index_file(
        self, connection: sqlite3.Connection, path: str, stat: os.stat_result, file_id: int | None
    ) -> int:
        if file_id is not None:
            self._drop(connection, file_id)
        cursor = connection.execute(
            "INSERT INTO files(path, mtime_ns, size) VALUES (?, ?, ?)", (path, stat.st_mtime_ns, stat.st_size)
        )
        new_id = int(cursor.lastrowid or 0)
        text = _read_text(self.root / path, stat.st_size)
        if text is None:
            return new_id  # binary or too large: remembered (so not re-read) but not searchable
        rows = [
            ((new_id << _CHUNK_BITS) + number, path, body, " ".join(identifier_words(body)), start, end)
            for number, (start, end, body) in enumerate(chunk_lines(text))
        ]
        connection.executemany(
            "INSERT INTO chunks(rowid, path, body, terms, start_line, end_line) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
        return new_id

    def search(self, query: str, limit: int = MAX_RESULTS) -> list[Snippet]:
        terms = query_terms(query)
        if not terms:
            return []
        match = " OR ".join(f'"{term}"' for term in terms)
        # Weights: a word in the path counts most, then the text, then split identifiers.
        rows = (
            self._connect()
            .execute(
                "SELECT path, start_line, end_line, body, bm25(chunks, 3.0, 1.0, 0.5) AS score "
                "FROM chunks WHERE chunks MATCH ? ORDER BY score LIMIT ?",
                (match, limit * 8),
            )
            .fetchall()
        )
        snippets: list[Snippet] = []
        per_file: dict[str, int] = {}
        for path, start, end, body, score in rows:
            if per_file.get(path, 0) >= MAX_CHUNKS_PER_FILE:
                continue  # several files beat many windows of one file
            per_file[path] = per_file.get(path, 0) + 1
            snippets.append(Snippet(path, int(start), int(end), body, float(score)))
            if len(snippets) == limit:
                break
        return snippets


def chunk_lines(text: str, size: int = CHUNK_LINES) -> Iterable[tuple[int, int, str]]:
    """(first line, last line, text) of consecutive ``size``-line windows, 1-based; blank windows skipped."""
    lines = text.splitlines()
    for start in range(0, len(lines), size):
        window = lines[start : start + size]
        if any(line.strip() for line in window):
            yield start + 1, start + len(window), "\n".join(window)


def _read_text(path: Path, size: int) -> str | None:
    if size > MAX_FILE_BYTES:
        return None
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    if b"\0" in raw[:_BINARY_SNIFF_BYTES]:
        return None
    return raw.decode("utf-8", errors="replace")


def _root_digest(root: Path) -> str:
    return hashlib.sha256(str(root).encode()).hexdigest()[:16]


def default_db_path(root: Path, cache_dir: Path | None) -> Path:
    """``<cache_dir>/codebase-<hash of root>.sqlite`` when a cache dir is given, else
    ``<root>/.hdsp/cache``."""
    if cache_dir is not None:
        return cache_dir / f"codebase-{_root_digest(root)}.sqlite"
    return root / ".hdsp" / "cache" / "codebase.sqlite"


def prepare_cache_dir(db_path: Path, root: Path) -> Path:
    """Create the cache directory (ignored by git when inside the root); fall back to the temp dir when the
    root
    is read-only."""
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        ignore = db_path.parent / ".gitignore"
        if db_path.parent.is_relative_to(root) and not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")
        return db_path
    except OSError:
        fallback = (
            Path(tempfile.gettempdir()) / "hdsp-agent" / "cache" / f"codebase-{_root_digest(root)}.sqlite"
        )
        fallback.parent.mkdir(parents=True, exist_ok=True)
        return fallback


class CodebaseArgs(ToolArgs):
    query: str = Field(description="What you are looking for, in words or identifiers.")


class CodebaseTool(Tool[CodebaseArgs]):
    name = "codebase"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        words=ToolWords(
            question=user_template("Search the project's code?"),
            statement=user_template("Search the project's code"),
        ),
    )
    description = (
        "Find the code most relevant to a question when you do not know where it lives (ranked snippets)."
    )
    args_model = CodebaseArgs
    read_only = True
    timeout = 300.0
    paging_hint = "ask a narrower question, or read a snippet's file with read_file_range"

    def __init__(self, cache_dir: Path | None = None) -> None:
        """``cache_dir``: where index files go (one per project root); default ``<root>/.hdsp/cache``."""
        self.cache_dir = cache_dir
        # Per project root: its index (kept open between queries) and the lock that serializes its use.
        self._indexes: dict[Path, tuple[CodebaseIndex, asyncio.Lock]] = {}

    async def _index_for(self, root: Path) -> tuple[CodebaseIndex, asyncio.Lock]:
        if root not in self._indexes:
            db_path = await asyncio.to_thread(prepare_cache_dir, default_db_path(root, self.cache_dir), root)
            self._indexes.setdefault(root, (CodebaseIndex(root, db_path), asyncio.Lock()))
        return self._indexes[root]

    def close(self) -> None:
        """Close the open indexes (they reopen on the next query)."""
        for index, _ in self._indexes.values():
            index.close()

    async def run(self, args: CodebaseArgs, ctx: ToolContext) -> ToolOutput:
        if not query_terms(args.query):
            raise ToolError(
                "E_EMPTY_QUERY",
                user_text("the query has no searchable words"),
                user_text("Describe what you look for."),
            )
        root = resolved_root(ctx.root_dir)
        index, lock = await self._index_for(root)
        # One use at a time per index; the file walk is rg (async), the indexing and search a worker thread.
        async with lock:
            paths = await list_files(root, ["--no-hidden", "--max-filesize", str(MAX_FILE_BYTES)])
            stats = await asyncio.to_thread(index.refresh, paths)
            snippets = await asyncio.to_thread(index.search, args.query)
        details: dict[str, object] = {
            "total_files": stats.total_files,
            "reindexed": stats.indexed,
            "removed": stats.removed,
        }
        if not snippets:
            return ToolOutput(
                f"No code matches {args.query!r} ({stats.total_files:,} files indexed). "
                "Try other words, or grep_search for an exact string.",
                details=details,
            )
        blocks = [
            f"{len(snippets)} snippets for {args.query!r} ({stats.total_files:,} files indexed), best first:"
        ]
        for snippet in snippets:
            text = snippet.text
            if len(text) > MAX_SNIPPET_CHARS:
                text = text[:MAX_SNIPPET_CHARS] + "\n[... snippet cut]"
            blocks.append(
                f"## {snippet.path} (lines {snippet.start_line}-{snippet.end_line})\n```\n{text}\n```"
            )
        details["results"] = [
            {"path": s.path, "start_line": s.start_line, "end_line": s.end_line, "score": s.score}
            for s in snippets
        ]
        return ToolOutput("\n\n".join(blocks), details=details)
