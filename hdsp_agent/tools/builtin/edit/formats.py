"""The two edit formats that are not plain find-and-replace, turned into exact operations.

- SEARCH/REPLACE blocks (Continue's ``search_and_replace_in_file``)::

      ------- SEARCH
      text to find
      =======
      text to put instead
      +++++++ REPLACE

  Git-conflict style markers (``<<<<<<< SEARCH`` / ``>>>>>>> REPLACE``) are accepted too. Malformed blocks
  are an error that says which block and what is missing; nothing is guessed.

- "existing code" markers (Continue's ``edit_existing_file``): the model sends the file with unchanged parts
  replaced by a comment such as ``# ... existing code ...``. The merge is deterministic: every piece of
  literal text next to a marker must begin (after a marker) and end (before a marker) with a line that
  exists in the file, so where the kept code starts and stops is known. When that does not hold, or a
  boundary line fits several places equally well, the merge is refused rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ....user_text import user_text
from ...base import ToolError

E_EDIT_MALFORMED = "E_EDIT_MALFORMED"
E_EDIT_AMBIGUOUS_MERGE = "E_EDIT_AMBIGUOUS_MERGE"

SEARCH_REPLACE_FORMAT = (
    "------- SEARCH\n[exact lines to find]\n=======\n[lines to put instead]\n+++++++ REPLACE"
)
_SEARCH = re.compile(r"^\s*(?:-{3,}|<{3,})\s*SEARCH\s*>?\s*$")
_DIVIDER = re.compile(r"^\s*={7}\s*$")
_REPLACE = re.compile(r"^\s*(?:\+{3,}|>{3,})\s*REPLACE\s*>?\s*$")
_FENCE = re.compile(r"^\s*```[\w+-]*\s*$")


@dataclass(frozen=True)
class SearchReplaceBlock:
    search: str
    replace: str
    number: int  # 1-based, across all strings of ``diffs``


def parse_search_replace(diffs: list[str]) -> list[SearchReplaceBlock]:
    """All blocks of all strings, in order. Raises ``E_EDIT_MALFORMED`` naming the block and what is wrong."""
    blocks: list[SearchReplaceBlock] = []
    for diff_index, diff in enumerate(diffs, start=1):
        blocks += _parse_one(diff, diff_index, len(blocks))
    if not blocks:
        raise _malformed("no SEARCH/REPLACE blocks found")
    return blocks


def _malformed(problem: str) -> ToolError:
    return ToolError(
        E_EDIT_MALFORMED,
        user_text("malformed SEARCH/REPLACE: %1; no change was made", problem),
        user_text("Each block must look exactly like this:\n%1", SEARCH_REPLACE_FORMAT),
    )


def _parse_one(diff: str, diff_index: int, numbered_before: int) -> list[SearchReplaceBlock]:
    blocks: list[SearchReplaceBlock] = []
    state = "outside"
    search: list[str] = []
    replace: list[str] = []
    where = f"diffs[{diff_index - 1}]"
    for line_number, line in enumerate(diff.replace("\r\n", "\n").split("\n"), start=1):
        block_number = numbered_before + len(blocks) + 1
        at = f"{where} line {line_number}"
        if state == "outside":
            if _SEARCH.match(line):
                state, search, replace = "search", [], []
            elif _DIVIDER.match(line) or _REPLACE.match(line):
                raise _malformed(f"{at}: {line.strip()!r} without a '------- SEARCH' line before it")
            elif line.strip() and not _FENCE.match(line):
                raise _malformed(f"{at}: text outside a block ({line.strip()[:60]!r})")
        elif state == "search":
            if _DIVIDER.match(line):
                state = "replace"
            elif _SEARCH.match(line) or _REPLACE.match(line):
                raise _malformed(
                    f"block {block_number} ({at}): the SEARCH part has no '=======' line after it"
                )
            else:
                search.append(line)
        else:
            if _REPLACE.match(line):
                blocks.append(SearchReplaceBlock(_joined(search), _joined(replace), block_number))
                state = "outside"
            elif _SEARCH.match(line) or _DIVIDER.match(line):
                raise _malformed(
                    f"block {block_number} ({at}): the REPLACE part is not closed by '+++++++ REPLACE'"
                )
            else:
                replace.append(line)
    if state != "outside":
        missing = "'=======' and '+++++++ REPLACE'" if state == "search" else "'+++++++ REPLACE'"
        raise _malformed(f"block {numbered_before + len(blocks) + 1} in {where} ends without {missing}")
    return blocks


def _joined(lines: list[str]) -> str:
    # Whole lines, each with its line break: an empty REPLACE then deletes the lines instead of blanking them.
    return "".join(line + "\n" for line in lines)


# -- "... existing code ..." markers -------------------------------------------------------------------------

_MARKER = re.compile(
    r"^\s*(?:#|//|/\*|<!--|--|;|%|\*|\{/\*)?\s*(?:\.{3}|…)\s*"
    r"(?:existing code|existing|rest of (?:the )?(?:code|file)|unchanged(?: code)?)\b[^\n]*$",
    re.IGNORECASE,
)
# A chunk may replace at most this many more lines than it has before the merge calls it suspicious.
_REGION_SLACK_LINES = 10


def has_markers(changes: str) -> bool:
    return any(_MARKER.match(line) for line in changes.split("\n"))


def merge_with_markers(original: str, changes: str) -> str:
    """``changes`` with each marker replaced by the file lines it stands for. Raises if ambiguous."""
    had_final_newline = original.endswith("\n")
    file_lines = (original[:-1] if had_final_newline else original).split("\n") if original else []
    parts = _split_on_markers(changes)
    merged: list[str] = []
    cursor = 0  # first file line not yet accounted for
    for index, part in enumerate(parts):
        if part is None:
            continue
        after_marker = index > 0 and parts[index - 1] is None
        before_marker = index + 1 < len(parts) and parts[index + 1] is None
        chunk = _trim_blank_edges(part) if (after_marker or before_marker) else part
        if not chunk:
            continue
        start = _find_start(file_lines, chunk, cursor) if after_marker else cursor
        end = _find_end(file_lines, chunk, start) if before_marker else len(file_lines) - 1
        if after_marker:
            merged += file_lines[cursor:start]  # what the marker before this chunk stands for
        region = end - start + 1
        if region > len(chunk) + max(_REGION_SLACK_LINES, 2 * len(chunk)):
            raise _ambiguous(
                f"the part starting {chunk[0].strip()!r} would replace lines {start + 1}-{end + 1} "
                f"({region} lines) with {len(chunk)} lines"
            )
        merged += chunk
        cursor = end + 1
    if parts and parts[-1] is None:
        merged += file_lines[cursor:]
    return "\n".join(merged) + ("\n" if had_final_newline else "")


def _split_on_markers(changes: str) -> list[list[str] | None]:
    """Literal chunks (lists of lines) and markers (None), in order; consecutive markers count as one."""
    text = changes[:-1] if changes.endswith("\n") else changes
    parts: list[list[str] | None] = []
    for line in text.split("\n"):
        if _MARKER.match(line):
            if not parts or parts[-1] is not None:
                parts.append(None)
        elif parts and parts[-1] is not None:
            parts[-1].append(line)
        else:
            parts.append([line])
    return parts


def _trim_blank_edges(lines: list[str]) -> list[str]:
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    last = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), -1)
    return lines[first : last + 1]


def _ambiguous(problem: str) -> ToolError:
    return ToolError(
        E_EDIT_AMBIGUOUS_MERGE,
        user_text(("cannot merge the '... existing code ...' markers: %1; no change was made"), problem),
        user_text(
            "Use single_find_and_replace (or multi_edit) for targeted changes, or "
            "send the complete file without markers."
        ),
    )


def _run_forward(file_lines: list[str], chunk: list[str], at: int) -> int:
    count = 0
    while count < len(chunk) and at + count < len(file_lines):
        if file_lines[at + count].strip() != chunk[count].strip():
            break
        count += 1
    return count


def _run_backward(file_lines: list[str], chunk: list[str], at: int) -> int:
    count = 0
    while count < len(chunk) and at - count >= 0:
        if file_lines[at - count].strip() != chunk[-1 - count].strip():
            break
        count += 1
    return count


def _find_start(file_lines: list[str], chunk: list[str], cursor: int) -> int:
    """Where the kept code before ``chunk`` ends: the file line equal to the chunk's first line."""
    scored = [(at, _run_forward(file_lines, chunk, at)) for at in range(cursor, len(file_lines))]
    scored = [(at, run) for at, run in scored if run > 0]
    if not scored:
        raise _ambiguous(
            f"the line after a marker, {chunk[0].strip()!r}, is not a line of the file (searched from line "
            f"{cursor + 1})"
            " — it must be an unchanged line so the merge knows where the kept code ends"
        )
    best = max(run for _, run in scored)
    places = [at for at, run in scored if run == best]
    if len(places) > 1:
        lines = ", ".join(str(at + 1) for at in places[:8])
        raise _ambiguous(
            f"the lines after a marker, starting {chunk[0].strip()!r}, fit several places (lines {lines})"
        )
    return places[0]


def _find_end(file_lines: list[str], chunk: list[str], start: int) -> int:
    """Where the kept code after ``chunk`` begins (minus one): the file line equal to its last line."""
    scored = [(at, _run_backward(file_lines, chunk, at)) for at in range(start, len(file_lines))]
    scored = [(at, run) for at, run in scored if run > 0]
    if not scored:
        raise _ambiguous(
            f"the line before a marker, {chunk[-1].strip()!r}, is not a line of the file (searched from "
            f"line {start + 1})"
            " — it must be an unchanged line so the merge knows where the kept code starts again"
        )
    best = max(run for _, run in scored)
    # Among equally good places, the one giving the chunk's own length wins; a real tie is refused.
    closeness = {at: abs((at - start + 1) - len(chunk)) for at, run in scored if run == best}
    nearest = min(closeness.values())
    places = [at for at, distance in closeness.items() if distance == nearest]
    if len(places) > 1:
        lines = ", ".join(str(at + 1) for at in places[:8])
        raise _ambiguous(
            f"the lines before a marker, ending {chunk[-1].strip()!r}, fit several places (lines {lines})"
        )
    return places[0]
