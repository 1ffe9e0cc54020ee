"""Code without its comments, line by line, for the matching pass that ignores comments.

The comment syntax comes from the file's name (``#`` in Python, ``//`` and ``/* */`` in JavaScript, ...);
a file of unknown kind gets ``#``, ``//`` and ``/* */``. Markers inside string literals are not comments
(``"http://x"`` keeps its ``//``): quotes are followed within a line, which is enough to compare two texts
the same way — this is a matcher's view of the code, not a parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class CommentSyntax:
    line: tuple[str, ...]  # markers that comment out the rest of the line
    block: tuple[tuple[str, str], ...]  # (opener, closer) pairs
    quotes: str = "\"'`"


_HASH = CommentSyntax(("#",), ())
_C_LIKE = CommentSyntax(("//",), (("/*", "*/"),))
_CSS = CommentSyntax((), (("/*", "*/"),))
_SQL = CommentSyntax(("--",), (("/*", "*/"),))
_MARKUP = CommentSyntax((), (("<!--", "-->"),))
_PERCENT = CommentSyntax(("%",), ())
UNKNOWN = CommentSyntax(("#", "//"), (("/*", "*/"),))

_BY_SUFFIX: dict[str, CommentSyntax] = {
    **dict.fromkeys(
        ".py .pyi .pyw .sh .bash .zsh .rb .pl .r .yaml .yml .toml .cfg .ini .conf .mk .jl .ps1 .nix .tf "
        ".cmake .dockerfile .gitignore .env .properties".split(),
        _HASH,
    ),
    **dict.fromkeys(
        ".js .jsx .mjs .cjs .ts .tsx .c .h .cc .cpp .cxx .hpp .hh .java .kt .kts .go .rs .swift .cs .scala "
        ".dart .php .groovy .gradle .json5 .jsonc .proto .zig .v .sv".split(),
        _C_LIKE,
    ),
    **dict.fromkeys(".scss .less .styl".split(), _C_LIKE),
    ".css": _CSS,
    **dict.fromkeys(".sql .lua .hs .elm .ada".split(), _SQL),
    **dict.fromkeys(".html .htm .xml .svg .xhtml .md .markdown .vue .svelte".split(), _MARKUP),
    **dict.fromkeys(".tex .sty .m .erl".split(), _PERCENT),
}
_BY_NAME = {"makefile": _HASH, "dockerfile": _HASH, "cmakelists.txt": _HASH}


def comment_syntax_for(filename: str | None) -> CommentSyntax:
    if not filename:
        return UNKNOWN
    path = PurePosixPath(filename.replace("\\", "/"))
    return _BY_NAME.get(path.name.lower()) or _BY_SUFFIX.get(path.suffix.lower(), UNKNOWN)


def _scanner(syntax: CommentSyntax) -> re.Pattern[str]:
    """One regular expression finding, left to right, a string literal (skipped), a line comment marker or
    a block comment opener: the scan runs in C, not a Python loop over characters."""
    # A quoted string up to its closing quote (escapes skipped) or the end of the line.
    strings = [f"{quote}(?:\\\\.|[^{quote}\\\\])*(?:{quote}|$)" for quote in map(re.escape, syntax.quotes)]
    markers = [re.escape(marker) for marker in syntax.line]
    openers = [re.escape(opener) for opener, _ in syntax.block]
    return re.compile(
        "|".join(
            [f"(?P<string>{'|'.join(strings)})"]
            + ([f"(?P<line>{'|'.join(markers)})"] if markers else [])
            + ([f"(?P<block>{'|'.join(openers)})"] if openers else [])
        )
    )


def code_of_lines(lines: list[str], syntax: CommentSyntax) -> list[str]:
    """Each line's code with comments removed and its ends trimmed ("" for a comment-only or blank line)."""
    scanner = _scanner(syntax)
    closers = dict(syntax.block)
    markers = syntax.line + tuple(closers)
    code_lines: list[str] = []
    closer: str | None = None  # set while inside a block comment that began on an earlier line
    for line in lines:
        if closer is None and not any(marker in line for marker in markers):
            code_lines.append(line.strip())  # most lines: no comment can start here, no need to scan
            continue
        kept: list[str] = []
        position = 0
        while position <= len(line):
            if closer is not None:
                found_closer = line.find(closer, position)
                if found_closer < 0:
                    break
                position, closer = found_closer + len(closer), None
                kept.append(" ")  # a block comment separates what is around it
                continue
            found = scanner.search(line, position)
            if found is None:
                kept.append(line[position:])
                break
            if found.lastgroup == "string":
                kept.append(line[position : found.end()])
                position = found.end()
                continue
            kept.append(line[position : found.start()])
            if found.lastgroup == "line":
                break
            closer = closers[found.group()]
            position = found.end()
        code_lines.append("".join(kept).strip())
    return code_lines
