"""Shell processes for ``run_terminal_command``: spawning, capturing output, stopping whole process groups,
and
tracking the ones left running in the background per session.

Every command gets its own process group (``start_new_session``) so stopping it stops what it started too
(``sleep`` in a pipeline, a server forked by a script), and stdin is /dev/null so a prompt never waits on us.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import itertools
import os
import re
import signal
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

# CSI (colours, cursor moves), OSC (titles, hyperlinks) and the remaining two-character escapes.
_ANSI_PATTERN = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
READ_CHUNK_BYTES = 64 * 1024
KILL_GRACE_SECONDS = 5.0
# A command's saved log stops growing here: an endless writer to stdout (``yes``) must not fill the disk.
MAX_LOG_CHARS = 64 * 1024 * 1024
_LOG_FULL_NOTE = f"\n[... the log stops here: more than {MAX_LOG_CHARS // (1024 * 1024)} MiB of output]\n"


def strip_ansi(text: str) -> str:
    return _ANSI_PATTERN.sub("", text)


def collapse_carriage_returns(text: str) -> str:
    """What a terminal would finally show: progress bars redraw a line with '\\r'; keep the last drawing."""
    if "\r" not in text:
        return text
    lines = text.replace("\r\n", "\n").split("\n")
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)


class TextDecoder:
    """Bytes from a pipe → text without escapes. An escape or a UTF-8 character split across reads is held
    back until the next read completes it."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""

    def feed(self, chunk: bytes, *, final: bool = False) -> str:
        text = self._pending + self._decoder.decode(chunk, final=final)
        self._pending = ""
        escape_at = text.rfind("\x1b")
        if (
            not final
            and escape_at != -1
            and len(text) - escape_at < 64
            and not _ANSI_PATTERN.search(text, escape_at)
        ):
            text, self._pending = text[:escape_at], text[escape_at:]
        return strip_ansi(text)


class OutputCapture:
    """Keeps the head and tail of a command's output in memory; once it outgrows ``limit`` the full output
    goes
    to ``log_path`` so the model can page through it."""

    # Room left for the marker and the exit code, so the cut output still fits the executor's output budget.
    _MARKER_ROOM = 1_000
    # Kept beyond each cut, so a secret that spans it is whole when redacted (before the cut is made).
    _REDACTION_MARGIN = 512

    def __init__(self, log_path: Path, limit: int, head_fraction: float = 0.4) -> None:
        self.log_path = log_path
        self.limit = limit
        kept = max(0, limit - self._MARKER_ROOM)
        self.head_chars = int(kept * head_fraction)
        self.tail_chars = kept - self.head_chars
        self.total_chars = 0
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self._everything: list[str] | None = []  # until spilled to the log
        self._log: IO[str] | None = None

    @property
    def spilled(self) -> bool:
        return self._everything is None

    def feed(self, text: str) -> None:
        if not text:
            return
        self.total_chars += len(text)
        head_room = self.head_chars + self._REDACTION_MARGIN
        if self._head_len < head_room:
            piece = text[: head_room - self._head_len]
            self._head.append(piece)
            self._head_len += len(piece)
        self._tail.append(text)
        self._tail_len += len(text)
        while self._tail and self._tail_len - len(self._tail[0]) >= self.tail_chars + self._REDACTION_MARGIN:
            self._tail_len -= len(self._tail.popleft())
        if self._everything is not None:
            self._everything.append(text)
            if self.total_chars > self.limit:
                self._spill()
        elif self._log is not None and self.total_chars - len(text) < MAX_LOG_CHARS:
            self._log.write(text if self.total_chars < MAX_LOG_CHARS else text + _LOG_FULL_NOTE)

    def _spill(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115 - kept open while output flows
        assert self._everything is not None
        self._log.writelines(self._everything)
        self._everything = None

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    def text(self, redact: Callable[[str], str] | None = None) -> str:
        """All output when it fits, else head + a marker naming the log + tail; ``redact`` (the executor's
        redaction) is applied to head and tail before they are cut to size."""
        if self._everything is not None:
            return collapse_carriage_returns("".join(self._everything))
        head, tail = "".join(self._head), "".join(self._tail)
        if redact is not None:
            head, tail = redact(head), redact(tail)
        head, tail = head[: self.head_chars], tail[-self.tail_chars :]
        omitted = self.total_chars - len(head) - len(tail)
        marker = (
            f"\n[... {omitted:,} characters cut from the middle of {self.total_chars:,}. The full output is "
            "in "
            f"{self.log_path}; read it with read_file_range (startLine/endLine) ...]\n"
        )
        return collapse_carriage_returns(head) + marker + collapse_carriage_returns(tail)


async def spawn_shell(command: str, cwd: Path, env: Mapping[str, str]) -> asyncio.subprocess.Process:
    """``bash -c command`` in its own process group, stdin closed, stdout and stderr on one pipe."""
    return await spawn_argv(["bash", "-c", command], cwd, env)


async def spawn_argv(argv: list[str], cwd: Path, env: Mapping[str, str]) -> asyncio.subprocess.Process:
    """``argv`` (a shell, or the sandbox supervisor around one) in its own process group, stdin closed,
    stdout and stderr on one pipe."""
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs. Zombies do not count: an init that reaps orphans slowly
    (containers, VMs) would otherwise make a dead group look alive."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    return any(_running_in_group(entry, pgid) for entry in proc.iterdir() if entry.name.isdigit())


def _running_in_group(proc_entry: Path, pgid: int) -> bool:
    try:
        stat = (proc_entry / "stat").read_text()
    except OSError:
        return False
    # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses, so split after the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X")


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def wait_for_exit(process: asyncio.subprocess.Process, timeout: float | None) -> bool:
    """Wait until the process itself exits (True) or ``timeout`` passes (False).

    Polls ``returncode`` besides awaiting ``wait()``: a background child still holding the output pipe must
    not
    make a finished shell look like it is still running.
    """
    waiter = asyncio.ensure_future(process.wait())
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while process.returncode is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            await asyncio.wait({waiter}, timeout=0.1 if remaining is None else min(0.1, remaining))
        return True
    finally:
        waiter.cancel()


async def terminate_group(process: asyncio.subprocess.Process, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the process's whole group, then SIGKILL whatever is left after ``grace`` seconds."""
    pgid = process.pid  # the leader of its own session: its pid is the group id
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and group_alive(pgid):
        await wait_for_exit(process, min(0.05, max(0.0, deadline - time.monotonic())))
        if process.returncode is not None:
            await asyncio.sleep(0.02)  # the leader is gone; give the rest of the group a moment
    _signal_group(pgid, signal.SIGKILL)
    await wait_for_exit(process, None)


@dataclass
class BackgroundProcess:
    """A command left running with ``waitForCompletion: false``; its output goes to ``log_path``."""

    process_id: str
    session_id: str
    command: str
    process: asyncio.subprocess.Process
    log_path: Path
    started_at: float = field(default_factory=time.time)
    first_output: list[str] = field(default_factory=list)
    pump: asyncio.Task[None] | None = None
    first_output_seen: asyncio.Event = field(default_factory=asyncio.Event)
    # Called once the process has exited (the sandbox's scratch directories and mount points go away).
    on_exit: Callable[[], None] | None = None
    # What became of its changes to the project once it exited (``change_capture``): details and text.
    changes: dict[str, object] | None = None
    changes_text: str = ""

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def summary(self) -> dict[str, object]:
        return {
            "id": self.process_id,
            "pid": self.pid,
            "command": self.command,
            "running": self.running,
            "exit_code": self.returncode,
            "log_path": str(self.log_path),
            "started_at": self.started_at,
            **({"changes": self.changes} if self.changes else {}),
        }


class ProcessTracker:
    """Background commands per session: listed, killable one by one, and all killed when the session ends.

    One tracker is shared by the server (the terminal tool gets it in its constructor); whoever ends a session
    calls ``kill_session``, and server shutdown calls ``kill_all``.
    """

    FIRST_OUTPUT_CHARS = 4_000

    def __init__(self) -> None:
        self._processes: dict[str, BackgroundProcess] = {}
        self._ids = itertools.count(1)

    async def start(
        self,
        command: str,
        cwd: Path,
        env: Mapping[str, str],
        session_id: str,
        log_path: Path,
        *,
        argv: list[str] | None = None,
        on_exit: Callable[[], None] | None = None,
    ) -> BackgroundProcess:
        """Start ``argv`` (default: ``bash -c command``) in the background."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        process = await spawn_argv(argv or ["bash", "-c", command], cwd, env)
        entry = BackgroundProcess(
            f"bg-{next(self._ids)}", session_id, command, process, log_path, on_exit=on_exit
        )
        entry.pump = asyncio.ensure_future(self._pump(entry))
        self._processes[entry.process_id] = entry
        return entry

    async def _pump(self, entry: BackgroundProcess) -> None:
        """Copy the process's output to its log as it comes, keeping the first lines for the model."""
        try:
            await self._copy_output(entry)
            await entry.process.wait()
            entry.first_output_seen.set()
        finally:
            if entry.on_exit is not None:
                entry.on_exit()

    async def _copy_output(self, entry: BackgroundProcess) -> None:
        assert entry.process.stdout is not None
        decoder = TextDecoder()
        kept = written = 0
        with open(entry.log_path, "w", encoding="utf-8") as log:
            while True:
                chunk = await entry.process.stdout.read(READ_CHUNK_BYTES)
                text = decoder.feed(chunk, final=not chunk)
                if written < MAX_LOG_CHARS:  # past it, output is still read (and dropped) so the pipe drains
                    written += len(text)
                    log.write(text if written < MAX_LOG_CHARS else text + _LOG_FULL_NOTE)
                    log.flush()
                if kept < self.FIRST_OUTPUT_CHARS and text:
                    entry.first_output.append(text[: self.FIRST_OUTPUT_CHARS - kept])
                    kept += len(entry.first_output[-1])
                    entry.first_output_seen.set()
                if not chunk:
                    break

    def get(self, process_id: str) -> BackgroundProcess | None:
        return self._processes.get(process_id)

    def list(self, session_id: str | None = None) -> list[BackgroundProcess]:
        """Processes of ``session_id`` (every session's when None), oldest first, finished ones included."""
        return [p for p in self._processes.values() if session_id is None or p.session_id == session_id]

    async def kill(self, process_id: str, grace: float = KILL_GRACE_SECONDS) -> bool:
        """Stop one background process and its group; False when no such id is tracked."""
        entry = self._processes.get(process_id)
        if entry is None:
            return False
        await terminate_group(entry.process, grace)
        if entry.pump is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(entry.pump, timeout=grace)
        return True

    async def kill_session(self, session_id: str, grace: float = KILL_GRACE_SECONDS) -> int:
        """Stop every process the session started (when the session ends); returns how many were running."""
        running = [entry for entry in self.list(session_id) if entry.running]
        await asyncio.gather(*(self.kill(entry.process_id, grace) for entry in running))
        for entry in self.list(session_id):
            del self._processes[entry.process_id]
        return len(running)

    async def forget_session(self, session_id: str) -> None:
        """The conversation was deleted: its background processes are stopped and no longer listed."""
        await self.kill_session(session_id)

    async def kill_all(self, grace: float = KILL_GRACE_SECONDS) -> None:
        """Stop everything (server shutdown)."""
        for session_id in {entry.session_id for entry in self._processes.values()}:
            await self.kill_session(session_id, grace)
