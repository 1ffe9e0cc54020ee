"""Finding the text an edit means when the model's ``old_string`` is not a character-exact copy of the file.

Models misremember whitespace, indentation, line endings, escapes and comments. The passes (in
``match_passes``) run from strict to loose; the first pass that finds anything decides. A match is accepted
only when it is unique (or every occurrence is wanted, with ``replace_all``) and when its size is in
proportion to ``old_string``: a loose pass must never turn a 3-line ``old_string`` into a 40-line
replacement. After a non-exact match the replacement is re-based onto the matched lines' indentation
(``indentation.rebase``; line passes by the nearest matched line), so the file keeps its own style and a block
never mixes tabs and spaces.

All text here uses ``\\n`` line endings; callers normalize CRLF before and restore it after (a lone CR in the
file, or CRLF in text given to ``apply_edit`` directly, is what the line-endings pass is for).
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from ....user_text import user_text
from ...base import ToolError
from .comments import comment_syntax_for
from .document import Candidate, Document, core_lines
from .indentation import IndentStyle, detect_style, indent_of, rebase
from .line_passes import keep_file_comments
from .match_passes import PASS_NOTES, PASSES
from .span_passes import merge_by_tokens, unescape

E_EDIT_NO_MATCH = "E_EDIT_NO_MATCH"
E_EDIT_AMBIGUOUS = "E_EDIT_AMBIGUOUS"
E_EDIT_DISPROPORTIONATE = "E_EDIT_DISPROPORTIONATE"
E_EDIT_NO_CHANGE = "E_EDIT_NO_CHANGE"
E_EDIT_EMPTY_OLD = "E_EDIT_EMPTY_OLD"
E_EDIT_PLACEHOLDER = "E_EDIT_KEEPS_PLACEHOLDER"

__all__ = ["PASSES", "PASS_NOTES", "EditOutcome", "apply_edit", "rebase", "unescape"]


@dataclass
class EditOutcome:
    text: str
    pass_name: str
    count: int
    # 1-based inclusive line ranges of the replaced text in the new content.
    new_line_ranges: list[tuple[int, int]] = field(default_factory=list)
    old_line_ranges: list[tuple[int, int]] = field(default_factory=list)

    @property
    def note(self) -> str:
        return PASS_NOTES[self.pass_name]


# -- replacement ---------------------------------------------------------------------------------------------


def _rebased(lines: list[str], candidate: Candidate, doc: Document, old: str, new: str) -> list[str]:
    if candidate.old_base is None or candidate.file_base is None:
        return lines
    # The style old_string and new_string were written in; with no indented line in them, the file's.
    model_style = detect_style(old.split("\n") + new.split("\n"), fallback=doc.indent_style)
    model_style = model_style or IndentStyle(" ", 4)
    file_style = doc.indent_style or model_style
    return rebase(lines, candidate.old_base, candidate.file_base, model_style, file_style)


def _rebased_by_lines(
    new_lines: list[str], old_lines: list[str], candidate: Candidate, doc: Document, old: str, as_written: str
) -> list[str]:
    """new_string's lines re-based line by line: a line also in old_string takes the file's indentation of
    the line it matched; any other line keeps its depth relative to the nearest such line before it (after
    it, for lines at the start), or to the block's first line. When the model's copy nests its lines as the
    file does, this is the same as re-basing the block as a whole."""
    if candidate.old_base is None or candidate.file_base is None:
        return new_lines
    references: list[tuple[str, str] | None] = [None] * len(new_lines)
    matcher = difflib.SequenceMatcher(
        None, [line.strip() for line in old_lines], [line.strip() for line in new_lines], autojunk=False
    )
    for tag, i1, _, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            continue
        for offset in range(j2 - j1):
            file_line = candidate.line_map[i1 + offset] if i1 + offset < len(candidate.line_map) else -1
            if file_line >= 0 and old_lines[i1 + offset].strip():
                references[j1 + offset] = (indent_of(old_lines[i1 + offset]), indent_of(doc.lines[file_line]))
    known = [reference for reference in references if reference is not None]
    current = known[0] if known else (candidate.old_base, candidate.file_base)
    result = []
    for line, reference in zip(new_lines, references, strict=True):
        current = reference or current
        shifted = dataclasses.replace(candidate, old_base=current[0], file_base=current[1])
        result += _rebased([line], shifted, doc, old, as_written)
    return result


def _refuse_kept_placeholder(candidate: Candidate, new_lines: list[str]) -> None:
    kept = [line for line in candidate.placeholder if line in {new_line.strip() for new_line in new_lines}]
    if kept:
        raise ToolError(
            E_EDIT_PLACEHOLDER,
            user_text(
                (
                    "old_string stands for the lines between its first and last line with "
                    "the comment %1, and new_string keeps that comment: the code it stands "
                    "for would be deleted"
                ),
                repr(kept[0]),
            ),
            user_text(
                "Copy the lines you want to keep into old_string and new_string "
                "exactly, or use edit_existing_file with '... existing code ...' "
                "markers."
            ),
        )


def _replacement(candidate: Candidate, doc: Document, old: str, new: str, pass_name: str) -> str:
    if pass_name == "exact":
        return new
    if candidate.unescape_new:
        new = unescape(new)
    new = new.replace("\r\n", "\n").replace("\r", "\n")
    as_written = new  # the indentation style is read from new_string as the model wrote it
    if candidate.whole_lines:
        # The span ends before the last line's break, so a final "\n" on either string is implied, not a line.
        _, lead, trail = core_lines(old.removesuffix("\n"))
        new_lines = new.removesuffix("\n").split("\n")
        while lead and new_lines and not new_lines[0].strip():
            new_lines.pop(0)
            lead -= 1
        while trail and new_lines and not new_lines[-1].strip():
            new_lines.pop()
            trail -= 1
        _refuse_kept_placeholder(candidate, new_lines)
        old_lines = core_lines(old)[0]
        lines = _rebased_by_lines(new_lines, old_lines, candidate, doc, old, as_written)
        if candidate.keep_comments:
            lines = keep_file_comments(doc, candidate, old_lines, new_lines, lines)
        span = doc.text[candidate.start : candidate.end]
        # Whole lines of a file given with CRLF: written back with its line ending, the last line's CR too.
        newline = "\r\n" if "\r\n" in span or span.endswith("\r") else "\n"
        return newline.join(line.removesuffix("\r") for line in lines) + ("\r" if span.endswith("\r") else "")
    if candidate.by_tokens:
        merged = merge_by_tokens(doc.text[candidate.start : candidate.end], old, new)
        if merged is not None:
            return merged
    first_indent: str | None = None  # new_string's first line's indentation, when the file's replaces it
    if candidate.trim_new:
        new = new.strip("\n")
        new = new.rstrip() if old[len(old.rstrip()) :] else new
        at_indentation = candidate.old_base is not None and doc.indent_at(candidate.start) is not None
        if old[: len(old) - len(old.lstrip())] or at_indentation:
            # The first line lands after the file's indentation whatever its own; the lines after it keep
            # their depth relative to it.
            first_line = new.split("\n", 1)[0]
            first_indent = indent_of(first_line)
            new = new.lstrip()
            if candidate.old_base is not None:
                candidate = dataclasses.replace(candidate, old_base=first_indent)
    lines = new.split("\n")
    if len(lines) > 1 and candidate.line_map and first_indent is not None:
        # Lines that correspond to the file's: re-based line by line, the first one landing after the
        # file's indentation (which the match starts behind).
        rebased = _rebased_by_lines(
            [first_indent + lines[0], *lines[1:]], core_lines(old)[0], candidate, doc, old, as_written
        )
        return candidate.newline.join([lines[0], *rebased[1:]])
    # The first line continues where the match starts; the others are re-based.
    lines = lines[:1] + _rebased(lines[1:], candidate, doc, old, as_written) if len(lines) > 1 else lines
    return candidate.newline.join(lines)


def _non_overlapping(candidates: list[Candidate]) -> list[Candidate]:
    chosen: list[Candidate] = []
    for candidate in sorted(candidates, key=lambda c: c.start):
        if not chosen or candidate.start >= chosen[-1].end:
            chosen.append(candidate)
    return chosen


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    seen: dict[tuple[int, int], Candidate] = {}
    for candidate in candidates:
        seen.setdefault((candidate.start, candidate.end), candidate)
    return sorted(seen.values(), key=lambda c: c.start)


def apply_edit(
    text: str,
    old: str,
    new: str,
    *,
    replace_all: bool = False,
    label: str = "old_string",
    filename: str | None = None,
) -> EditOutcome:
    """Replace what ``old`` means in ``text`` with ``new``. Raises ``ToolError`` saying why it cannot.

    ``filename`` (its suffix) tells the comment syntax for the pass that ignores comments."""
    if old == "" and text == "" and new != "":
        # An empty file: there is nothing to find, and the only sensible reading is "this is its content".
        return EditOutcome(new, "empty_file", 1, [(1, max(1, new.count("\n")))], [(1, 1)])
    if old == "":
        raise ToolError(
            E_EDIT_EMPTY_OLD,
            user_text("%1 is empty", label),
            user_text("Put the exact text to replace in old_string; to create a file use create_new_file."),
        )
    if old == new:
        raise ToolError(
            E_EDIT_NO_CHANGE,
            user_text("%1 and its replacement are identical", label),
            user_text("Send a different new_string."),
        )
    doc = Document(text, comment_syntax_for(filename))
    oversized: list[tuple[int, int]] = []
    for pass_name, find in PASSES:
        found, too_big = find(doc, old)
        oversized += too_big
        candidates = _unique(found)
        if not candidates:
            continue
        if len(candidates) > 1 and not replace_all:
            lines = ", ".join(str(doc.line_of(c.start) + 1) for c in candidates[:10])
            more = f" and {len(candidates) - 10} more" if len(candidates) > 10 else ""
            raise ToolError(
                E_EDIT_AMBIGUOUS,
                user_text(
                    "%1 matches %2 places (%3), at lines %4%5",
                    label,
                    len(candidates),
                    PASS_NOTES[pass_name],
                    lines,
                    more,
                ),
                user_text(
                    "Add surrounding lines to old_string so it matches only one place, or "
                    "set replace_all to change all."
                ),
            )
        chosen = _non_overlapping(candidates) if replace_all else candidates
        return _replace(doc, chosen, old, new, pass_name)
    if oversized:
        first, last = oversized[0]
        old_count = len(core_lines(old)[0])
        raise ToolError(
            E_EDIT_DISPROPORTIONATE,
            user_text(
                (
                    "%1 has %2 lines, but the only similar text spans lines %3-%4 (%5 "
                    "lines); refusing to replace that much"
                ),
                label,
                old_count,
                first + 1,
                last + 1,
                last - first + 1,
            ),
            user_text(
                ("Read lines %1-%2 again and copy the exact text to change into old_string."),
                first + 1,
                last + 1,
            ),
        )
    raise ToolError(
        E_EDIT_NO_MATCH, user_text("%1 was not found in the file", label), _closest_hint(doc, old)
    )


def _replace(doc: Document, chosen: list[Candidate], old: str, new: str, pass_name: str) -> EditOutcome:
    spans: list[tuple[int, int, str]] = []
    text = doc.text
    cursor = 0
    breaks_before_cursor = 0  # in the old text
    newlines_written = 0
    new_ranges, old_ranges = [], []
    for candidate in chosen:
        start, end = candidate.start, candidate.end
        replacement = _replacement(candidate, doc, old, new, pass_name)
        if replacement == "" and pass_name != "exact":
            # Deleting what fills whole lines: take the lines and a line break with them, leaving no empty
            # line.
            # (An exact match is taken literally: the model said precisely which characters go.)
            start, end = doc.whole_lines_around(start, end)
        if replacement == "" and pass_name != "exact" and doc.is_whole_lines(start, end):
            if end < len(doc.text):
                end += 1
            elif start > cursor:
                start -= 1
        # Line breaks are counted once over each stretch of the file (a count over a large file is not free).
        head_breaks = text.count("\n", cursor, start)
        newlines_written += head_breaks
        new_ranges.append((newlines_written + 1, newlines_written + 1 + replacement.count("\n")))
        if candidate.start == start >= cursor:
            old_first = breaks_before_cursor + head_breaks
        else:
            old_first = doc.line_of(candidate.start)
        old_last = old_first + text.count("\n", candidate.start, max(candidate.start, candidate.end - 1))
        old_ranges.append((old_first + 1, old_last + 1))
        spans.append((start, end, replacement))
        newlines_written += replacement.count("\n")
        breaks_before_cursor = old_first + text.count("\n", candidate.start, end)
        cursor = end
    return EditOutcome(_rebuild(text, spans), pass_name, len(chosen), new_ranges, old_ranges)


def _rebuild(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end) span replaced by its replacement (spans in order)."""
    if len(spans) == 1:
        start, end, replacement = spans[0]
        replaced = text[start:end]
        if text.find(replaced) == start:
            # The first occurrence: str.replace builds the new text in one allocation, where slicing a large
            # file in two and joining the halves cost five times as much.
            return text.replace(replaced, replacement, 1)
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in spans:
        pieces += [text[cursor:start], replacement]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _closest_hint(doc: Document, old: str) -> str:
    old_lines, _, _ = core_lines(old)
    advice = "Read the file again and copy old_string exactly from it (whitespace included)."
    if not old_lines:
        return advice
    best = process.extractOne(old_lines[0].strip(), doc.stripped, scorer=fuzz.ratio, score_cutoff=60)
    if best is None:
        return advice + " No line of the file resembles the first line of old_string."
    _, _, index = best
    shown = doc.lines[index].strip()
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    return f"The most similar line is line {index + 1}: {shown!r}. " + advice
