"""A text file as the edit tools see it: UTF-8 with ``\\n`` line endings inside, the file's own bytes outside.

Edits are matched and made on ``\\n`` text without a BOM; ``encode`` puts back the file's line ending (CRLF
or LF) and its UTF-8 BOM, so an edit never rewrites lines it did not touch.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from ..base import ToolError

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
            f"{shown_as} is not UTF-8 text (byte {error.start}); the edit tools only change UTF-8 files",
            "Change it with run_terminal_command (e.g. iconv then an edit), or ask the user.",
        ) from None
    bom = decoded.startswith(_BOM)
    if bom:
        decoded = decoded[1:]
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
    everything cost ~100 ms, twice per edit (approval preview and result).
    """
    from_name = "/dev/null" if created else f"a/{shown_as}"
    a, b = _diff_lines(before), _diff_lines(after)
    head, tail = _common_ends(a, b)
    start = max(0, head - _CONTEXT)
    keep_tail = max(0, tail - _CONTEXT)
    a_mid, b_mid = a[start : len(a) - keep_tail], b[start : len(b) - keep_tail]
    lines = []
    for line in difflib.unified_diff(a_mid, b_mid, from_name, f"b/{shown_as}"):
        match = _HUNK.match(line)
        if match and start:
            old_start, old_len, new_start, new_len = match.groups()
            line = (
                f"@@ -{int(old_start) + start}{old_len or ''} +{int(new_start) + start}{new_len or ''} @@"
                + line[match.end() :]
            )
        lines.append(line)
    return "".join(lines)


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
    lines = text.split("\n")
    if lines and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    wanted: list[int] = []
    for first, last in ranges:
        for number in range(max(1, first - context), min(len(lines), last + context) + 1):
            if not wanted or number > wanted[-1]:
                wanted.append(number)
    shown, previous = [], 0
    for number in wanted[:max_lines]:
        if previous and number > previous + 1:
            shown.append("   ...")
        shown.append(f"{number:>6}\t{lines[number - 1]}")
        previous = number
    if len(wanted) > max_lines:
        shown.append(f"   ... ({len(wanted) - max_lines} more changed lines; read the file to see them)")
    return "\n".join(shown)


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
