"""Reading and changing notebook cells: read_notebook, read_cell, insert_cell, edit_cell, delete_cell,
move_cell.

Changes go through ``NotebookRuntime.change``: into the live notebook when it is open in a connected
JupyterLab, else into the file (refused if it changed since this session read it), with the prior state kept
for undo.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, model_validator

from ...documents.edits import (
    E_CELL_NOT_FOUND,
    DeleteCell,
    MoveCell,
    SetCellSource,
    cell_source,
    cell_words,
    first_line,
    new_cell,
)
from ...documents.gateway import notebook_path
from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template, user_text
from ..base import (
    ApprovalView,
    PermissionAction,
    PermissionKind,
    ToolArgs,
    ToolContext,
    ToolError,
    ToolOutput,
)
from ..builtin.edit import fuzzy
from .notebook_tool import NotebookTool, output_paging_hint, path_field, vision_enabled
from .outputs import output_summary, render_outputs

BRIEF_CELL_LIMIT = 200
FULL_CELL_LIMIT = 30
# In read_notebook's full format, each cell's outputs get this many characters.
FULL_FORMAT_OUTPUT_CHARS = 3_000
E_EDIT_NO_CHANGE = fuzzy.E_EDIT_NO_CHANGE
# The executor's redaction: applied before a line or an output is cut (``ToolContext.redact``).
Redact = Callable[[str], str]


def _line_count(source: str) -> int:
    return len(source.splitlines())


def _brief_line(index: int, cell: dict[str, Any], include_outputs: bool, redact: Redact) -> str:
    source = cell_source(cell)
    if cell.get("cell_type") == "code":
        count = cell.get("execution_count")
        kind = f"code [{count if count is not None else ' '}]"
    else:
        kind = str(cell.get("cell_type"))
    lines = _line_count(source)
    first = redact(next((line.strip() for line in source.splitlines() if line.strip()), ""))
    row = f"[{index}] {cell.get('id')}  {kind}  {lines} line{'' if lines == 1 else 's'}  {first[:100]}"
    outputs = cell.get("outputs", [])
    summary = output_summary(outputs, redact=redact) if include_outputs else ""
    return row + (f"\n      → {summary}" if summary else "")


def _full_block(index: int, cell: dict[str, Any], include_outputs: bool, redact: Redact) -> str:
    count = cell.get("execution_count")
    header = (
        f"--- [{index}] {cell.get('id')} · {cell.get('cell_type')}"
        + (f" · [{count}]" if count else "")
        + " ---"
    )
    parts = [header, cell_source(cell)]
    if include_outputs and cell.get("outputs"):
        rendered = render_outputs(
            cell["outputs"],
            vision=False,
            paging_hint=output_paging_hint(str(cell.get("id"))),
            per_output_chars=FULL_FORMAT_OUTPUT_CHARS,
            total_chars=FULL_FORMAT_OUTPUT_CHARS,
            redact=redact,
        )
        parts += ["--- outputs ---", rendered.text]
    return "\n".join(parts)


class ReadNotebookArgs(ToolArgs):
    path: str | None = path_field()
    start: int = Field(default=0, ge=0, description="First cell index.")
    limit: int | None = Field(
        default=None,
        ge=1,
        description="How many cells.",
    )
    format: Literal["brief", "full"] = Field(
        default="brief",
        description="brief: a line per cell; full: whole sources.",
    )
    include_outputs: bool = Field(
        default=True,
        description="Include outputs.",
    )


class ReadNotebookTool(NotebookTool[ReadNotebookArgs]):
    name = "read_notebook"
    facts = ToolFacts(
        level="allow",
        needs="notebook",
        words=ToolWords(
            question=user_template("Read a file?"),
            statement=user_template("Read a file"),
            question_with_subject=user_template("Read %1?"),
            statement_with_subject=user_template("Read %1"),
        ),
    )
    description = (
        "Read a notebook (live, with unsaved edits): its cells with the ids the other notebook tools take."
    )
    args_model = ReadNotebookArgs
    read_only = True
    paging_hint = "read fewer cells (start/limit), or one cell with read_cell"

    async def run(self, args: ReadNotebookArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        document = await self.runtime.open(ctx, path)
        # Sources and at most 3,000 characters of a shown cell's outputs: the tab need not send images, nor
        # the outputs of the cells not shown.
        limit = args.limit or (BRIEF_CELL_LIMIT if args.format == "brief" else FULL_CELL_LIMIT)
        with_outputs = (args.start, args.start + limit) if args.include_outputs else (0, 0)
        notebook = await document.read(outputs="brief", output_cells=with_outputs)
        cells = notebook.cells
        shown = cells[args.start : args.start + limit]
        kernelspec = notebook.metadata.get("kernelspec") or {}
        source = "live notebook open in JupyterLab" if document.live else "file"
        kernel = kernelspec.get("display_name") or kernelspec.get("name") or "not set"
        lines = [f"{path} · {len(cells)} cells · kernel {kernel} · read from the {source}"]
        if not cells:
            lines.append("(the notebook has no cells)")
        render = _brief_line if args.format == "brief" else _full_block
        lines += [
            render(args.start + offset, cell, args.include_outputs, ctx.redact)
            for offset, cell in enumerate(shown)
        ]
        end = args.start + len(shown)
        if end < len(cells) or args.start > 0:
            more = f"; call read_notebook with start={end} for more" if end < len(cells) else ""
            lines.append(f"[cells {args.start}–{max(end - 1, args.start)} of {len(cells)} shown{more}]")
        ids = [str(cell.get("id")) for cell in shown]
        return ToolOutput("\n".join(lines), {"path": path, "cell_count": len(cells), "cell_ids": ids})


class ReadCellArgs(ToolArgs):
    path: str | None = path_field()
    cell_id: str | None = Field(default=None, description="Cell id.")
    index: int | None = Field(default=None, description="Or the cell's index (-1 = last).")
    include_outputs: bool = Field(default=True, description="Include outputs.")

    @model_validator(mode="after")
    def _one_address(self) -> ReadCellArgs:
        if (self.cell_id is None) == (self.index is None):
            raise ValueError("give exactly one of cell_id or index")
        return self


class ReadCellTool(NotebookTool[ReadCellArgs]):
    name = "read_cell"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        needs="notebook",
        words=ToolWords(
            question=user_template("Read a file?"),
            statement=user_template("Read a file"),
            question_with_subject=user_template("Read %1?"),
            statement_with_subject=user_template("Read %1"),
        ),
    )
    description = "Read one notebook cell in full: source and outputs."
    args_model = ReadCellArgs
    read_only = True
    paging_hint = "page the outputs with get_cell_output (offset/limit)"

    async def run(self, args: ReadCellArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        # One cell from an open tab, whatever the notebook's size (a file is read whole).
        read = await (await self.runtime.open(ctx, path)).read_cell(args.cell_id, args.index, "show")
        index, cell = read.index, read.cell
        count = cell.get("execution_count")
        header = f"cell {cell.get('id')} · index {index} of {read.cell_count} · {cell.cell_type}"
        parts = [header + (f" · execution count {count}" if count is not None else ""), "--- source ---"]
        parts.append(cell_source(cell))
        details: dict[str, Any] = {"path": path, "cell_id": cell.get("id"), "index": index}
        if args.include_outputs and cell.get("outputs"):
            rendered = render_outputs(
                cell.outputs,
                vision=vision_enabled(ctx),
                paging_hint=output_paging_hint(str(cell.get("id"))),
                redact=ctx.redact,
            )
            parts += ["--- outputs ---", rendered.text]
            if rendered.images:
                details["images"] = [image.as_dict() for image in rendered.images]
        return ToolOutput("\n".join(parts), details)


class InsertCellArgs(ToolArgs):
    path: str | None = path_field()
    index: int | None = Field(default=None, description="Position (default: after the cell in view).")
    after_cell_id: str | None = Field(default=None, description="Or insert after this cell.")
    cell_type: Literal["code", "markdown", "raw"] = Field(default="code", description="Cell type.")
    source: str = Field(description="Cell content.")

    @model_validator(mode="after")
    def _one_position(self) -> InsertCellArgs:
        if self.index is not None and self.after_cell_id is not None:
            raise ValueError("give index or after_cell_id, not both")
        return self


class InsertCellTool(NotebookTool[InsertCellArgs]):
    name = "insert_cell"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It changes cells of a notebook"),
        changes="cell_edit",
        needs="notebook",
        words=ToolWords(
            question=user_template("Insert a cell into the notebook?"),
            statement=user_template("Insert a cell into the notebook"),
            question_with_subject=user_template("Insert a cell into %1?"),
            statement_with_subject=user_template("Insert a cell into %1"),
        ),
    )
    description = "Insert a cell into a notebook (created if missing). It does not run it."
    args_model = InsertCellArgs

    def permission(self, args: InsertCellArgs, ctx: ToolContext) -> PermissionAction:
        path = notebook_path(ctx, args.path)
        if args.after_cell_id is not None:
            where = f"after cell {args.after_cell_id}"
        else:
            where = f"at index {args.index}" if args.index is not None else "after the cell in view"
        detail = f"insert a {args.cell_type} cell {where}:\n{args.source}"
        return PermissionAction(PermissionKind.FILE_WRITE, path, detail)

    async def run(self, args: InsertCellArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        document = await self.runtime.open(ctx, path)
        exists = await document.exists()
        # Nothing of the notebook is read for the position: an open tab clamps it and answers with the cell
        # where it landed (O(cell) whatever the notebook's size); after a cell: that one cell is read.
        position = -1 if args.index is None else args.index
        if args.after_cell_id is not None:
            if not exists:
                raise _no_cell(args.after_cell_id)
            try:
                position = (await document.read_cell(args.after_cell_id)).index + 1
            except ToolError as error:
                if error.code != E_CELL_NOT_FOUND:
                    raise
                raise _no_cell(args.after_cell_id) from None
        elif args.index is None:
            # After the cell in view or this turn's previous new cell (tools/jupyter/placement.py); the
            # launcher's empty starter cell gets the code instead.
            place = await self.runtime.placement.place(ctx, path, document, args.cell_type)
            position = place.index
            if place.reuse is not None:
                cell_id = str(place.reuse.cell.id)
                changed = await document.change_cell(
                    SetCellSource(cell_id=cell_id, source=args.source),
                    user_text("add %1", cell_words(place.reuse.index, args.source)),
                    place.reuse,
                )
                self.runtime.placement.placed(ctx, path, cell_id)
                index = changed if changed is not None else place.reuse.index
                return ToolOutput(
                    f"Wrote the code into the notebook's empty cell {cell_id} (index {index}) of {path}.",
                    {"path": path, "cell_id": cell_id, "index": index},
                )
        cell = new_cell(args.cell_type, args.source)
        where = position if position >= 0 else None
        inserted = await document.insert(cell, position, user_text("add %1", cell_words(where, args.source)))
        self.runtime.placement.placed(ctx, path, cell.id)
        index = inserted.index
        created = "" if exists else f" (created {path})"
        return ToolOutput(
            f"Inserted {args.cell_type} cell {cell.id} at index {index} of {path}{created}.",
            {"path": path, "cell_id": cell.id, "index": index},
        )


def _no_cell(cell_id: str) -> ToolError:
    return ToolError(
        E_CELL_NOT_FOUND,
        user_text("no cell with id %1", repr(cell_id)),
        user_text("Read the notebook with read_notebook to see the current cell ids."),
    )


class EditCellArgs(ToolArgs):
    path: str | None = path_field()
    cell_id: str = Field(description="Cell id.")
    source: str | None = Field(default=None, description="The whole new source.")
    old_string: str | None = Field(
        default=None,
        description="Or: exact text in the cell to replace.",
    )
    new_string: str | None = Field(default=None, description="Replacement for old_string.")

    @model_validator(mode="after")
    def _one_change(self) -> EditCellArgs:
        pair = (self.old_string is not None, self.new_string is not None)
        if self.source is not None and any(pair):
            raise ValueError("give either source, or old_string with new_string, not both")
        if self.source is None and pair != (True, True):
            raise ValueError("give source, or both old_string and new_string")
        return self


# The name the matcher gets for a cell, for its comment syntax: code cells of the usual kernels (Python, R,
# Julia) comment with "#"; a markdown cell's "#" is a heading, its comments are HTML's.
_CELL_NAMES = {"code": "cell.py", "markdown": "cell.md"}


def replace_in_cell(text: str, old: str, new: str, cell_type: str = "code") -> tuple[str, str | None]:
    """``text`` with what ``old`` means replaced (the shared fuzzy matcher); a note when it was not exact."""
    # Sources from notebooks written on Windows may carry CRLF; the matcher works on \n.
    outcome = fuzzy.apply_edit(
        text.replace("\r\n", "\n"),
        old.replace("\r\n", "\n"),
        new.replace("\r\n", "\n"),
        filename=_CELL_NAMES.get(cell_type),
    )
    return outcome.text, (None if outcome.pass_name == "exact" else outcome.note)


def cell_diff(before: str, after: str, path: str, cell: str) -> str:
    """A unified diff of one cell's source, headed "PATH CELL" (``cell``: the id for the model, the cell's
    words for the user's card)."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{path} {cell}",
        tofile=f"{path} {cell}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


class EditCellTool(NotebookTool[EditCellArgs]):
    name = "edit_cell"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It changes cells of a notebook"),
        changes="cell_edit",
        needs="notebook",
        words=ToolWords(
            question=user_template("Change a cell of the notebook?"),
            statement=user_template("Change a cell of the notebook"),
            question_with_subject=user_template("Change a cell of %1?"),
            statement_with_subject=user_template("Change a cell of %1"),
        ),
    )
    description = (
        "Change a notebook cell's source: replace old_string with new_string, or give the whole source."
    )
    args_model = EditCellArgs

    def permission(self, args: EditCellArgs, ctx: ToolContext) -> PermissionAction:
        # The card's diff is computed against the live cell only when the policy asks (approval_view).
        path = notebook_path(ctx, args.path)
        return PermissionAction(PermissionKind.FILE_WRITE, path, f"edit cell {args.cell_id}")

    async def approval_view(
        self, args: EditCellArgs, ctx: ToolContext, action: PermissionAction | None
    ) -> ApprovalView:
        """The diff ``run`` will make, by the same matcher, against the cell as it is now (the open tab's
        live content, else the file): an edit that cannot apply raises here, before anyone is asked."""
        path = notebook_path(ctx, args.path)
        document = await self.runtime.open(ctx, path)
        read = await document.read_cell(args.cell_id)
        before = cell_source(read.cell)
        after = self._new_source(before, args, str(read.cell.get("cell_type", "code")))[0]
        if after == before:
            raise ToolError(
                E_EDIT_NO_CHANGE, user_text("cell %1 already has this content; nothing changed", args.cell_id)
            )
        # The header names the cell as the user sees it (the model's output keeps the id it works with).
        cell = cell_words(read.index, before)
        return ApprovalView(
            cell_diff(before, after, path, str(cell)), user_text("changes %1 of %2", cell, path)
        )

    @staticmethod
    def _new_source(before: str, args: EditCellArgs, cell_type: str) -> tuple[str, str | None]:
        if args.source is not None:
            return args.source, None
        return replace_in_cell(before, args.old_string or "", args.new_string or "", cell_type)

    async def run(self, args: EditCellArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        document = await self.runtime.open(ctx, path)
        read = await document.read_cell(args.cell_id)
        before = cell_source(read.cell)
        after, match_note = self._new_source(before, args, str(read.cell.get("cell_type", "code")))
        if after == before:
            raise ToolError(
                E_EDIT_NO_CHANGE, user_text("cell %1 already has this content; nothing changed", args.cell_id)
            )
        index = await document.change_cell(
            SetCellSource(cell_id=args.cell_id, source=after),
            user_text("change %1", cell_words(read.index, after)),
            read,
        )
        diff = cell_diff(before, after, path, f"cell {args.cell_id}")
        how = f" old_string {match_note}." if match_note else ""
        return ToolOutput(
            f"Edited cell {args.cell_id} (index {index}).{how}\n{diff}",
            {
                "path": path,
                "cell_id": args.cell_id,
                "index": index,
                "first_line": first_line(after),
                "diff": diff,
            },
        )


class DeleteCellArgs(ToolArgs):
    path: str | None = path_field()
    cell_id: str = Field(description="Cell id.")


class DeleteCellTool(NotebookTool[DeleteCellArgs]):
    name = "delete_cell"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It changes cells of a notebook"),
        changes="cell_edit",
        profiles=frozenset({"full", "standard"}),
        needs="notebook",
        words=ToolWords(
            question=user_template("Delete a cell of the notebook?"),
            statement=user_template("Delete a cell of the notebook"),
            question_with_subject=user_template("Delete a cell of %1?"),
            statement_with_subject=user_template("Delete a cell of %1"),
        ),
    )
    description = "Delete a notebook cell."
    args_model = DeleteCellArgs

    def permission(self, args: DeleteCellArgs, ctx: ToolContext) -> PermissionAction:
        path = notebook_path(ctx, args.path)
        source = self.runtime.seen_source(ctx.session_id, path, args.cell_id)
        detail = f"delete cell {args.cell_id}" + (f":\n{source}" if source is not None else "")
        return PermissionAction(PermissionKind.FILE_WRITE, path, detail)

    async def approval_view(
        self, args: DeleteCellArgs, ctx: ToolContext, action: PermissionAction | None
    ) -> ApprovalView:
        """The source that would go, read from the cell as it is now (the id stays in the details)."""
        path = notebook_path(ctx, args.path)
        cell, source = await self.live_cell(ctx, path, args.cell_id)
        return ApprovalView(source or None, user_text("deletes %1 of %2", cell, path))

    async def run(self, args: DeleteCellArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        document = await self.runtime.open(ctx, path)
        read = await document.read_cell(args.cell_id)
        index, cell = read.index, read.cell
        await document.change_cell(
            DeleteCell(cell_id=args.cell_id),
            user_text("delete %1", cell_words(index, cell_source(cell))),
            read,
        )
        return ToolOutput(
            f"Deleted {cell.cell_type} cell {args.cell_id} (was at index {index}). "
            f"Its source was:\n{cell_source(cell)}",
            {
                "path": path,
                "cell_id": args.cell_id,
                "index": index,
                "first_line": first_line(cell_source(cell)),
            },
        )


class MoveCellArgs(ToolArgs):
    path: str | None = path_field()
    cell_id: str = Field(description="Cell id.")
    to_index: int = Field(description="New index (-1 = last).")


class MoveCellTool(NotebookTool[MoveCellArgs]):
    name = "move_cell"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It changes cells of a notebook"),
        changes="cell_edit",
        profiles=frozenset({"full"}),
        needs="notebook",
        words=ToolWords(
            question=user_template("Move a cell in the notebook?"),
            statement=user_template("Move a cell in the notebook"),
            question_with_subject=user_template("Move a cell in %1?"),
            statement_with_subject=user_template("Move a cell in %1"),
        ),
    )
    description = "Move a notebook cell to another index."
    args_model = MoveCellArgs

    def permission(self, args: MoveCellArgs, ctx: ToolContext) -> PermissionAction:
        path = notebook_path(ctx, args.path)
        return PermissionAction(
            PermissionKind.FILE_WRITE, path, f"move cell {args.cell_id} to index {args.to_index}"
        )

    async def approval_view(
        self, args: MoveCellArgs, ctx: ToolContext, action: PermissionAction | None
    ) -> ApprovalView:
        """The cell's source (what moves) and where to."""
        path = notebook_path(ctx, args.path)
        cell, source = await self.live_cell(ctx, path, args.cell_id)
        if args.to_index < 0:
            return ApprovalView(source or None, user_text("moves %1 of %2 to the end", cell, path))
        return ApprovalView(
            source or None, user_text("moves %1 of %2 to position %3", cell, path, args.to_index + 1)
        )

    async def run(self, args: MoveCellArgs, ctx: ToolContext) -> ToolOutput:
        path = notebook_path(ctx, args.path)
        document = await self.runtime.open(ctx, path)
        read = await document.read_cell(args.cell_id)
        old_index = read.index
        index = await document.change_cell(
            MoveCell(cell_id=args.cell_id, to_index=args.to_index),
            user_text("move %1", cell_words(read.index, cell_source(read.cell))),
            read,
        )
        return ToolOutput(
            f"Moved cell {args.cell_id} from index {old_index} to index {index}.",
            {
                "path": path,
                "cell_id": args.cell_id,
                "index": index,
                "old_index": old_index,
                "first_line": first_line(cell_source(read.cell)),
            },
        )
