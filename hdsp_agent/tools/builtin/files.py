"""Reading files: ``read_file``, ``read_file_range`` and ``read_currently_open_file`` (Continue's names).

Text comes back numbered like ``cat -n`` within limits (lines, characters per line, characters in all),
with a note saying what was cut and the exact ``read_file_range`` call that reads on. Binary files are
refused, images are described (and handed to the UI/vision models through ``details["image"]``), notebooks
are shown as cells. Every read is remembered per session so the edit tools can refuse to edit a file that
changed since.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field
from rapidfuzz import fuzz, process

from ...permissions.paths import display_path, is_inside, read_action, resolve_in_root
from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template, user_text
from ..base import NoArgs, PermissionAction, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .edit.filestate import FileStateStore, fingerprint_of
from .image_info import image_info
from .notebook_render import NotANotebook, render_notebook
from .search.ignore import GitignoreWalker

E_PATH_NOT_FOUND = "E_PATH_NOT_FOUND"
E_IS_A_DIRECTORY = "E_IS_A_DIRECTORY"
E_NOT_A_FILE = "E_NOT_A_FILE"
E_BINARY_FILE = "E_BINARY_FILE"
E_LINE_RANGE = "E_LINE_RANGE"
E_NO_OPEN_FILE = "E_NO_OPEN_FILE"

SNIFF_BYTES = 4096
# Images larger than this are described but not attached (vision APIs reject them anyway).
MAX_IMAGE_ATTACH_BYTES = 5 * 1024 * 1024
# Walking the project for "did you mean" suggestions stops here, so a huge tree cannot stall a missing-file
# error.
MAX_SUGGESTION_FILES = 20_000
_TEXT_CONTROL_BYTES = frozenset(b"\t\n\r\f\b\x1b")


@dataclass(frozen=True)
class ReadLimits:
    max_lines: int = 2000
    max_line_chars: int = 2000
    # Below the executor's default output budget (30,000), so a long read ends with a "read on" note instead
    # of
    # being cut in the middle.
    max_chars: int = 25_000
    # Applied to a line before it is cut (the executor's redaction): a secret at the cut is still redacted.
    redact: Callable[[str], str] | None = None


@dataclass
class _Window:
    """The lines chosen to show, and what the file holds beyond them."""

    lines: list[tuple[int, str]] = field(default_factory=list)
    total_lines: int = 0
    cut_line_count: int = 0
    stopped_for_chars: bool = False
    undecodable: bool = False


def is_binary(head: bytes) -> bool:
    """NUL bytes, or mostly control characters, in the first bytes of a file."""
    if b"\x00" in head:
        return True
    if not head:
        return False
    control = sum(1 for byte in head if (byte < 0x20 and byte not in _TEXT_CONTROL_BYTES) or byte == 0x7F)
    return control / len(head) > 0.3


class FileReader:
    """What the three read tools share: resolve, classify, read within limits, remember the read."""

    def __init__(self, state: FileStateStore | None = None, limits: ReadLimits | None = None) -> None:
        self.state = state if state is not None else FileStateStore()
        self.limits = limits or ReadLimits()

    async def read(
        self, user_path: str, ctx: ToolContext, start: int = 1, end: int | None = None
    ) -> ToolOutput:
        path = resolve_in_root(ctx.root_dir, user_path, allow_outside=True)
        shown_as = _shown_as(path, ctx.root_dir)
        if not path.exists():
            suggestions = await asyncio.to_thread(similar_paths, ctx.root_dir, user_path)
            hint = (
                f"Did you mean: {', '.join(suggestions)}?"
                if suggestions
                else "Use ls or file_glob_search to find it."
            )
            raise ToolError(E_PATH_NOT_FOUND, user_text("%1 does not exist", repr(user_path)), hint)
        if path.is_dir():
            raise ToolError(
                E_IS_A_DIRECTORY,
                user_text("%1 is a directory", repr(user_path)),
                user_text("List it with ls instead."),
            )
        if not path.is_file():
            raise ToolError(
                E_NOT_A_FILE,
                user_text("%1 is not a regular file (a device, socket or pipe)", repr(user_path)),
            )
        limits = dataclasses.replace(self.limits, redact=ctx.redact)
        return await asyncio.to_thread(self._read_file, path, shown_as, ctx.session_id, start, end, limits)

    def _read_file(
        self, path: Path, shown_as: str, session_id: str, start: int, end: int | None, limits: ReadLimits
    ) -> ToolOutput:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
        if image_info(head) is not None:
            return self._image(path, shown_as)
        if is_binary(head):
            raise ToolError(
                E_BINARY_FILE,
                user_text(
                    "%1 is a binary file (%2 bytes); read_file shows text only",
                    shown_as,
                    format(path.stat().st_size, ","),
                ),
                user_text(
                    "Inspect it another way, e.g. load it in the notebook with "
                    "execute_code, or run `file` on it."
                ),
            )
        if path.suffix.lower() == ".ipynb":
            notebook = self._notebook(path, shown_as, session_id, start, end, limits)
            if notebook is not None:
                return notebook
        status = path.stat()
        window, content_hash = _stream_window(path, start, end, limits)
        self.state.record_read(session_id, path, fingerprint_of(status, content_hash))
        return self._text_output(window, shown_as, start, end, numbered_from="the file")

    def _notebook(
        self, path: Path, shown_as: str, session_id: str, start: int, end: int | None, limits: ReadLimits
    ) -> ToolOutput | None:
        status = path.stat()
        content = path.read_bytes()
        try:
            rendered = render_notebook(content.decode("utf-8-sig", errors="replace"), shown_as)
        except NotANotebook:
            return None  # shown as plain text: the model can see what is wrong with it
        self.state.record_read(session_id, path, fingerprint_of(status, hashlib.sha256(content).hexdigest()))
        window = _window_of(rendered, start, end, limits)
        output = self._text_output(window, shown_as, start, end, numbered_from="the notebook view")
        output.details["notebook"] = True
        return output

    def _image(self, path: Path, shown_as: str) -> ToolOutput:
        content = path.read_bytes()
        info = image_info(content)
        if info is None:  # replaced between the two reads
            raise ToolError(
                E_BINARY_FILE,
                user_text("%1 changed while it was read", shown_as),
                user_text("Read it again."),
            )
        mime_type = info.mime_type
        size = f"{info.width}×{info.height} px" if info.width and info.height else "unknown dimensions"
        description = f"{shown_as} is an image: {mime_type}, {size}, {len(content):,} bytes."
        details: dict[str, Any] = {"path": shown_as, "size_bytes": len(content)}
        if len(content) <= MAX_IMAGE_ATTACH_BYTES:
            details["image"] = {"mime_type": mime_type, "base64": base64.b64encode(content).decode("ascii")}
        else:
            description += f" It is too large to attach (over {MAX_IMAGE_ATTACH_BYTES // (1024 * 1024)} MB)."
        details.update(width=info.width, height=info.height)
        return ToolOutput(description, details)

    def _text_output(
        self, window: _Window, shown_as: str, start: int, end: int | None, *, numbered_from: str
    ) -> ToolOutput:
        details: dict[str, Any] = {"path": shown_as, "total_lines": window.total_lines}
        if window.total_lines == 0:
            return ToolOutput(f"({shown_as} is empty)", details)
        if start > window.total_lines:
            raise ToolError(
                E_LINE_RANGE,
                user_text(
                    "startLine %1 is past the end of %2, which has %3 lines",
                    start,
                    shown_as,
                    window.total_lines,
                ),
                user_text("Use a startLine between 1 and %1.", window.total_lines),
            )
        width = max(6, len(str(window.lines[-1][0])))
        body = [f"{number:>{width}}\t{text}" for number, text in window.lines]
        first, last = window.lines[0][0], window.lines[-1][0]
        details.update(start_line=first, end_line=last)
        notes = []
        wanted_last = window.total_lines if end is None else min(end, window.total_lines)
        if last < wanted_last:
            why = (
                "the output limit" if window.stopped_for_chars else f"{self.limits.max_lines} lines at a time"
            )
            call = json.dumps(
                {
                    "filepath": shown_as,
                    "startLine": last + 1,
                    "endLine": min(wanted_last, last + self.limits.max_lines),
                }
            )
            notes.append(
                f"[Showing lines {first}-{last} of {window.total_lines} ({why}). "
                f"Read on with read_file_range {call}.]"
            )
            details["truncated"] = True
        elif end is not None and end > window.total_lines:
            notes.append(f"[{shown_as} has {window.total_lines} lines; showing {first}-{last}.]")
        if window.cut_line_count:
            notes.append(
                f"[{window.cut_line_count} line(s) longer than {self.limits.max_line_chars:,} characters "
                f"were cut; "
                "search them with grep_search.]"
            )
        if window.undecodable:
            notes.append("[The file is not valid UTF-8: undecodable bytes are shown as U+FFFD.]")
        if numbered_from != "the file":
            notes.insert(0, f"[Line numbers count lines of {numbered_from}, not of the file on disk.]")
        return ToolOutput("\n".join(body + notes), details)


def _stream_window(path: Path, start: int, end: int | None, limits: ReadLimits) -> tuple[_Window, str]:
    """One pass over the file: the lines to show, the line count and the content hash (bounded memory)."""
    window = _Window()
    digest = hashlib.sha256()
    chars = 0
    accepting = True
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            digest.update(raw)
            window.total_lines = number
            if not accepting or number < start or (end is not None and number > end):
                continue
            raw = raw[3:] if number == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
            text = _decode(raw.rstrip(b"\n").rstrip(b"\r"), window)
            accepting, chars = _take(window, number, text, chars, limits)
    return window, digest.hexdigest()


def _window_of(lines: list[str], start: int, end: int | None, limits: ReadLimits) -> _Window:
    window = _Window(total_lines=len(lines))
    chars = 0
    for number in range(start, min(len(lines), end or len(lines)) + 1):
        accepting, chars = _take(window, number, lines[number - 1], chars, limits)
        if not accepting:
            break
    return window


def _take(window: _Window, number: int, text: str, chars: int, limits: ReadLimits) -> tuple[bool, int]:
    """Add one line to ``window`` unless a limit is reached; returns (keep accepting, characters so far)."""
    if len(window.lines) >= limits.max_lines:
        return False, chars
    if len(text) > limits.max_line_chars:
        if limits.redact is not None:
            text = limits.redact(text)
    if len(text) > limits.max_line_chars:
        text = (
            text[: limits.max_line_chars]
            + f" [... line cut: {len(text) - limits.max_line_chars:,} more chars]"
        )
        window.cut_line_count += 1
    if window.lines and chars + len(text) + 8 > limits.max_chars:
        window.stopped_for_chars = True
        return False, chars
    window.lines.append((number, text))
    return True, chars + len(text) + 8


def _decode(raw: bytes, window: _Window) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        window.undecodable = True
        return raw.decode("utf-8", errors="replace")


def _shown_as(path: Path, root: Path) -> str:
    return display_path(path, root) if is_inside(path, root.resolve()) else str(path)


def similar_paths(root: Path, user_path: str, limit: int = 3) -> list[str]:
    """Up to ``limit`` project files (gitignore respected) whose paths look like ``user_path``."""
    root = root.resolve()
    candidates = []
    for path, is_dir in GitignoreWalker(root).walk():
        if not is_dir:
            candidates.append(path.relative_to(root).as_posix())
            if len(candidates) >= MAX_SUGGESTION_FILES:
                break
    query = user_path.removeprefix("./")
    if Path(query).is_absolute() and is_inside(Path(query), root):
        query = Path(query).relative_to(root).as_posix()
    found = process.extract(query, candidates, scorer=fuzz.WRatio, limit=limit, score_cutoff=70)
    return [match for match, _, _ in found]


# -- the tools -----------------------------------------------------------------------------------------------


class ReadFileArgs(ToolArgs):
    filepath: str = Field(description="Path relative to the project root.")


class ReadFileRangeArgs(ToolArgs):
    filepath: str = Field(description="Path relative to the project root.")
    startLine: int = Field(ge=1, description="First line (1-based).")
    endLine: int = Field(ge=1, description="Last line (inclusive).")


class ReadFileTool(Tool[ReadFileArgs]):
    name = "read_file"
    facts = ToolFacts(
        level="allow",
        words=ToolWords(
            question=user_template("Read a file?"),
            statement=user_template("Read a file"),
            question_with_subject=user_template("Read %1?"),
            statement_with_subject=user_template("Read %1"),
        ),
    )
    description = (
        "Read a file, lines numbered like `cat -n`. Notebooks show as cells with ids; images are described."
    )
    args_model = ReadFileArgs
    read_only = True
    paging_hint = "use read_file_range with startLine/endLine"

    def __init__(self, state: FileStateStore | None = None, limits: ReadLimits | None = None) -> None:
        self.reader = FileReader(state, limits)

    def permission(self, args: ReadFileArgs, ctx: ToolContext) -> PermissionAction | None:
        return read_action(ctx.root_dir, args.filepath)

    async def run(self, args: ReadFileArgs, ctx: ToolContext) -> ToolOutput:
        return await self.reader.read(args.filepath, ctx)


class ReadFileRangeTool(Tool[ReadFileRangeArgs]):
    name = "read_file_range"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        words=ToolWords(
            question=user_template("Read a file?"),
            statement=user_template("Read a file"),
            question_with_subject=user_template("Read %1?"),
            statement_with_subject=user_template("Read %1"),
        ),
    )
    description = (
        "Read lines startLine..endLine of a file: for large files, or to read on where read_file stopped."
    )
    args_model = ReadFileRangeArgs
    read_only = True
    paging_hint = "use a smaller startLine/endLine window"

    def __init__(self, state: FileStateStore | None = None, limits: ReadLimits | None = None) -> None:
        self.reader = FileReader(state, limits)

    def permission(self, args: ReadFileRangeArgs, ctx: ToolContext) -> PermissionAction | None:
        return read_action(ctx.root_dir, args.filepath)

    async def run(self, args: ReadFileRangeArgs, ctx: ToolContext) -> ToolOutput:
        if args.endLine < args.startLine:
            raise ToolError(
                E_LINE_RANGE,
                user_text("endLine %1 is before startLine %2", args.endLine, args.startLine),
                user_text("Send startLine <= endLine."),
            )
        return await self.reader.read(args.filepath, ctx, args.startLine, args.endLine)


def active_document_path(ctx: ToolContext) -> str | None:
    """The path of the document active in the user's JupyterLab, as the sidebar sent it."""
    document = ctx.client_context.get("active_document")
    path = document.get("path") if isinstance(document, dict) else None
    return path if isinstance(path, str) and path.strip() else None


class ReadCurrentlyOpenFileTool(Tool[NoArgs]):
    name = "read_currently_open_file"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        words=ToolWords(
            question=user_template("Read a file?"),
            statement=user_template("Read a file"),
            question_with_subject=user_template("Read %1?"),
            statement_with_subject=user_template("Read %1"),
        ),
    )
    description = (
        "Read the file or notebook the user has open in JupyterLab (as saved), for 'this file' or 'my "
        "notebook'."
    )
    args_model = NoArgs
    read_only = True
    paging_hint = "use read_file_range with startLine/endLine"

    def __init__(self, state: FileStateStore | None = None, limits: ReadLimits | None = None) -> None:
        self.reader = FileReader(state, limits)

    def is_available(self, ctx: ToolContext) -> bool:
        return active_document_path(ctx) is not None

    def permission(self, args: NoArgs, ctx: ToolContext) -> PermissionAction | None:
        path = active_document_path(ctx)
        return read_action(ctx.root_dir, path) if path else None

    async def run(self, args: NoArgs, ctx: ToolContext) -> ToolOutput:
        path = active_document_path(ctx)
        if path is None:
            raise ToolError(
                E_NO_OPEN_FILE,
                user_text("no document is active in JupyterLab"),
                user_text("Ask the user which file they mean."),
            )
        output = await self.reader.read(path, ctx)
        output.content = f"Currently open: {output.details.get('path', path)}\n{output.content}"
        return output
