"""Jupyter's kernel, session and contents managers without a server, for the command line.

The same classes the server uses by default, so ``hdsp-agent tools call run_cell`` behaves like the sidebar:
the notebook gets a session and a kernel, outputs go into the file through the contents manager. Every kernel
started here is shut down when the context exits: a command must not leave kernel processes behind.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_runtime_dir
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from jupyter_server.services.sessions.sessionmanager import SessionManager


class HeadlessKernelManager(AsyncMappingKernelManager):
    """Kernels whose stdout does not go to the command's stdout, which carries the JSON result."""

    async def start_kernel(self, **kwargs: Any) -> str:  # type: ignore[override]
        kwargs.setdefault("stdout", subprocess.DEVNULL)
        kernel_id: str = await super().start_kernel(**kwargs)
        return kernel_id


@dataclass
class HeadlessJupyter:
    kernel_manager: AsyncMappingKernelManager
    session_manager: SessionManager
    contents_manager: AsyncLargeFileManager


@asynccontextmanager
async def headless_jupyter(root_dir: Path) -> AsyncIterator[HeadlessJupyter]:
    root = str(root_dir)
    contents_manager = AsyncLargeFileManager(root_dir=root)
    # As the server does: connection files go to Jupyter's runtime directory, not the current directory.
    runtime_dir = Path(jupyter_runtime_dir())
    runtime_dir.mkdir(parents=True, exist_ok=True)
    kernel_manager = HeadlessKernelManager(root_dir=root, connection_dir=str(runtime_dir))
    session_manager = SessionManager(kernel_manager=kernel_manager, contents_manager=contents_manager)
    try:
        yield HeadlessJupyter(kernel_manager, session_manager, contents_manager)
    finally:
        await kernel_manager.shutdown_all()
        session_manager.close()
        kernel_manager.context.destroy(linger=0)
