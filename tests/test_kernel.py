"""The notebook's kernel and running code on it (``hdsp_agent.tools.jupyter.kernel``), on a real Jupyter
server.

Tests that use pytest-jupyter's server fixtures are plain ``async def`` (pytest-jupyter runs them on its
loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from jupyter_server.services.sessions.sessionmanager import SessionManager

from hdsp_agent.tools.jupyter.kernel import (
    ExecutionReply,
    KernelDiedError,
    KernelRun,
    session_kernel_id,
    start_notebook_session,
)
from hdsp_agent.tools.jupyter.outputs import OutputCollector, strip_ansi


async def run(
    kernel_manager: Any, kernel_id: str, code: str, **options: Any
) -> tuple[ExecutionReply, OutputCollector]:
    collector = OutputCollector()
    reply = await KernelRun(kernel_manager, kernel_id, code, collector.handle, **options).run()
    return reply, collector


async def test_a_notebook_without_session_gets_one_as_jupyterlab_creates_it(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "sub").mkdir()
    sessions, kernels = jp_serverapp.session_manager, jp_serverapp.kernel_manager
    try:
        assert await session_kernel_id(sessions, "sub/nb.ipynb") is None
        # The metadata names a kernel this server lacks: like JupyterLab, fall back to the default kernel.
        kernel_id = await start_notebook_session(sessions, "sub/nb.ipynb", "no-such-kernel")
        listed = await sessions.list_sessions()
        assert [(s["path"], s["name"], s["type"], s["kernel"]["id"]) for s in listed] == [
            ("sub/nb.ipynb", "nb.ipynb", "notebook", kernel_id)
        ]
        assert kernels.get_kernel(kernel_id).kernel_name == kernels.default_kernel_name
        assert await session_kernel_id(sessions, "sub/nb.ipynb") == kernel_id
        # The kernel runs in the notebook's directory, as in JupyterLab.
        _, collector = await run(kernels, kernel_id, "import os; print(os.getcwd())")
        assert Path(collector.outputs[0].text.strip()) == (jp_root_dir / "sub").resolve()
    finally:
        await kernels.shutdown_all()


async def test_runs_collect_outputs_errors_refuse_stdin_and_silent_runs_keep_the_count(
    jp_serverapp: Any,
) -> None:
    kernels = jp_serverapp.kernel_manager
    kernel_id = await start_notebook_session(jp_serverapp.session_manager, "nb.ipynb", None)
    try:
        reply, collector = await run(kernels, kernel_id, "print(6*7)\n6*7")
        assert (reply.status, reply.execution_count, collector.execution_count) == ("ok", 1, 1)
        assert [o.output_type for o in collector.outputs] == ["stream", "execute_result"]
        assert collector.outputs[0].text == "42\n" and collector.outputs[1].data["text/plain"] == "42"

        reply, collector = await run(kernels, kernel_id, "def f():\n    return 1/0\nf()")
        assert reply.status == "error"
        error = collector.outputs[-1]
        assert (error.output_type, error.ename, error.evalue) == (
            "error",
            "ZeroDivisionError",
            "division by zero",
        )
        assert any("return 1/0" in strip_ansi(line) for line in error.traceback)

        started = time.monotonic()
        reply, collector = await run(kernels, kernel_id, "answer = input('name? ')")
        assert time.monotonic() - started < 10, "input() must fail at once, not wait for a reply nobody sends"
        assert (reply.status, collector.outputs[-1].ename) == ("error", "StdinNotImplementedError")

        reply, collector = await run(
            kernels,
            kernel_id,
            "",
            silent=True,
            store_history=False,
            user_expressions={"value": "6*7"},
        )
        assert reply.status == "ok" and collector.outputs == []
        assert reply.user_expressions["value"]["data"]["text/plain"] == "42"

        reply, _ = await run(kernels, kernel_id, "'after'")
        assert reply.execution_count == 4, "the silent run must not have moved the execution count"
    finally:
        await kernels.shutdown_all()


async def test_an_agent_run_leaves_another_clients_connection_working(jp_serverapp: Any) -> None:
    """JupyterLab's connection keeps the manager's session id; ours must not take over its ZMQ identity."""
    kernels = jp_serverapp.kernel_manager
    kernel_id = await start_notebook_session(jp_serverapp.session_manager, "nb.ipynb", None)
    other = kernels.get_kernel(kernel_id).client()
    other.start_channels()
    try:
        await other.wait_for_ready(timeout=30)

        async def other_executes(code: str) -> dict[str, Any]:
            msg_id = other.execute(code)
            while True:
                reply: dict[str, Any] = await other.get_shell_msg(timeout=20)
                if reply["parent_header"].get("msg_id") == msg_id:
                    return reply

        theirs, (ours, collector) = await asyncio.gather(
            other_executes("import time; time.sleep(0.5)"), run(kernels, kernel_id, "print('ours')")
        )
        assert theirs["content"]["status"] == "ok"
        assert ours.status == "ok" and collector.outputs[0].text == "ours\n"
        # After our client is gone, theirs still gets its replies.
        again = await other_executes("1 + 1")
        assert again["content"]["status"] == "ok"
    finally:
        other.stop_channels()
        await kernels.shutdown_all()


@pytest.mark.fault
async def test_a_kernel_that_dies_mid_run_raises_kernel_died(jp_serverapp: Any) -> None:
    kernels = jp_serverapp.kernel_manager
    kernel_id = await start_notebook_session(jp_serverapp.session_manager, "nb.ipynb", None)
    try:
        await run(kernels, kernel_id, "x = 1")
        # KernelDiedError, not the 30 s TimeoutError: the death is noticed, not waited out.
        with pytest.raises(KernelDiedError):
            await asyncio.wait_for(run(kernels, kernel_id, "import os; os._exit(1)"), timeout=30)
    finally:
        # The restarter may be bringing the dead kernel back; shutting down a kernel whose start is still
        # pending fails inside jupyter_client ("Exception is not set"), so let the restart settle first.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(kernels.get_kernel(kernel_id).ready), timeout=30)
        await kernels.shutdown_all()


async def test_unknown_kernel_id_is_reported_as_not_running(jp_serverapp: Any) -> None:
    with pytest.raises(KernelDiedError, match="not running"):
        await run(jp_serverapp.kernel_manager, "no-such-kernel", "1")


@pytest.mark.asyncio
async def test_a_pending_kernel_is_waited_for_before_running(tmp_path: Path) -> None:
    """Servers configured with use_pending_kernels hand out a kernel id before the kernel has started."""
    kernels = AsyncMappingKernelManager(
        root_dir=str(tmp_path), connection_dir=str(tmp_path), use_pending_kernels=True
    )
    sessions = SessionManager(
        kernel_manager=kernels, contents_manager=AsyncLargeFileManager(root_dir=str(tmp_path))
    )
    try:
        kernel_id = await start_notebook_session(sessions, "nb.ipynb", None)
        reply, collector = await asyncio.wait_for(run(kernels, kernel_id, "print('ready')"), timeout=60)
        assert (reply.status, collector.outputs[0].text) == ("ok", "ready\n")
    finally:
        await kernels.shutdown_all()
        sessions.close()
