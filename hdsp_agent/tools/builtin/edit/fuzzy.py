"""Finding the text an edit means when the model's ``old_string`` is not a character-exact copy of the file.

Models misremember whitespace, indentation and escapes. The passes (in ``match_passes``) run from strict
to loose; the first pass that finds anything decides. A match is accepted only when it is unique (or every
occurrence is wanted, with ``replace_all``) and when its size is in proportion to ``old_string``: a loose
pass must never turn a 3-line ``old_string`` into a 40-line replacement. After a non-exact match the
replacement is re-indented the way the matched lines differ from ``old_string``, so the file keeps its own
indentation.

All text here uses ``\\n`` line endings; callers normalize CRLF before and restore it after.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from ...base import ToolError
from .match_passes import PASSES, Candidate, Document, core_lines, indent_of, unescape

E_EDIT_NO_MATCH = "E_EDIT_NO_MATCH"
E_EDIT_AMBIGUOUS = "E_EDIT_AMBIGUOUS"
E_EDIT_DISPROPORTIONATE = "E_EDIT_DISPROPORTIONATE"
E_EDIT_NO_CHANGE = "E_EDIT_NO_CHANGE"
E_EDIT_EMPTY_OLD = "E_EDIT_EMPTY_OLD"


PASS_NOTES: dict[str, str] = {
    "exact": "exact match",
    "trimmed_boundary": "matched after trimming whitespace around old_string",
    "indentation_flexible": "matched with a different overall indentation; the replacement was re-indented",
    "line_trimmed": "matched line by line ignoring whitespace at line ends; the replacement was re-indented",
    "escape_normalized": 'matched after turning escapes (\\n, \\t, \\") in old_string into characters',
    "whitespace_normalized": "matched ignoring differences in runs of whitespace",
    "block_anchor": "matched by its first and last lines with similar lines between; re-indented",
    "context_aware": "matched by its first and last lines and most lines between; re-indented",
}


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


def reindent(lines: list[str], pairs: tuple[tuple[str, str], ...]) -> list[str]:
    """Move ``lines`` (written in ``old_string``'s indentation) into the file's, using corresponding lines."""
    mapping: dict[str, str] = {}
    for old_indent, file_indent in pairs:
        mapping.setdefault(old_indent, file_indent)
    if all(old == new for old, new in mapping.items()):
        return lines
    keys = sorted(mapping, key=len, reverse=True)
    result = []
    for line in lines:
        if not line.strip():
            result.append(line)
            continue
        indent = indent_of(line)
        body = line[len(indent) :]
        prefix = next((key for key in keys if indent.startswith(key)), None)
        if prefix is not None:
            result.append(mapping[prefix] + indent[len(prefix) :] + body)
            continue
        # Less indented than anything old_string had: shift by the shallowest known level's difference.
        shallow = keys[-1]
        shift = len(mapping[shallow]) - len(shallow)
        result.append(" " * max(0, len(indent) + shift) + body if shift >= 0 else indent[-shift:] + body)
    return result


def _replacement(candidate: Candidate, doc: Document, old: str, new: str) -> str:
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
        return "\n".join(reindent(new_lines, candidate.indent_pairs))
    if candidate.unescape_new:
        return unescape(new)
    if not candidate.trim_new:
        return new
    trimmed = new.strip("\n")
    trimmed = trimmed.lstrip() if old[: len(old) - len(old.lstrip())] else trimmed
    trimmed = trimmed.rstrip() if old[len(old.rstrip()) :] else trimmed
    lines = trimmed.split("\n")
    if len(lines) > 1 and candidate.indent_pairs and doc.indent_at(candidate.start) is not None:
        lines = lines[:1] + reindent(lines[1:], candidate.indent_pairs)
    return "\n".join(lines)


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
    text: str, old: str, new: str, *, replace_all: bool = False, label: str = "old_string"
) -> EditOutcome:
    """Replace what ``old`` means in ``text`` with ``new``. Raises ``ToolError`` saying why it cannot."""
    if old == "":
        raise ToolError(
            E_EDIT_EMPTY_OLD,
            f"{label} is empty",
            "Put the exact text to replace in old_string; to create a file use create_new_file.",
        )
    if old == new:
        raise ToolError(
            E_EDIT_NO_CHANGE, f"{label} and its replacement are identical", "Send a different new_string."
        )
    doc = Document(text)
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
                f"{label} matches {len(candidates)} places ({PASS_NOTES[pass_name]}), at lines {lines}{more}",
                "Add surrounding lines to old_string so it matches only one place, or set replace_all to "
                "change all.",
            )
        chosen = _non_overlapping(candidates) if replace_all else candidates
        return _replace(doc, chosen, old, new, pass_name)
    if oversized:
        first, last = oversized[0]
        old_count = len(core_lines(old)[0])
        raise ToolError(
            E_EDIT_DISPROPORTIONATE,
            f"{label} has {old_count} lines, but the only similar text spans lines {first + 1}-{last + 1} "
            f"({last - first + 1} lines); refusing to replace that much",
            f"Read lines {first + 1}-{last + 1} again and copy the exact text to change into old_string.",
        )
    raise ToolError(E_EDIT_NO_MATCH, f"{label} was not found in the file", _closest_hint(doc, old))


def _replace(doc: Document, chosen: list[Candidate], old: str, new: str, pass_name: str) -> EditOutcome:
    spans: list[tuple[int, int, str]] = []
    text = doc.text
    cursor = 0
    breaks_before_cursor = 0  # in the old text
    newlines_written = 0
    new_ranges, old_ranges = [], []
    for candidate in chosen:
        start, end = candidate.start, candidate.end
        replacement = _replacement(candidate, doc, old, new)
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
    stripped = [line.strip() for line in doc.lines]
    best = process.extractOne(old_lines[0].strip(), stripped, scorer=fuzz.ratio, score_cutoff=60)
    if best is None:
        return advice + " No line of the file resembles the first line of old_string."
    _, _, index = best
    shown = doc.lines[index].strip()
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    return f"The most similar line is line {index + 1}: {shown!r}. " + advice
