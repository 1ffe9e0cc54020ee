"""The diffs edits carry (approval preview, result, undo view) are valid patches, also when trimmed for speed."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hdsp_agent.tools.builtin.textfile import _diff_lines, changed_ranges, unified_diff

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
