"""The live kernel of a notebook: which kernel it is, and running code on it.

Which kernel: the one of the notebook's Jupyter session (what JupyterLab shows for that notebook); a notebook
without a session gets one the way JupyterLab creates it, so the user's notebook then shows that kernel. Only
the session manager and the ``MultiKernelManager`` API are used (``get_kernel``, ``.client()``, ``is_alive``,
``interrupt_kernel``, ``restart_kernel``), so local kernels and gateway kernels alike work.

Execution: every run gets its own kernel client with a fresh session id. A client that reused another's
session id would take over its ZMQ identity (ipykernel's ROUTER_HANDOVER) and hang the other one, e.g.
JupyterLab's. Messages are read with the channels' ``get_msg``, which every client implementation has (the
gateway client has no ZMQ sockets, so ``execute_interactive``'s poller cannot be used). ``input()`` cannot be
answered by an agent: requests go out with ``allow_stdin=False``, so the kernel raises at once instead of
waiting forever for a reply.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from queue import Empty
from typing import Any

from ...documents.gateway import notebook_name
from .gateway_channels import is_gateway_client, start_gateway_channels

E_KERNEL_DIED = "E_KERNEL_DIED"
E_NO_KERNEL = "E_NO_KERNEL"
E_NO_KERNEL_MANAGER = "E_NO_KERNEL_MANAGER"

# How often to check that the kernel process is still alive while waiting on it.
_ALIVE_POLL_SECONDS = 0.5
# How long a (starting) kernel gets to show that our iopub subscription is live.
KERNEL_READY_TIMEOUT = 60.0

MessageHandler = Callable[[dict[str, Any]], None]


class KernelDiedError(Exception):
    """The kernel process died (or was restarted by its restarter) while our request was pending."""


class KernelNotReadyError(Exception):
    pass


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _message_type(msg: dict[str, Any]) -> str:
    return str(msg.get("msg_type") or msg.get("header", {}).get("msg_type", ""))


def _session_path(session: dict[str, Any]) -> str:
    path = str(session.get("path") or (session.get("notebook") or {}).get("path") or "")
    drive, sep, rest = path.partition(":")
    return rest if sep and "/" not in drive and rest else path


async def session_kernel_id(session_manager: Any, path: str) -> str | None:
    """The kernel id of ``path``'s notebook session, or None if the notebook has no kernel."""
    sessions = await _maybe_await(session_manager.list_sessions())
    candidates = [session for session in sessions if _session_path(session) == path and session.get("kernel")]
    # A console can share the notebook's path; the notebook's own session wins.
    candidates.sort(key=lambda session: session.get("type") != "notebook")
    return str(candidates[0]["kernel"]["id"]) if candidates else None


async def start_notebook_session(session_manager: Any, path: str, kernel_name: str | None) -> str:
    """Create the notebook's session as JupyterLab would, with the kernel its metadata names (or default)."""
    if kernel_name is not None and not await _kernel_spec_exists(session_manager.kernel_manager, kernel_name):
        # The notebook names a kernel this server does not have; JupyterLab would offer the default one.
        kernel_name = None
    model = await session_manager.create_session(
        path=path, name=notebook_name(path), type="notebook", kernel_name=kernel_name
    )
    return str(model["kernel"]["id"])


async def _kernel_spec_exists(kernel_manager: Any, kernel_name: str) -> bool:
    spec_manager = getattr(kernel_manager, "kernel_spec_manager", None)
    if spec_manager is None:
        return True
    try:
        if inspect.iscoroutinefunction(spec_manager.get_all_specs):
            specs = await spec_manager.get_all_specs()
        else:  # local specs: a directory scan, kept off the event loop
            specs = await asyncio.to_thread(spec_manager.get_all_specs)
    except Exception:
        return True  # cannot tell: let the kernel manager decide
    return kernel_name in specs


@dataclass
class ExecutionReply:
    """The kernel's ``execute_reply``: status ok / error / aborted, the execution count, user expressions."""

    status: str
    execution_count: int | None = None
    user_expressions: dict[str, Any] = field(default_factory=dict)


class _DeathWatch:
    """Notices a dying kernel: the restarter's callbacks where the manager has them, ``is_alive`` polls."""

    def __init__(self, kernel_manager: Any, kernel_id: str) -> None:
        self.kernel_manager = kernel_manager
        self.kernel_id = kernel_id
        self.died = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._poller: asyncio.Task[None] | None = None
        self._registered: list[str] = []

    def _on_death(self) -> None:
        self._loop.call_soon_threadsafe(self.died.set)

    def __enter__(self) -> _DeathWatch:
        for event in ("restart", "dead"):
            try:
                self.kernel_manager.add_restart_callback(self.kernel_id, self._on_death, event)
                self._registered.append(event)
            except Exception:  # a manager without restart callbacks (e.g. remote kernels): polling covers it
                pass
        self._poller = asyncio.ensure_future(self._poll())
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._poller is not None:
            self._poller.cancel()
        for event in self._registered:
            try:
                self.kernel_manager.remove_restart_callback(self.kernel_id, self._on_death, event)
            except Exception:
                pass

    async def _poll(self) -> None:
        while not self.died.is_set():
            await asyncio.sleep(_ALIVE_POLL_SECONDS)
            try:
                # Gone from the manager (shut down, culled) counts as dead.
                alive = self.kernel_id in self.kernel_manager and bool(
                    await _maybe_await(self.kernel_manager.is_alive(self.kernel_id))
                )
            except Exception:
                continue
            if not alive:
                self.died.set()


class KernelRun:
    """One execution on a kernel, with a client of its own; ``run`` returns the kernel's reply.

    ``on_message`` receives every iopub message of this execution (nothing from other clients' requests).
    """

    def __init__(
        self,
        kernel_manager: Any,
        kernel_id: str,
        code: str,
        on_message: MessageHandler,
        *,
        silent: bool = False,
        store_history: bool = True,
        user_expressions: dict[str, str] | None = None,
        ready_timeout: float = KERNEL_READY_TIMEOUT,
    ) -> None:
        self.kernel_manager = kernel_manager
        self.kernel_id = kernel_id
        self.code = code
        self.on_message = on_message
        self.silent = silent
        self.store_history = store_history
        self.user_expressions = user_expressions or {}
        self.ready_timeout = ready_timeout

    async def run(self) -> ExecutionReply:
        # Managers disagree on how they report an unknown id (KeyError, HTTP 404): ask before asking for it.
        if self.kernel_id not in self.kernel_manager:
            raise KernelDiedError(f"kernel {self.kernel_id} is not running")
        kernel = self.kernel_manager.get_kernel(self.kernel_id)
        await self._until_started(kernel)
        client = kernel.client()
        # The fresh session id is the point: see the module docstring.
        client.session.session = uuid.uuid4().hex
        channels = {"shell": True, "iopub": True, "stdin": False, "hb": False, "control": True}
        if is_gateway_client(client):
            await start_gateway_channels(client, **channels)
        else:
            await _maybe_await(client.start_channels(**channels))
        try:
            with _DeathWatch(self.kernel_manager, self.kernel_id) as watch:
                await self._until_subscribed(client, watch)
                msg_id = client.execute(
                    self.code,
                    silent=self.silent,
                    store_history=self.store_history,
                    user_expressions=self.user_expressions,
                    allow_stdin=False,
                    stop_on_error=True,
                )
                return await self._collect(client, msg_id, watch)
        finally:
            await _maybe_await(client.stop_channels())

    async def _until_started(self, kernel: Any) -> None:
        """A pending kernel (``use_pending_kernels``) has no connection info until its launch completes.

        Only then: other managers' ``ready`` may never resolve (a gateway kernel's stays pending forever).
        """
        ready = getattr(kernel, "ready", None)
        if ready is None or not getattr(self.kernel_manager, "use_pending_kernels", False):
            return
        future = ready if isinstance(ready, asyncio.Future) else asyncio.wrap_future(ready)
        try:
            await asyncio.wait_for(asyncio.shield(future), self.ready_timeout)
        except asyncio.TimeoutError:
            raise KernelNotReadyError(f"the kernel did not start within {self.ready_timeout:g} s") from None
        except Exception as error:
            raise KernelNotReadyError(f"the kernel failed to start: {error}") from None

    async def _until_subscribed(self, client: Any, watch: _DeathWatch) -> None:
        """Wait until our iopub socket receives messages: output published before that would be lost.

        Any iopub message proves the subscription; a kernel_info request (on the control channel, which a busy
        kernel still answers) makes the kernel publish a status message. This also waits out a starting
        kernel.
        """
        deadline = time.monotonic() + self.ready_timeout
        wait = 0.05
        while True:
            _request_kernel_info(client)
            try:
                await client.get_iopub_msg(timeout=wait)
                return
            except Empty:
                pass
            if watch.died.is_set():
                raise KernelDiedError("the kernel died before it could run the code")
            if time.monotonic() > deadline:
                raise KernelNotReadyError(f"the kernel did not respond within {self.ready_timeout:g} s")
            wait = min(wait * 2, 1.0)

    async def _collect(self, client: Any, msg_id: str, watch: _DeathWatch) -> ExecutionReply:
        outputs_done = asyncio.ensure_future(self._iopub_until_idle(client, msg_id))
        reply_task = asyncio.ensure_future(_shell_reply(client, msg_id))
        death = asyncio.ensure_future(watch.died.wait())
        pending: set[asyncio.Future[Any]] = {outputs_done, reply_task}
        try:
            while pending:
                done, _ = await asyncio.wait(pending | {death}, return_when=asyncio.FIRST_COMPLETED)
                if death in done and pending - done:
                    raise KernelDiedError("the kernel died while running the code")
                for task in done - {death}:
                    task.result()
                pending -= done
        finally:
            for task in (outputs_done, reply_task, death):
                task.cancel()
        content = reply_task.result().get("content", {})
        return ExecutionReply(
            status=str(content.get("status", "ok")),
            execution_count=content.get("execution_count"),
            user_expressions=content.get("user_expressions") or {},
        )

    async def _iopub_until_idle(self, client: Any, msg_id: str) -> None:
        while True:
            try:
                msg = await client.get_iopub_msg(timeout=1.0)
            except Empty:
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            self.on_message(msg)
            content = msg.get("content", {})
            if _message_type(msg) == "status" and content.get("execution_state") == "idle":
                return


async def _shell_reply(client: Any, msg_id: str) -> dict[str, Any]:
    while True:
        try:
            msg: dict[str, Any] = await client.get_shell_msg(timeout=1.0)
        except Empty:
            continue
        if msg.get("parent_header", {}).get("msg_id") == msg_id:
            return msg


def _request_kernel_info(client: Any) -> None:
    control = getattr(client, "control_channel", None)
    if control is not None:
        control.send(client.session.msg("kernel_info_request"))
    else:
        client.kernel_info()


async def interrupt(kernel_manager: Any, kernel_id: str) -> None:
    await _maybe_await(kernel_manager.interrupt_kernel(kernel_id))


async def restart(kernel_manager: Any, kernel_id: str) -> None:
    await _maybe_await(kernel_manager.restart_kernel(kernel_id))


def kernel_spec_language(kernel_manager: Any, kernel_id: str) -> str | None:
    """The language in the kernel's spec, when the manager can tell (local specs). Blocking: reads a file."""
    try:
        kernel_name = kernel_manager.get_kernel(kernel_id).kernel_name
        spec = kernel_manager.kernel_spec_manager.get_kernel_spec(kernel_name)
    except Exception:
        return None
    language = getattr(spec, "language", None)
    return str(language).lower() if language else None
