"""``run_terminal_command``: a shell command in the project root (Continue's name and parameters).

Whether a command may run, and how (its run mode), is the policy's call: the executor hands the decided mode
over on ``ToolContext.run_mode`` and the model cannot pick it. This module runs the command accordingly:
"sandboxed" and "network" through the OS sandbox (``hdsp_agent.sandbox``: allowlisted environment, scratch
home, read-only filesystem but the project, own PID namespace, limits); "unsandboxed" (only after an approval
that said so) as ``bash -c`` with the server's secrets removed from its environment. Either way: its own
process group, no stdin, a timeout that stops the whole group, and output kept within budget with the full
log saved for paging.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from pydantic import Field

from ...permissions.paths import display_path, resolve_in_root
from ...sandbox import PreparedCommand, RunMode, Sandbox, SandboxUnavailable
from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template, user_text
from ..base import PermissionAction, PermissionKind, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .change_capture import ChangeCapture
from .edit.filestate import FileStateStore
from .processes import (
    KILL_GRACE_SECONDS,
    READ_CHUNK_BYTES,
    BackgroundProcess,
    OutputCapture,
    ProcessTracker,
    TextDecoder,
    group_alive,
    spawn_argv,
    terminate_group,
    wait_for_exit,
)
from .shell_changes import ChangeReport

DEFAULT_TIMEOUT_SECONDS = 120.0
MAX_TIMEOUT_SECONDS = 600.0
OUTPUT_LIMIT_CHARS = 30_000
# After the shell exits, how long its pipe may stay open (a child it left behind) before we stop reading.
_DRAIN_SECONDS = 1.0
# A cancelled call must finish inside the executor's own grace period: kill quickly.
_CANCEL_GRACE_SECONDS = 1.0
# How long a background command may run before its first output is reported back, and how long we wait for
# more lines once output has started.
BACKGROUND_STARTUP_SECONDS = 2.0
_MORE_OUTPUT_SECONDS = 0.3

# Names never passed to commands: the server's credentials are not the model's to read.
SECRET_NAME_PATTERNS = (
    "OPENAI_API_KEY",
    "*_API_KEY",
    "*_TOKEN",
    "*_SECRET",
    "*_SECRET_KEY",
    "*_SECRET_ACCESS_KEY",
    "*_PASSWORD",
    "JUPYTER_TOKEN",
)
# Keep commands from waiting on a pager or a credential prompt, and from colouring output we strip anyway.
_NON_INTERACTIVE_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "TERM": "dumb",
    "NO_COLOR": "1",
}


def scrub_environment(environ: Mapping[str, str], extra_secret_names: Iterable[str] = ()) -> dict[str, str]:
    """``environ`` without secrets: names matching ``SECRET_NAME_PATTERNS`` or ``extra_secret_names`` (exact
    names or fnmatch patterns, case-insensitive)."""
    patterns = [pattern.upper() for pattern in (*SECRET_NAME_PATTERNS, *extra_secret_names)]
    return {
        name: value
        for name, value in environ.items()
        if not any(fnmatch.fnmatchcase(name.upper(), pattern) for pattern in patterns)
    }


def session_logs_dir(ctx: ToolContext) -> Path:
    """Where this session's command logs go: the session's directory when the server gave one, else temp."""
    session_dir = ctx.client_context.get("session_dir")
    if session_dir:
        return Path(session_dir) / "terminal"
    return Path(tempfile.gettempdir()) / "hdsp-agent" / (ctx.session_id or "no-session") / "terminal"


class RunTerminalCommandArgs(ToolArgs):
    command: str = Field(description="Passed to `bash -c`.")
    waitForCompletion: bool = Field(
        default=True,
        description="false: run in the background (servers, watchers).",
    )
    workingDirectory: str | None = Field(default=None, description="Relative to the project root.")
    timeout: float = Field(
        default=DEFAULT_TIMEOUT_SECONDS,
        gt=0,
        le=MAX_TIMEOUT_SECONDS,
        description="Seconds before the command is stopped.",
    )


class RunTerminalCommandTool(Tool[RunTerminalCommandArgs]):
    name = "run_terminal_command"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It runs a command in a terminal"),
        changes="other",
        words=ToolWords(
            question=user_template("Run this command in the terminal?"),
            statement=user_template("Run a command"),
        ),
    )
    description = (
        "Run a bash command in the project root; returns its output and exit code. There is no input: "
        "pass flags like -y. It runs sandboxed (no network; only the project is writable) unless the user "
        "approves otherwise."
    )
    args_model = RunTerminalCommandArgs
    read_only = False
    paging_hint = "read the saved log with read_file_range, or filter the output (grep, head, tail)"

    def __init__(
        self,
        tracker: ProcessTracker | None = None,
        extra_secret_names: Iterable[str] = (),
        *,
        sandbox: Sandbox | None = None,
        startup_seconds: float = BACKGROUND_STARTUP_SECONDS,
        file_state: FileStateStore | None = None,
    ) -> None:
        self.tracker = tracker or ProcessTracker()
        # Where the command's changes to the project are recorded, as the edit tools record theirs.
        self.file_state = file_state if file_state is not None else FileStateStore()
        self.extra_secret_names = tuple(extra_secret_names)
        # None: no sandbox configured (a tool built by hand); the server and the CLI always pass theirs.
        self.sandbox = sandbox
        self.startup_seconds = startup_seconds

    def time_limit(self, args: RunTerminalCommandArgs) -> float | None:
        # Our own stop sequence (SIGTERM, grace, SIGKILL, drain) must finish before the executor gives up.
        return args.timeout + KILL_GRACE_SECONDS + _DRAIN_SECONDS + 5.0

    def permission(self, args: RunTerminalCommandArgs, ctx: ToolContext) -> PermissionAction:
        where = args.workingDirectory or "."
        mode = "in the background" if not args.waitForCompletion else f"timeout {args.timeout:g} s"
        return PermissionAction(PermissionKind.EXECUTE, target=args.command, detail=f"in {where} ({mode})")

    async def run(self, args: RunTerminalCommandArgs, ctx: ToolContext) -> ToolOutput:
        if not args.command.strip():
            raise ToolError(
                "E_EMPTY_COMMAND", user_text("the command is empty"), user_text("Send the command to run.")
            )
        cwd = self._working_directory(args, ctx)
        mode = self.run_mode(ctx)
        output = await self._run_once(args, ctx, cwd, mode)
        if output.details.pop("overlay_failed", None):
            # The supervisor could not mount the overlay and did not run the command; the next preparation
            # knows (``mark_broken``) and compares the project before and after instead.
            output = await self._run_once(args, ctx, cwd, mode)
        return output

    async def _run_once(
        self, args: RunTerminalCommandArgs, ctx: ToolContext, cwd: Path, mode: RunMode
    ) -> ToolOutput:
        prepared = self._prepare(args.command, cwd, ctx.root_dir, mode, mask_secrets=not ctx.approved)
        logs = session_logs_dir(ctx)
        capture = ChangeCapture(
            ctx.root_dir,
            ctx.session_id,
            self.file_state,
            prepared,
            mode,
            server_dirs=(os.path.realpath(logs),),
        )
        log_path = logs / f"{ctx.call_id or 'call'}-{uuid.uuid4().hex[:8]}.log"
        try:
            await capture.begin()
        except BaseException:
            prepared.cleanup()
            raise
        if not args.waitForCompletion:
            return await self._run_in_background(args, ctx, cwd, prepared, capture, log_path, mode)
        finishing: asyncio.Future[ChangeReport] | None = None
        try:
            output = await self._run_to_completion(args, cwd, prepared, log_path, mode, ctx.redact)
            finishing = asyncio.ensure_future(capture.finish_async())
            return _with_changes(output, await asyncio.shield(finishing), capture)
        except asyncio.CancelledError:
            if finishing is None:
                # Stopped (everything below the supervisor is gone by now): what it wrote reaches the project
                # as it would have without the overlay, and the turn's undo covers it.
                capture.finish()
            raise
        finally:
            if finishing is None or finishing.done():
                prepared.cleanup()
            else:  # cancelled while its changes are applied: the scratch dirs go once that is done
                finishing.add_done_callback(lambda _done: prepared.cleanup())

    def run_mode(self, ctx: ToolContext) -> RunMode:
        """The mode the policy decided for this call; without one (a tool called outside the executor's
        policy), sandboxed when a sandbox is configured and works. Refused when the mode cannot be
        honoured."""
        status = self.sandbox.status if self.sandbox is not None else None
        mode = ctx.run_mode
        if mode is None:
            if status is None or (not status.active and not status.required):
                return "unsandboxed"
            mode = "sandboxed"
        if mode == "unsandboxed":
            if status is not None and status.required:
                raise ToolError(
                    "E_SANDBOX_REQUIRED",
                    user_text("the administrator requires every command to run in the sandbox"),
                    user_text("Run a command that works inside the sandbox."),
                )
            return mode
        if status is None or not status.active:
            why = status.reason if status is not None else "no sandbox is configured"
            raise ToolError(
                "E_SANDBOX_UNAVAILABLE",
                user_text("the command was to run in the sandbox, and none is available: %1", why),
                user_text("Ask the user; the administrator can install bubblewrap."),
            )
        return mode

    def _prepare(
        self, command: str, cwd: Path, root: Path, mode: RunMode, *, mask_secrets: bool
    ) -> PreparedCommand:
        if mode == "unsandboxed" or self.sandbox is None:
            return PreparedCommand(["bash", "-c", command], self._environment(), cwd, "none")
        try:
            # Secret files are masked unless the user approved this very command (whose card named them).
            return self.sandbox.prepare(
                command, cwd, root, mode, os.environ, overlay=True, mask_secrets=mask_secrets
            )
        except SandboxUnavailable as error:
            raise ToolError(
                "E_SANDBOX_UNAVAILABLE", user_text("no sandbox is available: %1", error)
            ) from None

    def _working_directory(self, args: RunTerminalCommandArgs, ctx: ToolContext) -> Path:
        if not args.workingDirectory:
            return ctx.root_dir.resolve()
        cwd = resolve_in_root(ctx.root_dir, args.workingDirectory)  # refuses a directory outside the root
        if not cwd.is_dir():
            raise ToolError(
                "E_PATH_NOT_FOUND",
                user_text(
                    "working directory %1 does not exist or is not a directory", repr(args.workingDirectory)
                ),
                user_text("Use an existing directory relative to the project root (check with ls)."),
            )
        return cwd

    def _environment(self) -> dict[str, str]:
        env = scrub_environment(os.environ, self.extra_secret_names)
        env.update(_NON_INTERACTIVE_ENV)
        return env

    async def _run_to_completion(
        self,
        args: RunTerminalCommandArgs,
        cwd: Path,
        prepared: PreparedCommand,
        log_path: Path,
        mode: RunMode,
        redact: Callable[[str], str] | None = None,
    ) -> ToolOutput:
        capture = OutputCapture(log_path, OUTPUT_LIMIT_CHARS)
        process = await spawn_argv(prepared.argv, prepared.cwd, prepared.env)
        reader = asyncio.ensure_future(_read_into(process, capture))
        timed_out = left_behind = False
        try:
            if not await wait_for_exit(process, args.timeout):
                timed_out = True
                await terminate_group(process)
            await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
            if group_alive(process.pid):
                # Children the command left running still hold the pipe: stop them rather than orphan them.
                left_behind = True
                await terminate_group(process, grace=_CANCEL_GRACE_SECONDS)
            await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
            if not reader.done():  # a daemon that left our process group still holds the pipe
                reader.cancel()
        except asyncio.CancelledError:
            await terminate_group(process, grace=_CANCEL_GRACE_SECONDS)
            reader.cancel()
            raise
        finally:
            capture.close()
        output = _report(args, cwd, process.returncode, capture, timed_out, left_behind, redact)
        return _with_sandbox_note(output, prepared, mode)

    async def _run_in_background(
        self,
        args: RunTerminalCommandArgs,
        ctx: ToolContext,
        cwd: Path,
        prepared: PreparedCommand,
        capture: ChangeCapture,
        log_path: Path,
        mode: RunMode,
    ) -> ToolOutput:
        def on_exit() -> None:
            """Everything below the supervisor has ended: apply its changes, then remove the scratch dirs."""
            try:
                report = capture.finish()
                entry.changes = report.details()
                entry.changes_text = report.text()
            finally:
                prepared.cleanup()

        try:
            entry = await self.tracker.start(
                args.command,
                prepared.cwd,
                prepared.env,
                ctx.session_id,
                log_path,
                argv=prepared.argv,
                on_exit=on_exit,
            )
        except BaseException:
            prepared.cleanup()
            raise
        await _first_moments(entry, self.startup_seconds)
        if not entry.running and capture.overlay_failed is not None:
            return ToolOutput("", details={"overlay_failed": capture.overlay_failed})
        first_output = "".join(entry.first_output).rstrip("\n") or "(no output yet)"
        state = "is running in the background" if entry.running else f"exited with code {entry.returncode}"
        text = (
            f"Started background process {entry.process_id} (pid {entry.pid}); it {state}.\n"
            f"Working directory: {display_path(cwd, ctx.root_dir.resolve())}\n"
            f"Log file (read it with read_file_range): {entry.log_path}\n"
            f"First output:\n{first_output}"
        )
        if entry.changes_text:
            text += "\n" + entry.changes_text
        details = {**entry.summary(), "run_mode": mode, "sandbox": prepared.layer, **(entry.changes or {})}
        if entry.running and prepared.overlay is not None:
            text += (
                "\n[It writes into the sandbox's overlay: its changes reach the project (and the review) "
                "when it exits.]"
            )
        return ToolOutput(text, details=details)


def _with_changes(output: ToolOutput, report: ChangeReport, capture: ChangeCapture) -> ToolOutput:
    """Add what became of the command's changes to the project (applied, dropped, without undo)."""
    if capture.overlay_failed is not None:
        output.details["overlay_failed"] = capture.overlay_failed
        return output
    text = report.text()
    if text:
        output.content += "\n" + text
    output.details.update(report.details())
    return output


# What a command's output shows when a program hit the file size bound (RLIMIT_FSIZE): bash reporting the
# signal (SIGXFSZ) that stopped it, or a program that ignores the signal getting EFBIG.
_FILE_SIZE_SIGNS = ("File size limit exceeded", "File too large")
_SIGXFSZ_STATUS = 128 + 25
# The supervisor's note when the process bound stopped a command (sandbox/supervisor.py).
_PROCESS_BOUND_SIGN = "(sandbox_max_processes)"


def _bound_hit(output: ToolOutput, prepared: PreparedCommand) -> str | None:
    """The sandbox bound the command ran into, said plainly with its setting, or None."""
    limits = prepared.limits
    if limits is None:
        return None
    if _PROCESS_BOUND_SIGN in output.content:
        output.details["sandbox_bound"] = "sandbox_max_processes"
        return (
            "[Stopped by a sandbox bound: the command had more than "
            f"{limits.max_processes} processes at once (c.HdspAgentApp.sandbox_max_processes); every process "
            "it started was stopped. Run fewer at a time (e.g. xargs -P 4), or ask the user to raise the "
            "bound.]"
        )
    if output.details.get("exit_code") == _SIGXFSZ_STATUS or any(
        sign in output.content for sign in _FILE_SIZE_SIGNS
    ):
        output.details["sandbox_bound"] = "sandbox_max_file_bytes"
        return (
            "[Stopped by a sandbox bound: a file reached the largest size a sandboxed command may write, "
            f"{limits.max_file_bytes:,} bytes (c.HdspAgentApp.sandbox_max_file_bytes); the program writing "
            "it was stopped and the file is cut there. Write less, or ask the user to raise the bound.]"
        )
    return None


def _with_sandbox_note(output: ToolOutput, prepared: PreparedCommand, mode: RunMode) -> ToolOutput:
    """Record how the command ran; after a failure in the sandbox, tell the model what the sandbox forbids (it
    cannot choose another mode: the user approves one when the policy asks), and which bound it hit."""
    output.details["run_mode"] = mode
    output.details["sandbox"] = prepared.layer
    bound = _bound_hit(output, prepared) if mode != "unsandboxed" else None
    if bound is not None:
        output.content += "\n" + bound
    elif mode != "unsandboxed" and output.details.get("exit_code") not in (0, None):
        network = "with network" if mode == "network" else "without network"
        output.content += (
            f"\n[Ran in the OS sandbox ({prepared.layer}, {network}): only the project is writable, except "
            "protected paths such as .git/hooks and .hdsp; $HOME is an empty scratch directory; processes "
            "and file sizes are limited. If it failed for that reason, tell the user what it needs.]"
        )
    return output


def _report(
    args: RunTerminalCommandArgs,
    cwd: Path,
    returncode: int | None,
    capture: OutputCapture,
    timed_out: bool,
    left_behind: bool,
    redact: Callable[[str], str] | None = None,
) -> ToolOutput:
    output = capture.text(redact).rstrip("\n")
    lines = [output if output else "(no output)"]
    if timed_out:
        lines.append(
            f"[Timed out after {args.timeout:g} s: the command and every process it started were stopped. "
            "Use a longer timeout, or waitForCompletion=false for long-running commands.]"
        )
    elif left_behind:
        lines.append(
            "[The command left processes running in the background; they were stopped. "
            "Use waitForCompletion=false to keep a process running.]"
        )
    lines.append(f"Exit code: {returncode}" + (" (killed by timeout)" if timed_out else ""))
    details: dict[str, object] = {"exit_code": returncode, "timed_out": timed_out, "cwd": str(cwd)}
    if capture.spilled:
        details["log_path"] = str(capture.log_path)
    return ToolOutput("\n".join(lines), details=details)


async def _read_into(process: asyncio.subprocess.Process, capture: OutputCapture) -> None:
    assert process.stdout is not None
    decoder = TextDecoder()
    while True:
        chunk = await process.stdout.read(READ_CHUNK_BYTES)
        capture.feed(decoder.feed(chunk, final=not chunk))
        if not chunk:
            return


async def _first_moments(entry: BackgroundProcess, seconds: float) -> None:
    """Give a background command a moment, so the model sees that it started (or failed straight away): until
    it
    exits, or shortly after its first output, at most ``seconds``."""
    deadline = time.monotonic() + seconds
    finished = asyncio.ensure_future(asyncio.shield(entry.pump)) if entry.pump else None
    first_output = asyncio.ensure_future(entry.first_output_seen.wait())
    try:
        waiting = {task for task in (finished, first_output) if task is not None}
        await asyncio.wait(waiting, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        if entry.running:  # output has begun: a little longer for the next lines
            await asyncio.sleep(max(0.0, min(_MORE_OUTPUT_SECONDS, deadline - time.monotonic())))
    finally:
        for task in (finished, first_output):
            if task is not None:
                task.cancel()
