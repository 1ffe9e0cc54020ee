"""The diffs edits carry (approval preview, result, undo view) are valid patches, also when trimmed for
speed."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hdsp_agent.tools.builtin.edit import textfile
from hdsp_agent.tools.builtin.edit.textfile import _diff_lines, changed_ranges, numbered_excerpt, unified_diff

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+")


def apply_patch(before: str, diff: str) -> str:
    source, out, position = _diff_lines(before), [], 0
    lines = diff.splitlines(keepends=True)[2:]
    index = 0
    while index < len(lines):
        match = HUNK.match(lines[index])
        assert match, lines[index]
        index += 1
        start = int(match.group(1)) + (1 if match.group(2) == "0" else 0)
        out += source[position : start - 1]
        position = start - 1
        while index < len(lines) and not lines[index].startswith("@@"):
            line = lines[index]
            marker = lines[index + 1] if index + 1 < len(lines) and lines[index + 1].startswith("\\") else ""
            if line[0] == " ":
                out.append(source[position])
                position += 1
            elif line[0] == "-":
                position += 1
            elif line[0] == "+":
                out.append(line[1:] + marker)
            index += 1 + (1 if marker and line[0] != "\\" else 0)
    return "".join(out + source[position:])


lines = st.lists(st.sampled_from(["a", "b", "c", "x", "y"]), max_size=40)


@given(lines, lines)
@settings(max_examples=400, deadline=None)
def test_unified_diff_applies_back_to_the_new_text(before: list[str], after: list[str]) -> None:
    old, new = "\n".join(before) + "\n", "\n".join(after) + "\n"
    assert apply_patch(old, unified_diff(old, new, "f.py")) == "".join(_diff_lines(new))


def test_one_line_edit_in_a_big_file_has_true_line_numbers() -> None:
    old_lines = [f"line {i}" for i in range(50_000)]
    new_lines = list(old_lines)
    new_lines[30_000] = "changed"
    diff = unified_diff("\n".join(old_lines) + "\n", "\n".join(new_lines) + "\n", "big.py")
    assert "@@ -29998,7 +29998,7 @@" in diff
    assert changed_ranges("\n".join(old_lines), "\n".join(new_lines)) == [(30_001, 30_001)]


@given(lines, lines, st.sampled_from([1, 2, 7]))
@settings(max_examples=300, deadline=None)
def test_the_common_ends_are_found_whatever_the_comparison_chunk(
    before: list[str], after: list[str], chunk: int
) -> None:
    old, new = "\n".join(before), "\n".join(after) + "\n"
    default = unified_diff(old, new, "f.py")
    saved, textfile._COMPARE_CHUNK = textfile._COMPARE_CHUNK, chunk
    try:
        assert unified_diff(old, new, "f.py") == default
    finally:
        textfile._COMPARE_CHUNK = saved
    assert apply_patch(old, default) == "".join(_diff_lines(new))


def split_excerpt(text: str, ranges: list[tuple[int, int]], max_lines: int) -> list[str]:
    """What numbered_excerpt shows, by splitting the whole text (the slow, obvious way)."""
    all_lines = text.split("\n")
    if all_lines[-1] == "" and text.endswith("\n"):
        all_lines.pop()
    wanted = sorted(
        {n for first, last in ranges for n in range(max(1, first - 2), min(len(all_lines), last + 2) + 1)}
    )
    return [f"{n:>6}\t{all_lines[n - 1]}" for n in wanted[:max_lines]]


@given(
    st.lists(st.sampled_from(["", "a", "  b"]), max_size=300),
    st.sampled_from(["", "\n", "\n\n"]),
    st.lists(st.tuples(st.integers(1, 310), st.integers(0, 3)), min_size=1, max_size=4),
    st.sampled_from([3, 60]),
)
@settings(max_examples=300, deadline=None)
def test_numbered_excerpt_shows_the_lines_a_full_split_would(
    body: list[str], ending: str, starts: list[tuple[int, int]], max_lines: int
) -> None:
    text = "\n".join(body) + ending
    ranges = sorted((first, first + extra) for first, extra in starts)
    shown = [line for line in numbered_excerpt(text, ranges, max_lines=max_lines).split("\n") if "\t" in line]
    assert shown == split_excerpt(text, ranges, max_lines)
