"""``grep_search`` and ``file_glob_search``: ripgrep over the project (Continue's names and parameters)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ....permissions.paths import (
    display_path,
    is_sensitive_in,
    read_action,
    resolve_in_root,
    resolved_root,
    secret_filter,
)
from ....tools.facts import ToolFacts, ToolWords
from ....user_text import user_template, user_text
from ...base import PermissionAction, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .newest_files import newest_files
from .path_order import OutputShape, search_in_path_order
from .ripgrep import (
    ALWAYS_EXCLUDED,
    BASE_ARGS,
    RG_ERROR,
    count_secret_files,
    exclusion_args,
    glob_args,
    strip_dot_slash,
)

MAX_MATCHES = 100
MAX_OUTPUT_CHARS = 7_500
MAX_GLOB_FILES = 100
MAX_CONTEXT_LINES = 10
# One matching line of a minified file must not eat the whole budget.
MAX_LINE_CHARS = 400
E_INVALID_REGEX = "E_INVALID_REGEX"
E_SEARCH_FAILED = "E_SEARCH_FAILED"
# Never listed by file_glob_search: git's internals and our own index. Secret files are listed by name (a
# name is no secret, ls shows it too, and the model learns the file exists so it can ask the user about it);
# no tool returns what is in them without the user's approval.
_GLOB_EXCLUDES = ALWAYS_EXCLUDED

OutputMode = Literal["content", "files_with_matches", "count"]


class GrepSearchArgs(ToolArgs):
    query: str = Field(description="A ripgrep regular expression.")
    path: str = Field(default=".", description="Directory or file to search.")
    filePattern: str | None = Field(default=None, description="Only files matching this glob, e.g. '*.py'.")
    caseSensitive: bool | None = Field(
        default=None,
        description="Default: smart case.",
    )
    contextLines: int = Field(
        default=0,
        ge=0,
        le=MAX_CONTEXT_LINES,
        description="Lines shown around each match.",
    )
    outputMode: OutputMode = Field(
        default="content",
        description="Lines, file paths only, or counts per file.",
    )


class GrepSearchTool(Tool[GrepSearchArgs]):
    name = "grep_search"
    facts = ToolFacts(
        level="allow",
        words=ToolWords(
            question=user_template("Search the files’ contents?"),
            statement=user_template("Search the files’ contents"),
        ),
    )
    description = (
        "Search file contents with a regular expression (ripgrep); returns matching lines by file. "
        "Ignored and secret files are skipped."
    )
    args_model = GrepSearchArgs
    read_only = True
    paging_hint = "narrow the query, path or filePattern"

    def permission(self, args: GrepSearchArgs, ctx: ToolContext) -> PermissionAction | None:
        return read_action(ctx.root_dir, args.path, ctx.resolved_paths)

    async def run(self, args: GrepSearchArgs, ctx: ToolContext) -> ToolOutput:
        root = resolved_root(ctx.root_dir)
        target = _search_target(root, args.path, ctx.resolved_paths)
        # A path that is itself a secret was asked about (read_action) and approved for this call: search it.
        # Anywhere else secret files are skipped, by rg's globs and again here.
        approved_secret = is_sensitive_in(root, target)
        rg_args = [*BASE_ARGS, "--max-filesize", "20M", *_case_flag(args.caseSensitive)]
        rg_args += glob_args([args.filePattern] if args.filePattern else [])
        rg_args += exclusion_args(root, secrets=not approved_secret)
        if args.outputMode == "content":
            rg_args += ["--json", "--context", str(args.contextLines)]
        elif args.outputMode == "files_with_matches":
            rg_args += ["--files-with-matches", "--null"]
        else:
            rg_args += ["--count-matches", "--null"]
        rg_args += ["--regexp", args.query, "--", target]
        collector: _Collector = {
            "content": _ContentCollector,
            "files_with_matches": _FilesCollector,
            "count": _CountCollector,
        }[args.outputMode]()
        if not approved_secret:
            collector.skip = secret_filter(root)
        shapes: dict[str, OutputShape] = {"content": "json", "files_with_matches": "paths", "count": "counts"}
        shape = shapes[args.outputMode]
        returncode, stderr = await search_in_path_order(rg_args, root, shape, collector.feed)
        if returncode == RG_ERROR and not collector.total_lines:
            raise _rg_error(stderr, args.query)
        where = f" in {args.path}" if args.path not in ("", ".") else ""
        if not collector.total_lines:
            skipped = 0 if approved_secret else await count_secret_files(root, target)
            return ToolOutput(
                f"No matches for /{args.query}/{where}." + _skipped_note(skipped, "\n"),
                details={"total_matches": 0, "total_files": 0, "skipped_secret_files": skipped},
            )
        text = collector.render() + _skipped_note(collector.skipped_files, "\n")
        if stderr:  # e.g. an unreadable file: results are still useful, but say what was skipped
            text += f"\n[rg reported: {stderr.splitlines()[0]}]"
        return ToolOutput(
            text,
            details={
                "total_matches": collector.total_lines,
                "total_files": collector.total_files,
                "cut": collector.cut,
            },
        )


def _skipped_note(count: int, separator: str) -> str:
    if not count:
        return ""
    files = "file that may hold secrets was" if count == 1 else "files that may hold secrets were"
    return (
        f"{separator}[{count:,} {files} not searched (.env, .npmrc, keys, credentials...); "
        "read one with read_file, which asks the user.]"
    )


def _search_target(root: Path, user_path: str, memo: dict[str, Path] | None) -> str:
    resolved = resolve_in_root(root, user_path or ".", allow_outside=True, memo=memo)
    if not resolved.exists():
        raise ToolError(
            "E_PATH_NOT_FOUND",
            user_text("%1 does not exist", repr(user_path)),
            user_text("Check the path with ls."),
        )
    return display_path(resolved, root)


def _case_flag(case_sensitive: bool | None) -> list[str]:
    if case_sensitive is None:
        return ["--smart-case"]
    return ["--case-sensitive"] if case_sensitive else ["--ignore-case"]


def _rg_error(stderr: str, query: str) -> ToolError:
    message = stderr.removeprefix("rg: ").strip() or "ripgrep failed"
    if "regex parse error" in stderr or "error parsing" in stderr:
        return ToolError(
            E_INVALID_REGEX,
            user_text("invalid regular expression %1: %2", repr(query), message),
            user_text(
                "Fix the regex (Rust syntax: escape ( ) [ ] { } . * + ? | \\ to match "
                "them literally; no lookaround)."
            ),
        )
    return ToolError(E_SEARCH_FAILED, message, user_text("Check the path and filePattern."))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + f"... [{len(text):,} chars]"


@dataclass
class _Collector:
    """Turns rg's output into text within the caps, counting everything it does not show."""

    shown: list[str] = field(default_factory=list)
    # Paths (as rg prints them) left out of the results: files that may hold secrets.
    skip: Callable[[str], bool] = field(default=lambda path: False)
    skipped_files: int = 0
    shown_chars: int = 0
    shown_items: int = 0
    total_lines: int = 0
    total_files: int = 0
    cut: bool = False

    def feed(self, line: bytes) -> None:
        raise NotImplementedError

    def render(self) -> str:
        raise NotImplementedError

    def _show(self, text: str) -> bool:
        """Add a line of output unless the character cap is reached; False once output is cut."""
        if self.cut or self.shown_chars + len(text) + 1 > MAX_OUTPUT_CHARS:
            self.cut = True
            return False
        self.shown.append(text)
        self.shown_chars += len(text) + 1
        return True

    def _show_item(self, text: str) -> None:
        """One listed file (files and count modes), within both caps."""
        if self.shown_items < MAX_MATCHES and self._show(text):
            self.shown_items += 1
        else:
            self.cut = True


class _ContentCollector(_Collector):
    def __init__(self) -> None:
        super().__init__()
        self._last_line_number: int | None = None
        self._skipping = False
        self._skipped_lines = 0

    def feed(self, line: bytes) -> None:
        if (self.cut or self._skipping) and line.startswith((b'{"type":"match"', b'{"type":"context"')):
            return  # past the caps only the summary matters: skip parsing the rest
        message: dict[str, Any] = json.loads(line)
        kind, payload = message.get("type"), message.get("data", {})
        if kind == "summary":
            self.total_lines = payload["stats"]["matched_lines"] - self._skipped_lines
            self.total_files = payload["stats"]["searches_with_match"] - self.skipped_files
        elif kind == "begin":
            path = strip_dot_slash(_text_of(payload["path"]))
            self._last_line_number = None
            self._skipping = self.skip(path)
            if self._skipping:
                self.skipped_files += 1
            else:
                self._show(("\n" if self.shown else "") + path)
        elif kind == "end" and self._skipping:
            self._skipped_lines += payload.get("stats", {}).get("matched_lines", 0)
            self._skipping = False
        elif kind in ("match", "context") and not self._skipping:
            self._add_line(kind, payload)

    def _add_line(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "match" and self.shown_items >= MAX_MATCHES:
            self.cut = True
            return
        number = payload.get("line_number")
        if self._last_line_number is not None and number is not None and number > self._last_line_number + 1:
            self._show("--")
        self._last_line_number = number
        text = _clip(_text_of(payload["lines"]).rstrip("\r\n"))
        separator = ":" if kind == "match" else "-"
        if self._show(f"{number}{separator}{text}") and kind == "match":
            self.shown_items += 1

    def render(self) -> str:
        noun = "file" if self.total_files == 1 else "files"
        if self.cut:
            footer = (
                f"[Showing {self.shown_items:,} of {self.total_lines:,} matching lines in "
                f"{self.total_files:,} "
                f"{noun}; the rest were cut. Narrow the query, path or filePattern to see them.]"
            )
        else:
            footer = f"[{self.total_lines:,} matching lines in {self.total_files:,} {noun}]"
        return "\n".join(self.shown).lstrip("\n") + "\n\n" + footer


def _text_of(field_value: dict[str, Any]) -> str:
    if "text" in field_value:
        return str(field_value["text"])
    return "[non-UTF-8 bytes]"


class _FilesCollector(_Collector):
    def feed(self, line: bytes) -> None:
        for raw in line.split(b"\0"):
            path = raw.decode("utf-8", errors="replace").strip("\n")
            if not path:
                continue
            if self.skip(strip_dot_slash(path)):
                self.skipped_files += 1
                continue
            self.total_files += 1
            self.total_lines += 1
            self._show_item(strip_dot_slash(path))

    def render(self) -> str:
        if self.cut:
            footer = (
                f"[Showing {self.shown_items:,} of {self.total_files:,} files with matches; "
                "narrow the query, path or filePattern to see the rest.]"
            )
        else:
            footer = f"[{self.total_files:,} files with matches]"
        return "\n".join(self.shown) + "\n\n" + footer


class _CountCollector(_Collector):
    def feed(self, line: bytes) -> None:
        raw_path, _, raw_count = line.rstrip(b"\n").partition(b"\0")
        if self.skip(strip_dot_slash(raw_path.decode("utf-8", errors="replace"))):
            self.skipped_files += 1
            return
        count = int(raw_count or 0)
        self.total_files += 1
        self.total_lines += count
        self._show_item(f"{strip_dot_slash(raw_path.decode('utf-8', errors='replace'))}: {count}")

    def render(self) -> str:
        if self.cut:
            footer = (
                f"[Showing {self.shown_items:,} of {self.total_files:,} files; {self.total_lines:,} matches "
                "in "
                "total. Narrow the path or filePattern to see the rest.]"
            )
        else:
            footer = f"[{self.total_lines:,} matches in {self.total_files:,} files]"
        return "\n".join(self.shown) + "\n\n" + footer


class FileGlobSearchArgs(ToolArgs):
    pattern: str = Field(description="Glob, e.g. '**/*.py' ('**' is any depth).")
    path: str = Field(default=".", description="Directory to search in.")


class FileGlobSearchTool(Tool[FileGlobSearchArgs]):
    name = "file_glob_search"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        words=ToolWords(
            question=user_template("Find files by name?"), statement=user_template("Find files by name")
        ),
    )
    description = "Find files by name with a glob pattern; newest first."
    args_model = FileGlobSearchArgs
    read_only = True
    paging_hint = "use a more specific pattern or path"

    def permission(self, args: FileGlobSearchArgs, ctx: ToolContext) -> PermissionAction | None:
        return read_action(ctx.root_dir, args.path, ctx.resolved_paths)

    async def run(self, args: FileGlobSearchArgs, ctx: ToolContext) -> ToolOutput:
        root = resolved_root(ctx.root_dir)
        target = _search_target(root, args.path, ctx.resolved_paths)
        pattern = strip_dot_slash(args.pattern.strip())
        # Globs are matched relative to rg's working directory, the root, whatever `path` is.
        listing = await newest_files(root, target, [pattern, *_GLOB_EXCLUDES], MAX_GLOB_FILES)
        shown, total, returncode, stderr = listing.newest, listing.total, listing.returncode, listing.stderr
        if returncode == RG_ERROR and not total:
            raise ToolError(
                "E_INVALID_GLOB",
                user_text("invalid glob %1: %2", repr(args.pattern), stderr.removeprefix("rg: ")),
                user_text("Fix the pattern."),
            )
        where = f" in {args.path}" if args.path not in ("", ".") else ""
        if not total:
            return ToolOutput(f"No files match {args.pattern!r}{where}.", details={"total_files": 0})
        text = "\n".join(shown)
        if total > len(shown):
            text += (
                f"\n\n[Showing the {len(shown)} newest of {total:,} matching files; "
                "use a more specific pattern or path to see the rest.]"
            )
        return ToolOutput(text, details={"total_files": total, "cut": total > len(shown)})
