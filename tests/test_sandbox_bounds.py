"""The sandbox's bounds stop a command and say so (issue 24, class 9): real bubblewrap, low limits, bounded
loops only (every flood here ends by itself after a few hundred processes, and the watchdog stops it well
before). The tool result names the bound, its value and its setting in plain words.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from test_sandbox_exec import RecordingApprover, call_terminal, processes_with

from hdsp_agent.sandbox import Sandbox, SandboxLimits, SandboxSettings

pytestmark = pytest.mark.asyncio

LOW = SandboxLimits(max_processes=24, max_file_bytes=8192, cpu_seconds=10)


@pytest.fixture
def sandbox() -> Sandbox:
    sandbox = Sandbox(SandboxSettings(layer="bubblewrap", limits=LOW))
    if sandbox.status.layer != "bubblewrap":
        pytest.skip(f"SANDBOX LAYER BUBBLEWRAP NOT AVAILABLE HERE: {sandbox.status.reason}")
    return sandbox


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


async def run(sandbox: Sandbox, root: Path, command: str) -> Any:
    return await call_terminal(sandbox, root, RecordingApprover(), command=command, timeout=60)


@pytest.mark.parametrize(
    "flood",
    [
        "for i in $(seq 1 400); do sleep {marker} & done; wait; echo finished",
        "seq 1 400 | xargs -P 0 -n 1 sleep {marker}; echo finished",
    ],
    ids=["background-loop", "xargs-P0"],
)
async def test_process_creation_is_bounded_and_the_result_names_the_bound(
    sandbox: Sandbox, project: Path, flood: str
) -> None:
    marker = f"613.{uuid.uuid4().int % 10**6}"
    result = await run(sandbox, project, flood.format(marker=marker))
    assert "finished" not in result.content
    assert "more than 24 processes" in result.content
    assert "sandbox_max_processes" in result.content
    assert result.details["sandbox_bound"] == "sandbox_max_processes"
    assert processes_with(f"sleep {marker}") == []


@pytest.mark.parametrize(
    "writer",
    [
        "yes hdsp-marker | head -c 100000 > big.txt",  # head dies of SIGXFSZ
        "python3 -c \"open('big.txt', 'w').write('x' * 100000)\"",  # Python ignores it: EFBIG
    ],
    ids=["signal", "efbig"],
)
async def test_a_file_size_overrun_is_stopped_and_the_result_names_the_bound(
    sandbox: Sandbox, project: Path, writer: str
) -> None:
    result = await run(sandbox, project, writer)
    assert (project / "big.txt").stat().st_size <= LOW.max_file_bytes
    assert "8,192 bytes" in result.content and "sandbox_max_file_bytes" in result.content, result.content
    assert result.details["sandbox_bound"] == "sandbox_max_file_bytes"


async def test_an_ordinary_failure_names_no_bound(sandbox: Sandbox, project: Path) -> None:
    result = await run(sandbox, project, "ls no-such-file")
    assert "sandbox_bound" not in result.details and "sandbox bound" not in result.content
