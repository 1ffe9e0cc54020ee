"""Changing files: ``create_new_file``, ``single_find_and_replace``, ``multi_edit``,
``search_and_replace_in_file`` and ``edit_existing_file`` (Continue's names and parameters).

Every edit is computed in full before anything is written (all-or-nothing), written atomically, refused when
the file changed on disk since the model last read it, and recorded for undo. The approval dialog gets the
unified diff the edit would make; the result tells the model what changed and how old_string was matched,
and carries the diff and the prior content for the UI. Notebooks are never edited as JSON text: the
notebook cell tools do that.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import nbformat
from pydantic import Field

from ....permissions.paths import display_path, resolve_in_root
from ....tools.facts import ToolFacts, ToolWords
from ....user_text import user_template, user_text
from ...base import PermissionAction, PermissionKind, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .filestate import FileStateStore
from .formats import E_EDIT_MALFORMED, has_markers, merge_with_markers, parse_search_replace
from .fuzzy import apply_edit
from .pipeline import (
    E_NOTEBOOK_AS_TEXT,
    E_WRITE_FAILED,
    FileEditArgs,
    FileEditTool,
    PlannedEdit,
    write_edit,
)
from .textfile import as_lf, changed_ranges, preview, unified_diff

E_FILE_EXISTS = "E_FILE_EXISTS"
E_EDIT_FRAGMENT = "E_EDIT_LOOKS_LIKE_FRAGMENT"


def _lines(count: int) -> str:
    return f"{count} line{'' if count == 1 else 's'}"


def _where(ranges: list[tuple[int, int]]) -> str:
    """'line 4', 'lines 4-6' or 'lines 4, 9' for 1-based inclusive ranges."""
    shown = [f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:8]]
    more = f" and {len(ranges) - 8} more" if len(ranges) > 8 else ""
    several = len(ranges) > 1 or ranges[0][0] != ranges[0][1]
    return f"line{'s' if several else ''} " + ", ".join(shown) + more


# -- create_new_file -----------------------------------------------------------------------------------------


class CreateNewFileArgs(ToolArgs):
    filepath: str = Field(description="Path relative to the project root.")
    contents: str = Field(description="The file's content.")


class CreateNewFileTool(Tool[CreateNewFileArgs]):
    name = "create_new_file"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It changes files in your project"),
        changes="file_edit",
        words=ToolWords(
            question=user_template("Create a file?"),
            statement=user_template("Create a file"),
            question_with_subject=user_template("Create the file %1?"),
            statement_with_subject=user_template("Create %1"),
        ),
    )
    description = "Create a new file (and missing folders). It never overwrites an existing file."
    args_model = CreateNewFileArgs
    read_only = False

    def __init__(self, state: FileStateStore | None = None) -> None:
        self.state = state if state is not None else FileStateStore()

    def _check(self, args: CreateNewFileArgs, ctx: ToolContext) -> tuple[Path, str, str]:
        path = resolve_in_root(ctx.root_dir, args.filepath)
        shown_as = display_path(path, ctx.root_dir)
        if path.exists():
            raise ToolError(
                E_FILE_EXISTS,
                user_text("%1 already exists; create_new_file never overwrites", shown_as),
                user_text(
                    "Read it, then change it with single_find_and_replace, multi_edit or edit_existing_file."
                ),
            )
        contents = (
            _notebook_contents(args.contents, shown_as) if path.suffix.lower() == ".ipynb" else args.contents
        )
        return path, shown_as, contents

    def permission(self, args: CreateNewFileArgs, ctx: ToolContext) -> PermissionAction:
        _, shown_as, contents = self._check(args, ctx)
        return PermissionAction(
            PermissionKind.FILE_WRITE,
            args.filepath,
            preview(unified_diff("", contents, shown_as, created=True)),
        )

    async def run(self, args: CreateNewFileArgs, ctx: ToolContext) -> ToolOutput:
        return await asyncio.to_thread(self._create, args, ctx)

    def _create(self, args: CreateNewFileArgs, ctx: ToolContext) -> ToolOutput:
        path, shown_as, contents = self._check(args, ctx)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ToolError(
                E_WRITE_FAILED, user_text("could not create the directory for %1: %2", shown_as, error)
            ) from None
        line_count = contents.count("\n") + (0 if contents.endswith("\n") or not contents else 1)
        planned = PlannedEdit(contents, f"Created {shown_as} ({_lines(line_count)}).", [])
        output = write_edit(self.state, ctx, path, shown_as, None, planned, self.name)
        output.details["created"] = True
        return output


def _notebook_contents(contents: str, shown_as: str) -> str:
    """A new notebook's file text: validated, never arbitrary JSON."""
    if not contents.strip():
        return str(nbformat.writes(nbformat.v4.new_notebook())) + "\n"
    try:
        notebook = nbformat.reads(contents, as_version=4)
        nbformat.validate(notebook)
    except Exception as error:  # nbformat raises JSON, validation and version errors of unrelated types
        raise ToolError(
            E_NOTEBOOK_AS_TEXT,
            user_text("the contents for %1 are not a valid notebook: %2", shown_as, str(error)[:300]),
            user_text("Create it with empty contents (an empty notebook), then add cells with insert_cell."),
        ) from None
    return str(nbformat.writes(notebook)) + "\n"


# -- find and replace ----------------------------------------------------------------------------------------

_MATCHING = (
    "old_string should be copied exactly from the file (read it first), with enough surrounding lines to be "
    "unique. If it does not match exactly, looser matching is tried (whitespace, indentation, line endings, "
    "comments, first/last lines, tokens) and the result says which was used; a match in several places is "
    "refused unless replace_all is set."
)


class SingleFindAndReplaceArgs(FileEditArgs):
    old_string: str = Field(description="Exact text from the file, with enough context to be unique.")
    new_string: str = Field(description="The replacement.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class SingleFindAndReplaceTool(FileEditTool[SingleFindAndReplaceArgs]):
    name = "single_find_and_replace"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It changes files in your project"),
        changes="file_edit",
        words=ToolWords(
            question=user_template("Change a file?"),
            statement=user_template("Change a file"),
            question_with_subject=user_template("Change the file %1?"),
            statement_with_subject=user_template("Change %1"),
        ),
    )
    description = (
        "Edit a file: replace old_string with new_string. Read the file first and copy old_string exactly."
    )
    args_model = SingleFindAndReplaceArgs

    def plan(self, args: SingleFindAndReplaceArgs, text: str) -> PlannedEdit:
        outcome = apply_edit(
            text,
            as_lf(args.old_string),
            as_lf(args.new_string),
            replace_all=args.replace_all,
            filename=args.filepath,
        )
        times = "1 occurrence" if outcome.count == 1 else f"{outcome.count} occurrences"
        summary = f"Replaced {times} at {_where(outcome.old_line_ranges)} ({outcome.note})."
        return PlannedEdit(outcome.text, summary, outcome.new_line_ranges)


class EditOperation(ToolArgs):
    old_string: str = Field(description="Exact text from the file.")
    new_string: str = Field(description="The replacement.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class MultiEditArgs(FileEditArgs):
    edits: list[EditOperation] = Field(
        min_length=1, description="Applied in order; each sees the result of the ones before."
    )


class MultiEditTool(FileEditTool[MultiEditArgs]):
    name = "multi_edit"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It changes files in your project"),
        changes="file_edit",
        profiles=frozenset({"full", "standard"}),
        words=ToolWords(
            question=user_template("Change a file?"),
            statement=user_template("Change a file"),
            question_with_subject=user_template("Change the file %1?"),
            statement_with_subject=user_template("Change %1"),
        ),
    )
    description = "Make several find-and-replace edits to one file, in order, all or nothing."
    args_model = MultiEditArgs

    def plan(self, args: MultiEditArgs, text: str) -> PlannedEdit:
        parts, changed = [], []
        total = len(args.edits)
        for number, edit in enumerate(args.edits, start=1):
            label = f"edits[{number - 1}].old_string"
            try:
                outcome = apply_edit(
                    text,
                    as_lf(edit.old_string),
                    as_lf(edit.new_string),
                    replace_all=edit.replace_all,
                    label=label,
                    filename=args.filepath,
                )
            except ToolError as error:
                raise ToolError(
                    error.code,
                    user_text("edit %1 of %2: %3; no edit was applied", number, total, error.message),
                    error.suggestion,
                ) from None
            text = outcome.text
            changed = outcome.new_line_ranges  # earlier ranges may have moved; show the last edit's lines
            parts.append(f"{number}: {_where(outcome.old_line_ranges)} ({outcome.note})")
        return PlannedEdit(
            text, f"Applied {total} edit{'s' if total > 1 else ''}: " + "; ".join(parts) + ".", changed
        )


class SearchAndReplaceInFileArgs(FileEditArgs):
    diffs: list[str] = Field(
        min_length=1,
        description=(
            "SEARCH/REPLACE blocks, each:\n------- SEARCH\n[exact lines]\n=======\n[new lines]\n+++++++ "
            "REPLACE"
        ),
    )


class SearchAndReplaceInFileTool(FileEditTool[SearchAndReplaceInFileArgs]):
    name = "search_and_replace_in_file"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It changes files in your project"),
        changes="file_edit",
        profiles=frozenset({"full"}),
        words=ToolWords(
            question=user_template("Change a file?"),
            statement=user_template("Change a file"),
            question_with_subject=user_template("Change the file %1?"),
            statement_with_subject=user_template("Change %1"),
        ),
    )
    description = "Edit a file with SEARCH/REPLACE blocks, applied in order, all or nothing."
    args_model = SearchAndReplaceInFileArgs

    def plan(self, args: SearchAndReplaceInFileArgs, text: str) -> PlannedEdit:
        blocks = parse_search_replace(args.diffs)
        parts, changed = [], []
        for block in blocks:
            label = f"SEARCH block {block.number}"
            if not block.search.strip():
                if text:
                    raise ToolError(
                        E_EDIT_MALFORMED,
                        user_text("%1 is empty; no change was made", label),
                        user_text("Put the lines to find in SEARCH."),
                    )
                text, changed = block.replace, [(1, max(1, block.replace.count("\n")))]
                parts.append(f"{block.number}: filled the empty file")
                continue
            try:
                outcome = apply_edit(text, block.search, block.replace, label=label, filename=args.filepath)
            except ToolError as error:
                raise ToolError(
                    error.code, user_text("%1; no block was applied", error.message), error.suggestion
                ) from None
            text, changed = outcome.text, outcome.new_line_ranges
            parts.append(f"{block.number}: {_where(outcome.old_line_ranges)} ({outcome.note})")
        count = len(blocks)
        return PlannedEdit(
            text, f"Applied {count} block{'s' if count > 1 else ''}: " + "; ".join(parts) + ".", changed
        )


class EditExistingFileArgs(FileEditArgs):
    filepath: str = Field(description="Path relative to the project root.")
    changes: str = Field(
        description=(
            "The whole new file, or the changed parts with unchanged runs replaced by a comment line "
            "'... existing code ...' (e.g. '# ... existing code ...')."
        )
    )


class EditExistingFileTool(FileEditTool[EditExistingFileArgs]):
    name = "edit_existing_file"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It changes files in your project"),
        changes="file_edit",
        profiles=frozenset({"full"}),
        words=ToolWords(
            question=user_template("Change a file?"),
            statement=user_template("Change a file"),
            question_with_subject=user_template("Change the file %1?"),
            statement_with_subject=user_template("Change %1"),
        ),
    )
    description = "Rewrite an existing file, whole or with unchanged parts marked '... existing code ...'."
    args_model = EditExistingFileArgs

    def plan(self, args: EditExistingFileArgs, text: str) -> PlannedEdit:
        changes = as_lf(args.changes)
        if has_markers(changes):
            new_text = merge_with_markers(text, changes)
            how = "merged your changes at the '... existing code ...' markers"
        else:
            _refuse_fragment(text, changes)
            new_text = changes + (
                "\n" if text.endswith("\n") and changes and not changes.endswith("\n") else ""
            )
            how = "replaced the whole content"
        old_count, new_count = len(text.splitlines()), len(new_text.splitlines())
        summary = f"Edited the file ({how}): {_lines(old_count)} → {_lines(new_count)}."
        return PlannedEdit(new_text, summary, changed_ranges(text, new_text))


def _refuse_fragment(text: str, changes: str) -> None:
    """Refuse a full replacement that looks like a snippet of the file: it would delete everything else."""
    old_lines = [line.strip() for line in text.split("\n") if line.strip()]
    new_lines = [line.strip() for line in changes.split("\n") if line.strip()]
    if len(old_lines) < 10 or len(new_lines) * 2 >= len(old_lines):
        return
    known = set(old_lines)
    if sum(1 for line in new_lines if line in known) * 2 >= len(new_lines):
        raise ToolError(
            E_EDIT_FRAGMENT,
            user_text(
                (
                    "changes has %1 non-blank lines, the file %2, and most of changes is "
                    "copied from the file: it looks like a fragment, and replacing the "
                    "file with it would delete the rest"
                ),
                len(new_lines),
                len(old_lines),
            ),
            user_text(
                "Mark the unchanged parts with '... existing code ...' comments, send "
                "the complete file, or use single_find_and_replace."
            ),
        )
