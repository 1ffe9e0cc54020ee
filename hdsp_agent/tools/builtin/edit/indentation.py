"""Re-basing a replacement onto the file's indentation, as a whole block.

A model writes ``new_string`` in the indentation it believed the file had (``old_string``'s). When a loose
pass matched, the file's lines may be indented differently: deeper, shallower, with tabs where the model wrote
spaces, or in 2-space levels where it wrote 4. Every line of the replacement is moved the same way: its depth
relative to ``old_string``'s reference line is kept, counted in indentation levels, and written in the
file's own style on top of the matched line's indentation. So tabs stay tabs and spaces stay spaces, and a
block never ends up half in one and half in the other (in Python that is a ``TabError``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

# Lines looked at to tell a file's indentation style: enough to decide, cheap on a 50,000-line file.
STYLE_SAMPLE_LINES = 2_000
DEFAULT_LEVEL_COLUMNS = 4


@dataclass(frozen=True)
class IndentStyle:
    """How one level of indentation is written: a tab, or ``columns`` spaces."""

    char: str  # "\t" or " "
    columns: int

    @property
    def level(self) -> str:
        return "\t" if self.char == "\t" else " " * self.columns


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def columns_of(indent: str, tab_columns: int) -> int:
    """The width of leading whitespace, a tab reaching the next multiple of ``tab_columns``."""
    width = 0
    for char in indent:
        width = (width // tab_columns + 1) * tab_columns if char == "\t" else width + 1
    return width


def detect_style(lines: list[str], fallback: IndentStyle | None = None) -> IndentStyle | None:
    """The indentation style ``lines`` use, or ``fallback`` when no line is indented.

    Tabs win when more indented lines start with a tab than with a space. The width of a space level is the
    most common step by which a line is indented deeper than the non-blank line before it (ties: the smaller
    step), which ignores the odd continuation line aligned under a bracket.
    """
    tab_lines = space_lines = 0
    steps: Counter[int] = Counter()
    previous: int | None = None  # the first indented line is a depth, not a step
    for line in lines:
        if not line.strip():
            continue
        indent = indent_of(line)
        if indent.startswith("\t"):
            tab_lines += 1
        elif indent:
            space_lines += 1
        width = columns_of(indent, DEFAULT_LEVEL_COLUMNS)
        if previous is not None and width > previous and "\t" not in indent:
            steps[width - previous] += 1
        previous = width
    if not tab_lines and not space_lines:
        return fallback
    if tab_lines > space_lines:
        return IndentStyle("\t", DEFAULT_LEVEL_COLUMNS)
    if not steps:
        return fallback if fallback is not None and fallback.char == " " else IndentStyle(" ", 4)
    best = max(steps.values())
    step = min(width for width, count in steps.items() if count == best)
    return IndentStyle(" ", min(step, 8))


def rebase(lines: list[str], old_base: str, file_base: str, old: IndentStyle, file: IndentStyle) -> list[str]:
    """``lines`` (indented relative to ``old_base`` in ``old``'s style) re-based onto ``file_base`` in
    ``file``'s style. Blank lines become empty."""
    same_style = old == file
    old_base_columns = columns_of(old_base, old.columns)
    result = []
    for line in lines:
        if not line.strip():
            result.append("")
            continue
        indent = indent_of(line)
        body = line[len(indent) :]
        if same_style and indent.startswith(old_base):
            # Same style: the characters after the reference indentation carry over as they are.
            result.append(file_base + indent[len(old_base) :] + body)
            continue
        relative = columns_of(indent, old.columns) - old_base_columns
        levels, extra = divmod(relative, old.columns)
        if file.char == "\t" and extra:
            # Alignment spaces after tabs would mix the two in one indentation: the nearest whole level.
            levels, extra = levels + (1 if extra * 2 >= old.columns else 0), 0
        result.append(_indent_from(file_base, levels, extra, file) + body)
    return result


def _indent_from(base: str, levels: int, extra: int, style: IndentStyle) -> str:
    """``base`` deepened (or, for negative ``levels``, shallowed) by ``levels`` levels plus ``extra`` spaces
    of alignment."""
    if levels >= 0:
        return base + style.level * levels + " " * extra
    remaining = base
    for _ in range(-levels):
        if remaining.endswith(style.level):
            remaining = remaining[: -len(style.level)]
        elif remaining.endswith("\t"):
            remaining = remaining[:-1]
        else:
            remaining = remaining[: max(0, len(remaining) - style.columns)]
    return remaining + " " * extra
