"""One connection to one MCP server (stdio or Streamable HTTP), through the ``mcp`` SDK's ``ClientSession``.

The SDK's transports are anyio context managers that must be entered and left by one task, so each connection
has an owner task: it starts the transport, initializes the session, then waits until it is told to stop or
the server goes away. Callers in any task use the session it publishes.

- Lazy: nothing starts until ``connect`` (the first refresh of the catalog, or the first call).
- A stdio server's stderr goes to a temp file; when the server dies, the error carries its last lines.
- A crashed or unreachable server is reported (``state``/``message``) and started again on next use.
- Calls time out after the server's ``timeout`` seconds without news: each progress notification restarts the
  clock, so a long job that reports progress keeps running.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from typing import IO, Any, Literal

import anyio
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from .. import __version__
from ..tools.base import ErrorCode, ToolError
from ..user_text import user_text
from .config import McpServerSpec

ConnectionState = Literal["idle", "connecting", "connected", "error", "closed"]
ProgressCallback = Callable[[float, float | None, str | None], None]
CLIENT_INFO = types.Implementation(name="hdsp-agent", version=__version__)
# Short: it ends an error message the model reads, which is cut at 1000 characters.
STDERR_TAIL_CHARS = 600
E_MCP_ERROR = "E_MCP_ERROR"
E_MCP_SERVER_DOWN = "E_MCP_SERVER_DOWN"
E_MCP_TOOL_ERROR = "E_MCP_TOOL_ERROR"
_CLOSED_BY_PEER = -32000  # mcp_types.CONNECTION_CLOSED: the SDK's code when the stream ends under a request


class McpConnection:
    """A server's live session, its state for the status report, and its tool listing."""

    def __init__(
        self,
        spec: McpServerSpec,
        *,
        root_dir: Path,
        on_tools_changed: Callable[[McpConnection], None] | None = None,
        connect_timeout: float = 30.0,
        logger: logging.Logger | None = None,
    ) -> None:
        self.spec = spec
        self.root_dir = root_dir
        self.connect_timeout = connect_timeout
        self.on_tools_changed = on_tools_changed
        self.log = logger or logging.getLogger("hdsp_agent.mcp")
        self.state: ConnectionState = "idle"
        self.message = ""
        self.server_name = ""
        self.tools: list[types.Tool] | None = None
        # Set by a tools/list_changed notification: the next refresh lists the tools again.
        self.tools_stale = True
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._stderr: IO[str] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    # -- lifecycle -------------------------------------------------------------------------------------------

    async def connect(self) -> ClientSession:
        """The live session, starting the server (again, after a crash) when there is none."""
        async with self._lock:
            if self._session is not None and self.state == "connected":
                return self._session
            if self._owner is not None:  # a dead owner still unwinding: let it finish first
                await asyncio.wait({self._owner}, timeout=10)
            self.state, self.message = "connecting", ""
            ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._owner = asyncio.create_task(self._own(ready, self._stop), name=f"mcp:{self.name}")
            try:
                self._session = await ready
            except Exception as error:
                await asyncio.wait({self._owner}, timeout=10)
                self.state, self.message = "error", self._describe_failure("could not start", error)
                self.tools_stale = True
                raise ToolError(
                    E_MCP_SERVER_DOWN, user_text("MCP server %1 %2", repr(self.name), self.message), _RETRY
                ) from None
            self.state = "connected"
            return self._session

    async def close(self) -> None:
        owner, stop = self._owner, self._stop
        if owner is None or stop is None:
            return
        stop.set()
        await asyncio.wait({owner}, timeout=15)
        if not owner.done():
            owner.cancel()
        self._session, self._owner = None, None
        if self.state != "error":
            self.state = "closed"
        if self._stderr is not None:
            self._stderr.close()

    async def _own(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        """The owner task: every context the SDK needs is entered and left here."""
        closed = asyncio.Event()
        failure: BaseException | None = None
        try:
            async with AsyncExitStack() as stack:
                read_stream, write_stream = await stack.enter_async_context(self._transport(stack))
                relay_send, relay_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
                relays = await stack.enter_async_context(anyio.create_task_group())
                # Registered after the task group, so it runs first on the way out: the group then need not
                # wait for the relay to finish on its own.
                stack.callback(relays.cancel_scope.cancel)
                relays.start_soon(_relay, read_stream, relay_send, closed)
                session = await stack.enter_async_context(
                    ClientSession(
                        relay_receive, write_stream, message_handler=self._on_message, client_info=CLIENT_INFO
                    )
                )
                with anyio.fail_after(self.connect_timeout):
                    initialized = await session.initialize()
                self.server_name = initialized.server_info.name
                ready.set_result(session)
                await _first_of(stop.wait(), closed.wait())
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(RuntimeError("the connection was canceled while starting"))
            raise
        except Exception as error:
            failure = _root_cause(error)
            if not ready.done():
                ready.set_exception(failure)
        finally:
            self._session = None
            if ready.done() and not ready.cancelled() and ready.exception() is None and not stop.is_set():
                # The server went away on its own: report it; the next use starts it again.
                gone = "exited" if self.spec.transport == "stdio" else "closed the connection"
                self.state, self.message = (
                    "error",
                    self._describe_failure("failed" if failure else gone, failure),
                )
                self.tools_stale = True
                self.log.warning("hdsp-agent: MCP server %s %s", self.name, self.message)

    def _transport(self, stack: AsyncExitStack) -> AbstractAsyncContextManager[Any]:
        spec = self.spec
        if spec.transport == "http":
            http_client = create_mcp_http_client(headers=dict(spec.headers))
            stack.push_async_callback(http_client.aclose)
            return streamable_http_client(spec.url, http_client=http_client)
        cwd = Path(spec.cwd).expanduser() if spec.cwd else self.root_dir
        if not cwd.is_absolute():
            cwd = self.root_dir / cwd
        if self._stderr is not None:
            self._stderr.close()
        # The server writes into it directly; reading with pread leaves the file offset it shares alone.
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        params = StdioServerParameters(
            command=spec.command, args=list(spec.args), env=dict(spec.env), cwd=cwd
        )
        return stdio_client(params, errlog=self._stderr)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_stale = True
            if self.on_tools_changed is not None:
                self.on_tools_changed(self)
        elif isinstance(message, Exception):
            self.log.warning("hdsp-agent: MCP server %s sent something unreadable: %s", self.name, message)

    # -- requests --------------------------------------------------------------------------------------------

    async def list_tools(self) -> list[types.Tool]:
        """Every tool the server offers (all pages); remembered for the catalog and the status report."""
        session = await self.connect()
        tools: list[types.Tool] = []
        cursor: str | None = None
        try:
            with anyio.fail_after(self.connect_timeout):
                while True:
                    params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                    page = await session.list_tools(params=params)
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
        except (MCPError, TimeoutError, OSError) as error:
            raise await self._request_failed("tools/list", error) from None
        self.tools, self.tools_stale = tools, False
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> types.CallToolResult:
        session = await self.connect()
        quiet_limit = timeout or self.spec.timeout
        # The deadline moves with each progress notification: the limit is on silence, not on total time.
        scope = anyio.CancelScope(deadline=anyio.current_time() + quiet_limit)

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            scope.deadline = anyio.current_time() + quiet_limit
            if on_progress is not None:
                on_progress(progress, total, message)

        result: Any = None
        try:
            with scope:
                result = await session.call_tool(name, arguments, progress_callback=progress)
        except (MCPError, OSError) as error:
            raise await self._request_failed(f"tools/call {name}", error) from None
        except (RuntimeError, ValueError) as error:  # an answer the SDK could not use (e.g. input required)
            raise ToolError(
                E_MCP_ERROR, user_text("MCP server %1: %2", repr(self.name), error), None
            ) from None
        if scope.cancelled_caught:
            raise ToolError(
                ErrorCode.TIMEOUT.value,
                user_text(
                    "MCP tool %1 on %2 sent no result or progress for %3 s and was canceled",
                    repr(name),
                    repr(self.name),
                    format(quiet_limit, "g"),
                ),
                user_text("Try a smaller request; the server may be stuck."),
            )
        if not isinstance(result, types.CallToolResult):
            raise ToolError(
                E_MCP_ERROR,
                user_text("MCP server %1 answered %2", repr(self.name), type(result).__name__),
                None,
            )
        return result

    async def _request_failed(self, what: str, error: BaseException) -> ToolError:
        if isinstance(error, MCPError) and error.error.code != _CLOSED_BY_PEER:
            return ToolError(
                E_MCP_ERROR,
                user_text("MCP server %1 refused %2: %3", repr(self.name), what, error.error.message),
                None,
            )
        # The connection is gone (the process died, the HTTP server went away): report, restart next time.
        owner, stop = self._owner, self._stop
        if owner is not None and not owner.done():
            if stop is not None and isinstance(error, (OSError, TimeoutError)):
                stop.set()
            await asyncio.wait({owner}, timeout=5)
        if self.state != "error":
            self.state, self.message = "error", self._describe_failure("failed", error)
        self._session = None
        self.tools_stale = True
        return ToolError(
            E_MCP_SERVER_DOWN, user_text("MCP server %1 %2", repr(self.name), self.message), _RETRY
        )

    # -- reporting -------------------------------------------------------------------------------------------

    def _describe_failure(self, what: str, error: BaseException | None) -> str:
        parts = [what]
        if error is not None:
            parts.append(f": {type(error).__name__}: {error}".rstrip(": "))
        tail = self.stderr_tail()
        if tail:
            parts.append(f"\nLast stderr lines:\n{tail}")
        return "".join(parts)

    def stderr_tail(self, chars: int = STDERR_TAIL_CHARS) -> str:
        stream = self._stderr
        if stream is None or stream.closed:
            return ""
        fd = stream.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - chars)
        text = os.pread(fd, size - start, start).decode("utf-8", errors="replace")
        if start and "\n" in text:
            text = text.split("\n", 1)[1]  # start on a whole line
        return text.strip()

    def status(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.spec.source,
            "transport": self.spec.transport,
            "state": self.state,
            "message": self.message or None,
            "server_name": self.server_name or None,
        }


_RETRY = "The server will be started again on the next call; tell the user if it keeps failing."


async def _relay(
    source: MemoryObjectReceiveStream[Any], sink: MemoryObjectSendStream[Any], closed: asyncio.Event
) -> None:
    """Forward the transport's messages to the session, and notice when the server closes the stream."""
    async with sink:
        try:
            async for item in source:
                await sink.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
    closed.set()


def _root_cause(error: BaseException) -> BaseException:
    """The first real error inside anyio's exception groups (their own message says nothing useful)."""
    inner = getattr(error, "exceptions", None)  # BaseExceptionGroup (a builtin only from Python 3.11)
    while isinstance(inner, tuple) and inner:
        error = inner[0]
        inner = getattr(error, "exceptions", None)
    return error


async def _first_of(*waits: Any) -> None:
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
