"""Helpers for the file tool tests: the read tools and the edit tools wired to real executors, a stand-in for
the person who approves, and real sample files (images, notebooks)."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest, FixedApprover
from hdsp_agent.tools.base import Tool, ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.edit.filestate import FileStateStore
from hdsp_agent.tools.builtin.edit.tools import (
    CreateNewFileTool,
    EditExistingFileTool,
    MultiEditTool,
    SearchAndReplaceInFileTool,
    SingleFindAndReplaceTool,
)
from hdsp_agent.tools.builtin.files import (
    ReadCurrentlyOpenFileTool,
    ReadFileRangeTool,
    ReadFileTool,
    ReadLimits,
)
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry


def read_tools(state: FileStateStore, limits: ReadLimits | None = None) -> ToolRegistry:
    return ToolRegistry(
        [
            ReadFileTool(state, limits),
            ReadFileRangeTool(state, limits),
            ReadCurrentlyOpenFileTool(state, limits),
        ]
    )


async def read_call(
    root: Path,
    name: str,
    arguments: dict[str, Any],
    *,
    state: FileStateStore | None = None,
    limits: ReadLimits | None = None,
    approve: bool = True,
    client_context: dict[str, Any] | None = None,
) -> ToolResult:
    registry = read_tools(state or FileStateStore(), limits)
    executor = ToolExecutor(registry, approver=FixedApprover(approve))
    ctx = ToolContext(root_dir=root, session_id="s1", client_context=client_context or {})
    catalog = registry.catalog(ctx)
    return await executor.execute(ToolCall(id="c1", name=name, arguments=json.dumps(arguments)), ctx, catalog)


def png_bytes(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def jpeg_bytes(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def write_notebook(path: Path) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    code = nbformat.v4.new_code_cell("import math\nprint('hello')\nmath.pi", execution_count=4)
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="hello\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "3.141592653589793"}, execution_count=4),
        nbformat.v4.new_output(
            "display_data", data={"image/png": base64.b64encode(png_bytes(2, 2)).decode()}
        ),
        nbformat.v4.new_output("error", ename="ValueError", evalue="bad \x1b[31mvalue\x1b[0m", traceback=[]),
    ]
    long_output = nbformat.v4.new_code_cell("for i in range(50): print(i)")
    long_output.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="".join(f"{i}\n" for i in range(50)))
    ]
    notebook.cells = [nbformat.v4.new_markdown_cell("# Analysis"), code, long_output]
    nbformat.write(notebook, path)
    return notebook


class RecordingApprover:
    """Stands in for the person at the approval dialog: records what they saw, answers, may act first."""

    def __init__(self, approve: bool = True, before_answer: Callable[[], None] | None = None) -> None:
        self.approve = approve
        self.before_answer = before_answer
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self.requests.append(request)
        if self.before_answer is not None:
            self.before_answer()
        return ApprovalReply(approved=self.approve, reason=None if self.approve else "not now")


class Harness:
    def __init__(self, root: Path, approver: RecordingApprover | None = None) -> None:
        self.root = root
        self.state = FileStateStore()
        self.approver = approver or RecordingApprover()
        tools: list[Tool[Any]] = [
            ReadFileTool(self.state),
            CreateNewFileTool(self.state),
            SingleFindAndReplaceTool(self.state),
            MultiEditTool(self.state),
            SearchAndReplaceInFileTool(self.state),
            EditExistingFileTool(self.state),
        ]
        self.executor = ToolExecutor(ToolRegistry(tools), approver=self.approver)
        self.calls = 0

    async def call(self, name: str, arguments: dict[str, Any], session_id: str = "s1") -> ToolResult:
        self.calls += 1
        call = ToolCall(id=f"call-{self.calls}", name=name, arguments=json.dumps(arguments))
        return await self.executor.execute(call, ToolContext(root_dir=self.root, session_id=session_id))

    async def replace(self, path: str, old: str, new: str, **extra: Any) -> ToolResult:
        return await self.call(
            "single_find_and_replace", {"filepath": path, "old_string": old, "new_string": new, **extra}
        )


def error_code(result: ToolResult) -> str | None:
    return result.error.code if result.error else None
