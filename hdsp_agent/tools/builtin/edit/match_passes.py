"""The matching passes behind ``fuzzy.apply_edit``: where in a file an ``old_string`` may be meant.

Each pass takes the file (as a ``Document``) and ``old_string`` and returns candidate spans, plus spans it
found but judged out of proportion. Passes only find; ``fuzzy`` decides (uniqueness, size) and replaces.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from rapidfuzz import fuzz

# Block anchors: how alike (rapidfuzz ratio, 0-100) the lines between the anchors must be.
BLOCK_ANCHOR_MIN_SIMILARITY = 70.0
# Context-aware: the share of non-blank middle lines that must match exactly (after trimming).
CONTEXT_MIN_LINE_SHARE = 0.5


@dataclass(frozen=True)
class Candidate:
    """One place ``old_string`` may mean: a character span of the file and how to build its replacement."""

    start: int
    end: int
    # (indentation in old_string, indentation in the file) for lines that correspond; drives re-indentation.
    indent_pairs: tuple[tuple[str, str], ...] = ()
    # Line passes replace whole lines; span passes replace characters (and strip new_string's boundary
    # whitespace).
    whole_lines: bool = False
    trim_new: bool = False
    unescape_new: bool = False


class Document:
    """The file's text split into lines, with each line's start offset.

    The splits are made on first use: the exact pass (most edits) needs only the text, and splitting a
    50,000-line file and stripping every line was most of an exact edit's cost.
    """

    def __init__(self, text: str) -> None:
        self.text = text

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @functools.cached_property
    def stripped(self) -> list[str]:
        return [line.strip() for line in self.lines]

    @functools.cached_property
    def starts(self) -> list[int]:
        return [0, *itertools.accumulate(len(line) + 1 for line in self.lines[:-1])]

    def window_span(self, first: int, last: int) -> tuple[int, int]:
        return self.starts[first], self.starts[last] + len(self.lines[last])

    def line_of(self, offset: int) -> int:
        """0-based line index containing ``offset``."""
        if "starts" not in self.__dict__:  # no line table yet: counting is cheaper than building one
            return self.text.count("\n", 0, offset)
        low, high = 0, len(self.starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if self.starts[middle] <= offset:
                low = middle
            else:
                high = middle - 1
        return low

    def line_start(self, offset: int) -> int:
        return self.text.rfind("\n", 0, offset) + 1

    def line_end(self, offset: int) -> int:
        end = self.text.find("\n", offset)
        return len(self.text) if end < 0 else end

    def whole_lines_around(self, start: int, end: int) -> tuple[int, int]:
        """The span widened to whole lines when only whitespace lies between it and its lines' ends."""
        line_start, line_end = self.line_start(start), self.line_end(end)
        if self.text[line_start:start].strip() or self.text[end:line_end].strip():
            return start, end
        return line_start, line_end

    def is_whole_lines(self, start: int, end: int) -> bool:
        at_line_start = start == self.line_start(start)
        return at_line_start and (end == len(self.text) or self.text[end] == "\n")

    def indent_at(self, offset: int) -> str | None:
        """The line's indentation when ``offset`` is its first non-blank character, else None."""
        before = self.text[self.line_start(offset) : offset]
        return before if before.strip() == "" else None


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def core_lines(text: str) -> tuple[list[str], int, int]:
    """``text``'s lines without leading/trailing blank lines, and how many of each were dropped."""
    lines = text.split("\n")
    lead = 0
    while lead < len(lines) and not lines[lead].strip():
        lead += 1
    trail = 0
    while trail < len(lines) - lead and not lines[len(lines) - 1 - trail].strip():
        trail += 1
    return lines[lead : len(lines) - trail], lead, trail


def max_span_lines(old_line_count: int) -> int:
    """The most lines a match may cover for an ``old_string`` of ``old_line_count`` lines."""
    return old_line_count + max(2, old_line_count // 2)


def _dedent(lines: list[str]) -> list[str]:
    widths = [len(indent_of(line)) for line in lines if line.strip()]
    cut = min(widths, default=0)
    return [line[cut:].rstrip() if line.strip() else "" for line in lines]


def aligned_pairs(old_lines: list[str], file_lines: list[str]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (indent_of(old), indent_of(new))
        for old, new in zip(old_lines, file_lines, strict=False)
        if old.strip() and new.strip()
    )


# -- passes --------------------------------------------------------------------------------------------------

PassResult = tuple[
    list[Candidate], list[tuple[int, int]]
]  # candidates, disproportionate line ranges (0-based)


def _find_all(text: str, needle: str) -> list[int]:
    """Every start of ``needle`` in ``text``, overlapping ones included (they make a match ambiguous too)."""
    found, position = [], text.find(needle)
    while position != -1:
        found.append(position)
        position = text.find(needle, position + 1)
    return found


def _exact(doc: Document, old: str) -> PassResult:
    return [Candidate(start, start + len(old)) for start in _find_all(doc.text, old)], []


def _trimmed_boundary(doc: Document, old: str) -> PassResult:
    core = old.strip()
    if not core or core == old:
        return [], []
    return [Candidate(start, start + len(core), trim_new=True) for start in _find_all(doc.text, core)], []


def _escape_normalized(doc: Document, old: str) -> PassResult:
    unescaped = unescape(old)
    if unescaped == old or not unescaped:
        return [], []
    starts = _find_all(doc.text, unescaped)
    return [Candidate(start, start + len(unescaped), unescape_new=True) for start in starts], []


def _whitespace_normalized(doc: Document, old: str) -> PassResult:
    tokens = old.split()
    if not tokens:
        return [], []
    pattern = re.compile(r"\s+".join(re.escape(token) for token in tokens))
    old_lines, _, _ = core_lines(old)
    candidates: list[Candidate] = []
    too_big: list[tuple[int, int]] = []
    for found in pattern.finditer(doc.text):
        first, last = doc.line_of(found.start()), doc.line_of(found.end())
        if last - first + 1 > max_span_lines(len(old_lines)):
            too_big.append((first, last))
            continue
        file_lines = doc.lines[first : last + 1]
        pairs = aligned_pairs(old_lines, file_lines) if len(file_lines) == len(old_lines) else ()
        candidates.append(Candidate(found.start(), found.end(), pairs, trim_new=True))
    return candidates, too_big


def _line_windows(doc: Document, old: str, same: Callable[[list[str], list[str]], bool]) -> PassResult:
    old_lines, _, _ = core_lines(old)
    count = len(old_lines)
    if not count:
        return [], []
    candidates = []
    first_stripped = old_lines[0].strip()
    for first in range(len(doc.lines) - count + 1):
        # Both line passes need the first line to agree once trimmed: a cheap filter before the full
        # comparison.
        if doc.stripped[first] != first_stripped:
            continue
        window = doc.lines[first : first + count]
        if same(old_lines, window):
            start, end = doc.window_span(first, first + count - 1)
            candidates.append(Candidate(start, end, aligned_pairs(old_lines, window), whole_lines=True))
    return candidates, []


def _indentation_flexible(doc: Document, old: str) -> PassResult:
    return _line_windows(doc, old, lambda a, b: _dedent(a) == _dedent(b))


def _line_trimmed(doc: Document, old: str) -> PassResult:
    return _line_windows(doc, old, lambda a, b: [x.strip() for x in a] == [y.strip() for y in b])


def _anchored(
    doc: Document, old: str, accept: Callable[[list[str], list[str]], bool], *, same_length: bool
) -> PassResult:
    """Blocks whose first and last lines equal old_string's (trimmed) and whose middle passes ``accept``."""
    old_lines, _, _ = core_lines(old)
    count = len(old_lines)
    first_anchor, last_anchor = (
        old_lines[0].strip() if old_lines else "",
        old_lines[-1].strip() if old_lines else "",
    )
    if count < 3 or not first_anchor or not last_anchor:
        return [], []
    slack = 0 if same_length else max(2, count // 2)
    shortest, longest = max(3, count - slack), count + slack
    candidates: list[Candidate] = []
    too_big: list[tuple[int, int]] = []
    # How far past an acceptable size to look for the last anchor, to tell "too big" from "not there".
    scan_limit = max(200, 20 * count)
    for first, line in enumerate(doc.stripped):
        if line != first_anchor:
            continue
        in_range: list[int] = []
        far_end = None
        plausible_end = False  # an end in proportion exists: then this is no "too big" case
        for last in range(first + 2, min(len(doc.lines), first + scan_limit)):
            if doc.stripped[last] != last_anchor:
                continue
            size = last - first + 1
            if size > max_span_lines(count):
                far_end = last
                break
            plausible_end = True
            if shortest <= size <= longest:
                in_range.append(last)
        chosen = [last for last in in_range if accept(old_lines[1:-1], doc.lines[first + 1 : last])]
        if chosen:
            # Several sizes fit: the one closest to old_string's own length.
            last = min(chosen, key=lambda end: (abs(end - first + 1 - count), end))
            block = doc.lines[first : last + 1]
            pairs = (
                aligned_pairs(old_lines, block)
                if len(block) == count
                else aligned_pairs([old_lines[0], old_lines[-1]], [block[0], block[-1]])
            )
            start, end = doc.window_span(first, last)
            candidates.append(Candidate(start, end, pairs, whole_lines=True))
        elif not plausible_end and far_end is not None:
            too_big.append((first, far_end))
    return candidates, too_big


def _similar_middle(old_middle: list[str], file_middle: list[str]) -> bool:
    joined_old = "\n".join(line.strip() for line in old_middle)
    joined_file = "\n".join(line.strip() for line in file_middle)
    return fuzz.ratio(joined_old, joined_file) >= BLOCK_ANCHOR_MIN_SIMILARITY


def _mostly_same_lines(old_middle: list[str], file_middle: list[str]) -> bool:
    meaningful = [(a.strip(), b.strip()) for a, b in zip(old_middle, file_middle, strict=False) if a.strip()]
    if not meaningful:
        return False
    equal = sum(1 for a, b in meaningful if a == b)
    return equal >= 1 and equal / len(meaningful) >= CONTEXT_MIN_LINE_SHARE


def _block_anchor(doc: Document, old: str) -> PassResult:
    return _anchored(doc, old, _similar_middle, same_length=False)


def _context_aware(doc: Document, old: str) -> PassResult:
    return _anchored(doc, old, _mostly_same_lines, same_length=True)


PASSES: tuple[tuple[str, Callable[[Document, str], PassResult]], ...] = (
    ("exact", _exact),
    ("trimmed_boundary", _trimmed_boundary),
    ("indentation_flexible", _indentation_flexible),
    ("line_trimmed", _line_trimmed),
    ("escape_normalized", _escape_normalized),
    ("whitespace_normalized", _whitespace_normalized),
    ("block_anchor", _block_anchor),
    ("context_aware", _context_aware),
)

_ESCAPE = re.compile(r"\\([ntr'\"`\\$])")
_ESCAPED_CHARS = {"n": "\n", "t": "\t", "r": "\r"}


def unescape(text: str) -> str:
    """``\\n``, ``\\t``, ``\\"`` ... written as two characters (a model escaping twice) turned into one."""
    return _ESCAPE.sub(lambda found: _ESCAPED_CHARS.get(found.group(1), found.group(1)), text)
