"""The file as the matching passes see it (``Document``) and what a pass reports (``Candidate``)."""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

from .comments import UNKNOWN, CommentSyntax, code_of_lines
from .indentation import STYLE_SAMPLE_LINES, IndentStyle, detect_style, indent_of

# A significant token: a word (identifier, keyword, number) or one punctuation character. Whitespace between
# two words still separates them ("int x" is not "intx"); everywhere else it is insignificant.
TOKEN = re.compile(r"\w+|[^\w\s]")
# What the line passes ignore at a line's ends. Not "\r": a CR is a line ending, and a line ending that
# differs is the line-endings pass's to forgive (which then writes the file's own).
LINE_BLANKS = " \t\f\v"


@dataclass(frozen=True)
class Candidate:
    """One place ``old_string`` may mean: a character span of the file and how to lay the replacement in.

    ``old_base`` and ``file_base`` are the indentation of a line of ``old_string`` and of the file line it
    corresponds to: the replacement is re-based from the one onto the other (``None``: no re-basing).
    """

    start: int
    end: int
    # Line passes replace whole lines (the span runs from a line's start to the end of a line, without its
    # break); span passes replace characters.
    whole_lines: bool = False
    old_base: str | None = None
    file_base: str | None = None
    # Span passes that matched old_string without its surrounding whitespace drop new_string's too.
    trim_new: bool = False
    unescape_new: bool = False
    # Line passes: for each line of old_string (its core lines), the file line it matched (-1: none). The
    # replacement's lines are re-based on the nearest matched line, so a model whose copy nests lines
    # differently from the file still gets each line where the file has its neighbour.
    line_map: tuple[int, ...] = ()
    # Comments ignored: the file's comment lines the model never saw survive the replacement.
    keep_comments: bool = False
    # Block anchors around a middle that old_string gave only as comments ("# ... the loop ..."): those
    # lines, which new_string must not keep (keeping them would mean "keep the code", which it cannot).
    placeholder: tuple[str, ...] = ()
    # Matched on tokens alone: new_string's token changes are merged into the file's own layout.
    by_tokens: bool = False
    # The line break the replacement is written with (the line-endings pass may match "\r" lines).
    newline: str = "\n"


class Document:
    """The file's text split into lines, with each line's start offset.

    The splits are made on first use: the exact pass (most edits) needs only the text, and splitting a
    50,000-line file and stripping every line was most of an exact edit's cost.
    """

    def __init__(self, text: str, comments: CommentSyntax = UNKNOWN) -> None:
        self.text = text
        self.comments = comments

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @functools.cached_property
    def stripped(self) -> list[str]:
        return [line.strip(LINE_BLANKS) for line in self.lines]

    @functools.cached_property
    def code(self) -> list[str]:
        """Each line's code without comments, trimmed."""
        return code_of_lines(self.lines, self.comments)

    @functools.cached_property
    def starts(self) -> list[int]:
        return [0, *itertools.accumulate(len(line) + 1 for line in self.lines[:-1])]

    @functools.cached_property
    def indent_style(self) -> IndentStyle | None:
        """How the file indents (None: no line is indented)."""
        return detect_style(self.lines[:STYLE_SAMPLE_LINES])

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

    def line_indent(self, offset: int) -> str:
        """The indentation of the line holding ``offset``."""
        start = self.line_start(offset)
        return indent_of(self.text[start : self.line_end(start)])

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


# candidates, and line ranges (0-based) that looked like the match but were out of proportion
PassResult = tuple[list[Candidate], list[tuple[int, int]]]
