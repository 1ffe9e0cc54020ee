"""``ls``: list a directory of the project (Continue's ``ls`` tool: ``dirPath``, ``recursive``)."""

from __future__ import annotations

import asyncio
from itertools import islice
from pathlib import Path

from pydantic import Field

from ...permissions.paths import display_path, is_inside, read_action, resolve_in_root, resolved_root
from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template, user_text
from ..base import PermissionAction, Tool, ToolArgs, ToolContext, ToolError
from .search.ignore import GitignoreWalker

MAX_ENTRIES = 200


class ListDirectoryArgs(ToolArgs):
    dirPath: str = Field(
        default=".",
        description="Directory relative to the project root.",
    )
    recursive: bool = Field(
        default=False,
        description="List the whole subtree.",
    )


class ListDirectoryTool(Tool[ListDirectoryArgs]):
    name = "ls"
    facts = ToolFacts(
        level="allow",
        words=ToolWords(
            question=user_template("List a folder?"),
            statement=user_template("List a folder"),
            question_with_subject=user_template("List the folder %1?"),
            statement_with_subject=user_template("List %1"),
        ),
    )
    description = "List a directory of the project; directories end with '/'."
    args_model = ListDirectoryArgs
    read_only = True
    paging_hint = "list a subdirectory instead"

    def permission(self, args: ListDirectoryArgs, ctx: ToolContext) -> PermissionAction | None:
        return read_action(ctx.root_dir, args.dirPath, ctx.resolved_paths)

    async def run(self, args: ListDirectoryArgs, ctx: ToolContext) -> str:
        directory = resolve_in_root(ctx.root_dir, args.dirPath, allow_outside=True, memo=ctx.resolved_paths)
        if not directory.exists():
            raise ToolError(
                "E_PATH_NOT_FOUND",
                user_text("%1 does not exist", repr(args.dirPath)),
                user_text("List the parent directory."),
            )
        if not directory.is_dir():
            raise ToolError(
                "E_NOT_A_DIRECTORY",
                user_text("%1 is a file", repr(args.dirPath)),
                user_text("Read it with read_file instead."),
            )
        # Directory walks can be large: keep them off the event loop.
        return await asyncio.to_thread(_listing, directory, ctx.root_dir, args.recursive)


def _listing(directory: Path, root: Path, recursive: bool) -> str:
    if recursive:
        entries = GitignoreWalker(directory, resolved_root(root)).walk()
    else:
        entries = ((path, path.is_dir()) for path in sorted(directory.iterdir(), key=lambda p: p.name))
    # Outside the root (an approved read), relative paths would be misleading: show absolute ones.
    shown_from = root if is_inside(directory, resolved_root(root)) else Path("/")
    shown = [_entry(path, is_dir, shown_from) for path, is_dir in islice(entries, MAX_ENTRIES + 1)]
    where = display_path(directory, root)
    if not shown:
        return f"{where} is empty."
    if len(shown) > MAX_ENTRIES:
        remaining = sum(1 for _ in entries) + 1
        shown = shown[:MAX_ENTRIES]
        shown.append(f"[... {remaining} more entries not shown; list a subdirectory to see them]")
    return "\n".join(shown)


def _entry(path: Path, is_dir: bool, shown_from: Path) -> str:
    if shown_from == Path("/"):
        return str(path) + ("/" if is_dir else "")
    return display_path(path, shown_from) + ("/" if is_dir else "")
