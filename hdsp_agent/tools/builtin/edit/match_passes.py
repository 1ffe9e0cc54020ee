"""The matching passes behind ``fuzzy.apply_edit``, in order from strict to loose, and what each one forgave.

Each pass takes the file (as a ``Document``) and ``old_string`` and returns candidate spans of the file, plus
spans it found but judged out of proportion. Passes only find; ``fuzzy`` decides (the first pass that finds
anything decides, and only on a unique match) and replaces. The looser a pass, the stricter its guard: line
passes need every line to agree, the comment pass needs real code, block anchors need three lines and a
similar middle, tokens only needs a long, unique token sequence.
"""

from __future__ import annotations

from collections.abc import Callable

from .document import Document, PassResult
from .line_passes import block_anchor_fuzzy, comments_ignored, line_whitespace, tabs_spaces
from .span_passes import collapsed_spaces, escapes, exact, line_endings, tokens_only, trimmed

PASSES: tuple[tuple[str, Callable[[Document, str], PassResult]], ...] = (
    ("exact", exact),
    ("trimmed", trimmed),
    ("line_whitespace", line_whitespace),
    ("tabs_spaces", tabs_spaces),
    ("line_endings", line_endings),
    ("escapes", escapes),
    ("collapsed_spaces", collapsed_spaces),
    ("comments_ignored", comments_ignored),
    ("block_anchor_fuzzy", block_anchor_fuzzy),
    ("tokens_only", tokens_only),
)

PASS_NOTES: dict[str, str] = {
    "exact": "exact match",
    "trimmed": "matched after trimming whitespace around old_string",
    "line_whitespace": "matched line by line ignoring indentation and trailing spaces; re-indented",
    "tabs_spaces": "matched line by line with tabs read as spaces; re-indented",
    "line_endings": "matched with CRLF/CR line endings read as LF",
    "escapes": 'matched after turning escapes (\\n, \\t, \\") in old_string into characters',
    "collapsed_spaces": "matched ignoring differences in runs of whitespace",
    "comments_ignored": "matched ignoring comments and blank lines; re-indented",
    "block_anchor_fuzzy": "matched by its first and last lines with similar lines between; re-indented",
    "tokens_only": "matched on code tokens alone, ignoring all whitespace",
    "empty_file": "the file was empty; new_string is its content",
}
