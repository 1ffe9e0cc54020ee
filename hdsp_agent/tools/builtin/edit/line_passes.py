"""Matching passes that compare ``old_string`` with the file line by line and replace whole lines:
whitespace at the ends of lines, tabs against spaces, comments ignored, and block anchors with a similar
middle (Levenshtein).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable

from rapidfuzz.distance import Levenshtein

from .comments import code_of_lines
from .document import LINE_BLANKS, Candidate, Document, PassResult, core_lines, max_span_lines
from .indentation import indent_of

# Block anchors: how alike (Levenshtein normalized similarity, 0-1) the lines between the anchors must be.
# In the case table (tests/edit_cases.py) every middle that should match scores 0.67 or more (a value or a
# name changed, a loop written the long way, a line given as a comment) and every one that should not scores
# 0.57 or less (another call remembered, every name remembered wrong, an unrelated body): 0.6 is in that gap.
# A middle given only as comments is a placeholder, not compared (see ``Candidate.placeholder``).
BLOCK_ANCHOR_MIN_SIMILARITY = 0.6
# Comments ignored: the code left must be worth matching (not one bracket between two comments).
COMMENTS_MIN_CODE_CHARS = 12
TAB_WIDTHS = (8, 4, 2)


def _whole_line_candidate(
    doc: Document, old_first: str, first: int, last: int, line_map: tuple[int, ...] = ()
) -> Candidate:
    start, end = doc.window_span(first, last)
    return Candidate(
        start,
        end,
        whole_lines=True,
        old_base=indent_of(old_first),
        file_base=indent_of(doc.lines[first]),
        line_map=line_map,
    )


def _windows(doc: Document, old: str, file_view: list[str], view: Callable[[str], str]) -> PassResult:
    """Windows of the file whose lines, seen through ``view``, equal old_string's lines (``file_view`` is the
    file's lines through the same view)."""
    old_lines, _, _ = core_lines(old)
    if not old_lines:
        return [], []
    wanted = [view(line) for line in old_lines]
    count = len(wanted)
    candidates = []
    for first in range(len(file_view) - count + 1):
        if file_view[first] == wanted[0] and file_view[first : first + count] == wanted:
            line_map = tuple(range(first, first + count))
            candidates.append(_whole_line_candidate(doc, old_lines[0], first, first + count - 1, line_map))
    return candidates, []


def line_whitespace(doc: Document, old: str) -> PassResult:
    """Every line equal once whitespace at its start and end is ignored (indentation, trailing spaces)."""
    return _windows(doc, old, doc.stripped, _trimmed)


def _trimmed(line: str) -> str:
    return line.strip(LINE_BLANKS)


def tabs_spaces(doc: Document, old: str) -> PassResult:
    """Every line equal once tabs inside it are expanded to spaces (tab stops of 8, 4 or 2 columns)."""
    old_has_tabs = any("\t" in _trimmed(line) for line in old.split("\n"))
    if not old_has_tabs and not any("\t" in line for line in doc.stripped):
        return [], []
    for width in TAB_WIDTHS:
        found = _windows(doc, old, [line.expandtabs(width) for line in doc.stripped], _expanded(width))
        if found[0]:
            return found
    return [], []


def _expanded(width: int) -> Callable[[str], str]:
    return lambda line: _trimmed(line).expandtabs(width)


def comments_ignored(doc: Document, old: str) -> PassResult:
    """The same code lines in the same order once comments and blank lines are left out."""
    old_lines, _, _ = core_lines(old)
    old_code = code_of_lines(old_lines, doc.comments)
    wanted = [line for line in old_code if line]
    if sum(len(line) for line in wanted) < COMMENTS_MIN_CODE_CHARS:
        return [], []
    if wanted[0] not in doc.text:  # a cheap test before every line of the file is read for comments
        return [], []
    # old_string's comment lines before its first code line and after its last may stand for the file's.
    lead = next(index for index, line in enumerate(old_code) if line)
    trail = next(index for index, line in enumerate(reversed(old_code)) if line)
    code_at = [index for index, line in enumerate(doc.code) if line]
    code = [doc.code[index] for index in code_at]
    candidates: list[Candidate] = []
    too_big: list[tuple[int, int]] = []
    for position in range(len(code) - len(wanted) + 1):
        if code[position] != wanted[0] or code[position : position + len(wanted)] != wanted:
            continue
        first, last = code_at[position], code_at[position + len(wanted) - 1]
        first = _extend_over_comments(doc, first, -1, lead)
        last = _extend_over_comments(doc, last, 1, trail)
        if last - first + 1 > max_span_lines(len(old_lines)):
            too_big.append((first, last))
            continue
        matched = iter(code_at[position : position + len(wanted)])
        line_map = tuple(next(matched) if line else -1 for line in old_code)
        candidate = _whole_line_candidate(doc, old_lines[0], first, last, line_map)
        candidates.append(dataclasses.replace(candidate, keep_comments=True))
    return candidates, too_big


def keep_file_comments(
    doc: Document, candidate: Candidate, old_lines: list[str], new_lines: list[str], rebased: list[str]
) -> list[str]:
    """The replacement for a comments-ignored match: new_string's lines where they differ from old_string's,
    the file's own lines (comments included) where they are the same, so comments the model never saw are
    not deleted along the way. ``rebased`` is ``new_lines`` re-based onto the file's indentation."""
    first = doc.line_of(candidate.start)
    last = doc.line_of(candidate.end)
    cursor = first  # the next file line not yet written or dropped
    result: list[str] = []
    matcher = difflib.SequenceMatcher(
        None, [line.strip() for line in old_lines], [line.strip() for line in new_lines], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        mapped = [candidate.line_map[index] for index in range(i1, i2) if candidate.line_map[index] >= 0]
        if tag == "equal":
            for line in mapped:  # the file's lines up to each kept code line, comments between included
                result += doc.lines[cursor : line + 1]
                cursor = line + 1
            continue
        if mapped:  # replaced or deleted code: the comments before it stay, the lines it spans go
            result += doc.lines[cursor : mapped[0]]
            cursor = mapped[-1] + 1
        result += rebased[j1:j2]
    return result + doc.lines[cursor : last + 1]


def _extend_over_comments(doc: Document, line: int, step: int, most: int) -> int:
    """``line`` moved by ``step`` over up to ``most`` adjoining comment-only lines."""
    for _ in range(most):
        neighbour = line + step
        if not 0 <= neighbour < len(doc.lines) or not doc.stripped[neighbour] or doc.code[neighbour]:
            break
        line = neighbour
    return line


def block_anchor_fuzzy(doc: Document, old: str) -> PassResult:
    """First and last lines equal (trimmed), at least 3 lines, the lines between them similar."""
    old_lines, _, _ = core_lines(old)
    count = len(old_lines)
    if count < 3:
        return [], []
    first_anchor, last_anchor = _trimmed(old_lines[0]), _trimmed(old_lines[-1])
    old_middle = "\n".join(_trimmed(line) for line in old_lines[1:-1])
    # A middle of comments only stands for code the model left out: there is nothing to compare it with.
    middle_code = code_of_lines(old_lines[1:-1], doc.comments)
    placeholder = () if any(middle_code) else tuple(line.strip() for line in old_lines[1:-1] if line.strip())
    slack = max(2, count // 2)
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
        scored = [
            (1.0 if placeholder else middle_similarity(old_middle, doc.stripped[first + 1 : last]), last)
            for last in in_range
        ]
        accepted = [(score, last) for score, last in scored if score >= BLOCK_ANCHOR_MIN_SIMILARITY]
        if accepted:
            # Several ends fit: the most similar middle, then the size closest to old_string's.
            _, last = max(accepted, key=lambda pair: (pair[0], -abs(pair[1] - first + 1 - count)))
            # Lines correspond by position when the block has old_string's length, else only the anchors do.
            size = last - first + 1
            line_map = tuple(range(first, last + 1)) if size == count else (first, *[-1] * (count - 2), last)
            candidate = _whole_line_candidate(doc, old_lines[0], first, last, line_map)
            candidates.append(dataclasses.replace(candidate, placeholder=placeholder))
        elif not plausible_end and far_end is not None:
            too_big.append((first, far_end))
    return candidates, too_big


def middle_similarity(old_middle: str, file_middle_lines: list[str]) -> float:
    """Levenshtein normalized similarity of the trimmed lines between the anchors (an empty middle on both
    sides is identical)."""
    return Levenshtein.normalized_similarity(old_middle, "\n".join(file_middle_lines))
