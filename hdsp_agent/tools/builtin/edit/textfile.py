"""A text file as the edit tools see it: UTF-8 with ``\\n`` line endings inside, the file's own bytes outside.

Edits are matched and made on ``\\n`` text without a BOM; ``encode`` puts back the file's line ending (CRLF
or LF) and its UTF-8 BOM, so an edit never rewrites lines it did not touch.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from ....user_text import user_text
from ...base import ToolError

E_NOT_UTF8 = "E_NOT_UTF8"
_BOM = "\ufeff"
# Diffs shown in an approval dialog stop here; the full diff is in the result's details.
PREVIEW_MAX_LINES = 400


@dataclass(frozen=True)
class TextFile:
    raw: bytes
    text: str  # "\n" line endings, no BOM
    bom: bool
    newline: str  # "\r\n" or "\n"

    def encode(self, text: str) -> bytes:
        """``text`` (with ``\\n`` endings) as this file's bytes: its line ending and BOM restored."""
        body = text.replace("\n", self.newline) if self.newline != "\n" else text
        return ((_BOM if self.bom else "") + body).encode("utf-8")


def decode_text_file(raw: bytes, shown_as: str) -> TextFile:
    """Decode ``raw`` for editing. Raises ``E_NOT_UTF8`` for files that are not UTF-8 text."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ToolError(
            E_NOT_UTF8,
            user_text(
                "%1 is not UTF-8 text (byte %2); the edit tools only change UTF-8 files",
                shown_as,
                error.start,
            ),
            user_text("Change it with run_terminal_command (e.g. iconv then an edit), or ask the user."),
        ) from None
    bom = decoded.startswith(_BOM)
    if bom:
        decoded = decoded[1:]
    if b"\r" not in raw:  # the common case: one fast scan (a byte) instead of three over the text
        return TextFile(raw, decoded, bom, "\n")
    crlf = decoded.count("\r\n")
    lone_lf = decoded.count("\n") - crlf
    # The dominant ending wins; a file mixing both ends up with the dominant one on every line.
    newline = "\r\n" if crlf > lone_lf else "\n"
    return TextFile(raw, decoded.replace("\r\n", "\n"), bom, newline)


def as_lf(text: str) -> str:
    """Arguments from the model may carry CRLF; matching happens on ``\\n`` text."""
    return text.replace("\r\n", "\n")


def _diff_lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1] + "\n\\ No newline at end of file\n")
    return lines


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")
_CONTEXT = 3


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines ``a`` and ``b`` share at the start, and then at the end."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    return head, tail


def unified_diff(before: str, after: str, shown_as: str, *, created: bool = False) -> str:
    """A unified diff (git style, 3 lines of context) from ``before`` to ``after``.

    difflib only sees the changed middle (plus context): on a 50,000-line file with a one-line edit, diffing
    everything cost ~100 ms, twice per edit (approval preview and result). The common start and end are
    found on the text itself (C-speed slice comparisons) before anything is split into lines.
    """
    from_name = "/dev/null" if created else f"a/{shown_as}"
    skipped, before_middle, after_middle = _changed_middle(before, after)
    a, b = _diff_lines(before_middle), _diff_lines(after_middle)
    head, tail = _common_ends(a, b)
    start = max(0, head - _CONTEXT)
    keep_tail = max(0, tail - _CONTEXT)
    a_mid, b_mid = a[start : len(a) - keep_tail], b[start : len(b) - keep_tail]
    offset = skipped + start
    lines = []
    for line in difflib.unified_diff(a_mid, b_mid, from_name, f"b/{shown_as}"):
        match = _HUNK.match(line)
        if match and offset:
            old_start, old_len, new_start, new_len = match.groups()
            line = (
                f"@@ -{int(old_start) + offset}{old_len or ''} +{int(new_start) + offset}{new_len or ''} @@"
                + line[match.end() :]
            )
        lines.append(line)
    return "".join(lines)


def _changed_middle(before: str, after: str) -> tuple[int, str, str]:
    """Both texts without the whole lines they share at the start and end (``_CONTEXT`` of each kept), and
    how many lines were left out at the start. Cuts are at line starts, so the lines are the texts' own."""
    shortest = min(len(before), len(after))
    prefix = _common_prefix_length(before, after, shortest)
    # The start of the line holding the first difference, then back over the context lines.
    cut = before.rfind("\n", 0, prefix) + 1
    for _ in range(_CONTEXT):
        if cut == 0:
            break
        cut = before.rfind("\n", 0, cut - 1) + 1
    suffix = _common_suffix_length(before, after, shortest - prefix)
    # The first line start after a line break inside the common end (a line start in both texts), then
    # forward over the context lines.
    newline = before.find("\n", len(before) - suffix)
    end = len(before) if newline < 0 else newline + 1
    for _ in range(_CONTEXT):
        if end >= len(before):
            break
        newline = before.find("\n", end)
        end = len(before) if newline < 0 else newline + 1
    tail = len(before) - end
    return before.count("\n", 0, cut), before[cut:end], after[cut : len(after) - tail]


_COMPARE_CHUNK = 1 << 16


def _common_prefix_length(a: str, b: str, limit: int) -> int:
    done = 0
    while done < limit:
        size = min(_COMPARE_CHUNK, limit - done)
        if a[done : done + size] == b[done : done + size]:
            done += size
            continue
        low, high = done, done + size  # the first difference lies in [low, high)
        while high - low > 1:
            middle = (low + high) // 2
            if a[low:middle] == b[low:middle]:
                low = middle
            else:
                high = middle
        return low
    return done


def _common_suffix_length(a: str, b: str, limit: int) -> int:
    done = 0
    while done < limit:
        size = min(_COMPARE_CHUNK, limit - done)
        if a[len(a) - done - size : len(a) - done] == b[len(b) - done - size : len(b) - done]:
            done += size
            continue
        low, high = done, done + size  # the shared end is at least low and less than high characters
        while high - low > 1:
            middle = (low + high) // 2
            if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
                low = middle
            else:
                high = middle
        return low
    return done


def preview(diff: str) -> str:
    """A diff cut for the approval dialog."""
    lines = diff.split("\n")
    if len(lines) <= PREVIEW_MAX_LINES:
        return diff
    return "\n".join(lines[:PREVIEW_MAX_LINES]) + f"\n... ({len(lines) - PREVIEW_MAX_LINES} more diff lines)"


def numbered_excerpt(
    text: str, ranges: list[tuple[int, int]], *, context: int = 2, max_lines: int = 60
) -> str:
    """The lines of ``text`` in ``ranges`` (1-based, inclusive) with some context, numbered like read_file."""
    wanted: list[int] = []
    for first, last in ranges:
        for number in range(max(1, first - context), last + context + 1):
            if not wanted or number > wanted[-1]:
                wanted.append(number)
    lines = _pick_lines(text, wanted[:max_lines])  # stops at the last line: wanted may run past it
    if len(wanted) > max_lines:
        line_count = text.count("\n") + (0 if text.endswith("\n") else 1)
        wanted = [number for number in wanted if number <= line_count]
    shown, previous = [], 0
    for number in wanted[:max_lines]:
        if number not in lines:
            break
        if previous and number > previous + 1:
            shown.append("   ...")
        shown.append(f"{number:>6}\t{lines[number]}")
        previous = number
    if len(wanted) > max_lines:
        shown.append(f"   ... ({len(wanted) - max_lines} more changed lines; read the file to see them)")
    return "\n".join(shown)


def _pick_lines(text: str, numbers: list[int]) -> dict[int, str]:
    """The lines of ``text`` with these 1-based ``numbers`` (ascending) up to its last line, found by counting
    line breaks a chunk at a time: splitting a 50,000-line file to show a few lines cost more than the edit.

    A text ending in a line break has no empty line after it (as in ``read_file``)."""
    picked: dict[int, str] = {}
    position, line = 0, 1  # ``position`` is where line ``line`` starts
    for number in numbers:
        while number - line > 64:
            chunk_end = min(len(text), position + _COMPARE_CHUNK)
            breaks = text.count("\n", position, chunk_end)
            if not breaks or line + breaks >= number:
                break
            position = text.rfind("\n", position, chunk_end) + 1
            line += breaks
        while line < number:
            newline = text.find("\n", position)
            if newline < 0:
                return picked
            position, line = newline + 1, line + 1
        if position == len(text) and text.endswith("\n"):
            return picked
        end = text.find("\n", position)
        picked[number] = text[position : len(text) if end < 0 else end]
    return picked


def changed_ranges(before: str, after: str) -> list[tuple[int, int]]:
    """The 1-based line ranges of ``after`` that differ from ``before`` (a deletion: the line after it)."""
    a, b = before.split("\n"), after.split("\n")
    head, tail = _common_ends(a, b)
    matcher = difflib.SequenceMatcher(None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False)
    ranges = []
    for tag, _, _, first, last in matcher.get_opcodes():
        if tag != "equal":
            ranges.append((head + first + 1, head + max(first + 1, last)))
    return ranges
