"""Code without its comments, line by line, for the matching pass that ignores comments.

The comment syntax comes from the file's name (``#`` in Python, ``//`` and ``/* */`` in JavaScript, ...);
a file of unknown kind gets ``#``, ``//`` and ``/* */``. Markers inside string literals are not comments
(``"http://x"`` keeps its ``//``): quotes are followed within a line, which is enough to compare two texts
the same way — this is a matcher's view of the code, not a parser.
"""

from __future__ import annotations

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


def code_of_lines(lines: list[str], syntax: CommentSyntax) -> list[str]:
    """Each line's code with comments removed and its ends trimmed ("" for a comment-only or blank line)."""
    code_lines: list[str] = []
    closer: str | None = None  # set while inside a block comment that began on an earlier line
    markers = syntax.line + tuple(opener for opener, _ in syntax.block)
    for line in lines:
        if closer is None and not any(marker in line for marker in markers):
            code_lines.append(line.strip())  # most lines: no comment can start here, no need to scan
            continue
        kept: list[str] = []
        position, quote = 0, ""
        while position < len(line):
            if closer is not None:
                found = line.find(closer, position)
                if found < 0:
                    position = len(line)
                    break
                position, closer = found + len(closer), None
                kept.append(" ")  # a block comment separates what is around it
                continue
            char = line[position]
            if quote:
                kept.append(char)
                if char == "\\" and position + 1 < len(line):
                    kept.append(line[position + 1])
                    position += 2
                    continue
                quote = "" if char == quote else quote
                position += 1
                continue
            if char in syntax.quotes:
                quote = char
                kept.append(char)
                position += 1
                continue
            if any(line.startswith(marker, position) for marker in syntax.line):
                break
            opener = next((pair for pair in syntax.block if line.startswith(pair[0], position)), None)
            if opener is not None:
                closer = opener[1]
                position += len(opener[0])
                continue
            kept.append(char)
            position += 1
        code_lines.append("".join(kept).strip())
    return code_lines
