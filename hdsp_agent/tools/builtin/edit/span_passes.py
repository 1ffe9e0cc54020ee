"""Matching passes that find ``old_string`` as a run of characters: exact, trimmed, line endings, escapes,
runs of whitespace collapsed, significant tokens only.

Each returns character spans of the file itself (a normalized view is searched, then mapped back), so the
replacement lands exactly on what was matched.
"""

from __future__ import annotations

import difflib
import re

from .document import TOKEN, Candidate, Document, PassResult, core_lines, max_span_lines
from .indentation import indent_of

# Token-only matching ignores all whitespace, so it needs evidence: at least this many tokens, of which this
# many are words (identifiers, keywords, numbers). `function test(){return true;}` has 9 and 4.
TOKENS_MIN_COUNT = 8
TOKENS_MIN_WORDS = 3


def find_all(text: str, needle: str) -> list[int]:
    """Every start of ``needle`` in ``text``, overlapping ones included (they make a match ambiguous too)."""
    found, position = [], text.find(needle)
    while position != -1:
        found.append(position)
        position = text.find(needle, position + 1)
    return found


def _bases(doc: Document, start: int, old: str, *, lines_kept: bool) -> tuple[str | None, str | None]:
    """The indentation pair the replacement is re-based by: old_string's first line and the file line the
    match starts on, when the match starts at that line's indentation. A match starting mid-line has no
    comparable first line; passes that keep old_string's line structure use its second line instead."""
    old_lines = old.split("\n")
    if doc.indent_at(start) is not None:
        return indent_of(old_lines[0]), doc.line_indent(start)
    if lines_kept and len(old_lines) > 1 and old_lines[1].strip():
        next_line = doc.line_end(start) + 1
        if next_line <= len(doc.text):
            return indent_of(old_lines[1]), doc.line_indent(next_line)
    return None, None


def _from_first_line(old: str) -> str:
    """old_string from its first non-blank line on (that line's indentation included)."""
    lines = old.split("\n")
    first = next((index for index, line in enumerate(lines) if line.strip()), 0)
    return "\n".join(lines[first:])


def exact(doc: Document, old: str) -> PassResult:
    return [Candidate(start, start + len(old)) for start in find_all(doc.text, old)], []


def trimmed(doc: Document, old: str) -> PassResult:
    core = old.strip()
    if not core or core == old:
        return [], []
    from_first_line = _from_first_line(old)
    candidates = []
    for start in find_all(doc.text, core):
        old_base, file_base = _bases(doc, start, from_first_line, lines_kept=True)
        candidates.append(
            Candidate(start, start + len(core), old_base=old_base, file_base=file_base, trim_new=True)
        )
    return candidates, []


def _lf_view(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` with CRLF and lone CR as LF; for each character of the view, where it starts and ends in
    ``text``."""
    view: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    while position < len(text):
        char = text[position]
        width = 2 if text.startswith("\r\n", position) else 1
        view.append("\n" if char == "\r" else char)
        starts.append(position)
        ends.append(position + width)
        position += width
    return "".join(view), starts, ends


def line_endings(doc: Document, old: str) -> PassResult:
    """old_string and the file agree once CRLF and lone CR are read as LF."""
    if "\r" not in doc.text and "\r" not in old:
        return [], []
    view, starts, ends = _lf_view(doc.text)
    old_lf = old.replace("\r\n", "\n").replace("\r", "\n")
    if not old_lf.strip():
        return [], []
    candidates = []
    for found in find_all(view, old_lf):
        start, end = starts[found], ends[found + len(old_lf) - 1]
        span = doc.text[start:end]
        newline = "\r\n" if "\r\n" in span else "\r" if "\r" in span else "\n"
        old_base, file_base = _bases(doc, start, old_lf, lines_kept=True)
        candidates.append(Candidate(start, end, old_base=old_base, file_base=file_base, newline=newline))
    return candidates, []


def escapes(doc: Document, old: str) -> PassResult:
    unescaped = unescape(old)
    if unescaped == old or not unescaped:
        return [], []
    candidates = []
    for start in find_all(doc.text, unescaped):
        old_base, file_base = _bases(doc, start, unescaped, lines_kept=True)
        candidates.append(
            Candidate(
                start, start + len(unescaped), old_base=old_base, file_base=file_base, unescape_new=True
            )
        )
    return candidates, []


def collapsed_spaces(doc: Document, old: str) -> PassResult:
    """old_string's words in order, with any run of whitespace (line breaks included) wherever it has one."""
    words = old.split()
    if not words:
        return [], []
    pattern = re.compile(r"\s+".join(re.escape(word) for word in words))
    old_line_count = len(core_lines(old)[0])
    from_first_line = _from_first_line(old)
    candidates: list[Candidate] = []
    too_big: list[tuple[int, int]] = []
    for found in pattern.finditer(doc.text):
        first, last = doc.line_of(found.start()), doc.line_of(found.end())
        if last - first + 1 > max_span_lines(old_line_count):
            too_big.append((first, last))
            continue
        old_base, file_base = _bases(doc, found.start(), from_first_line, lines_kept=False)
        # Lines squeezed together in old_string: its token changes go into the file's own layout.
        squeezed = last - first + 1 > old_line_count
        # As many lines as old_string's, starting at a line's indentation: the lines correspond.
        same_lines = last - first + 1 == old_line_count and doc.indent_at(found.start()) is not None
        candidates.append(
            Candidate(
                found.start(),
                found.end(),
                old_base=old_base,
                file_base=file_base,
                trim_new=True,
                by_tokens=squeezed,
                line_map=tuple(range(first, last + 1)) if same_lines else (),
            )
        )
    return candidates, too_big


def tokens_only(doc: Document, old: str) -> PassResult:
    """old_string's significant tokens, in order, with whitespace anywhere or nowhere between them (but
    always some between two words: "int x" is not "intx")."""
    old_tokens = TOKEN.findall(old)
    words = [_is_word(token) for token in old_tokens]
    if len(old_tokens) < TOKENS_MIN_COUNT or sum(words) < TOKENS_MIN_WORDS:
        return [], []
    # One regular expression for the token sequence: the file is scanned at C speed, never tokenized. It
    # starts with the first token itself (a lookbehind there would cost re its fast literal search); the
    # word boundary before it is checked here.
    parts = [re.escape(old_tokens[0])]
    for index in range(1, len(old_tokens)):
        parts.append(r"\s+" if words[index - 1] and words[index] else r"\s*")
        parts.append(re.escape(old_tokens[index]))
    pattern = re.compile("".join(parts) + ("(?!\\w)" if words[-1] else ""))
    from_first_line = _from_first_line(old)
    candidates = []
    found = pattern.search(doc.text)
    while found is not None:
        start, end = found.span()
        if words[0] and start and _is_word(doc.text[start - 1]):
            found = pattern.search(doc.text, start + 1)
            continue
        old_base, file_base = _bases(doc, start, from_first_line, lines_kept=False)
        candidates.append(
            Candidate(start, end, old_base=old_base, file_base=file_base, trim_new=True, by_tokens=True)
        )
        found = pattern.search(doc.text, end)
    return candidates, []


def _is_word(token: str) -> bool:
    return token[0].isalnum() or token[0] == "_"


def merge_by_tokens(span: str, old: str, new: str) -> str | None:
    """The file's ``span`` changed the way ``new`` differs from ``old`` token by token, keeping the file's
    own whitespace wherever tokens stay (a model that squeezed a three-line function onto one line in both
    old_string and new_string changed tokens, not the layout). None when ``new`` is laid out over more lines
    than ``old``: then its layout is meant, and it replaces the span as written."""
    if new.strip().count("\n") > old.strip().count("\n"):
        return None
    file_tokens = [found.span() for found in TOKEN.finditer(span)]
    old_tokens = TOKEN.findall(old)
    new_spans = [found.span() for found in TOKEN.finditer(new)]
    new_tokens = [new[start:end] for start, end in new_spans]
    if len(file_tokens) != len(old_tokens):
        return None

    def file_gap(index: int) -> str:  # the file's whitespace before its token ``index``
        return span[file_tokens[index - 1][1] : file_tokens[index][0]] if 0 < index < len(file_tokens) else ""

    def new_gap(index: int) -> str:
        return new[new_spans[index - 1][1] : new_spans[index][0]] if 0 < index < len(new_spans) else ""

    pieces: list[str] = []
    # Inserted tokens follow what is before them (new_string's gap), the file's gap comes after them; the
    # file's gap after deleted tokens goes with them.
    skip_gap_at: int | None = None
    previous_tag = ""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, old_tokens, new_tokens, autojunk=False
    ).get_opcodes():
        if pieces:
            if tag == "insert" or (previous_tag == "insert" and i1 == 0):
                pieces.append(new_gap(j1))
            elif skip_gap_at != i1:
                pieces.append(file_gap(i1))
        if tag == "equal":
            pieces.append(span[file_tokens[i1][0] : file_tokens[i2 - 1][1]])
        elif j2 > j1:
            pieces.append(new[new_spans[j1][0] : new_spans[j2 - 1][1]])
        skip_gap_at = i2 if tag == "delete" else None
        previous_tag = tag
    return "".join(pieces)


_ESCAPE = re.compile(r"\\([ntr'\"`\\$])")
_ESCAPED_CHARS = {"n": "\n", "t": "\t", "r": "\r"}


def unescape(text: str) -> str:
    """``\\n``, ``\\t``, ``\\"`` ... written as two characters (a model escaping twice) turned into one."""
    return _ESCAPE.sub(lambda found: _ESCAPED_CHARS.get(found.group(1), found.group(1)), text)
