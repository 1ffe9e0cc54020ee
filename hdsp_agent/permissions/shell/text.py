"""Shell text bashlex leaves unread but bash evaluates: here-document bodies, array subscripts, arithmetic.

bashlex gives a here-document body, a ``${a[...]}`` subscript or a ``$((...))`` as plain text. Bash runs
the command substitutions in them, and evaluates arithmetic (every subscript of an indexed array is
arithmetic) recursively: a variable's *value* is itself evaluated, so ``x='a[$(cmd)]'; echo $((x))`` runs
``cmd`` though no ``$(`` is ever visible unquoted. Command substitutions found here are handed back to be
analysed as scripts; arithmetic and subscripts over anything but a literal number make the command ask.

Also here: two rewrites that let bashlex parse what it otherwise refuses, each keeping the command's meaning
for the analysis (``time`` blanked out; quoted here-document delimiters unquoted and remembered), and the
values of variables the command assigned, to see through ``rm -rf $x``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .words import _matching

# The reserved word ``time`` (with ``-p``) where a command starts: bashlex cannot parse it; blanking it with
# spaces keeps every position, so the parts' texts still point into the command.
_TIME_KEYWORD = re.compile(
    r"(^|[;&|\n(){}!]|\b(?:then|do|else|elif)\b)([ \t]*)(time(?:[ \t]+-p)?)(?=[ \t\n]|$)"
)
# ``<<'EOF'``, ``<<"EOF"``, ``<<\EOF``: a quoted delimiter, whose body bash leaves literal.
_QUOTED_DELIMITER = re.compile(r"(<<-?[ \t]*)(?:(['\"])([A-Za-z_0-9]+)\2|\\([A-Za-z_0-9]+))")
# A subscript that is only a number or ``@``/``*``: nothing to evaluate.
_PLAIN_SUBSCRIPT = re.compile(r"^[#!]?[A-Za-z_][A-Za-z_0-9]*\[(?:[0-9]+|@|\*)\]")
# The name part of ``${...}`` and the operator after it: ``${x:1:2}`` is a substring whose offset and length
# are arithmetic (``${x:-default}`` is not).
_OPERATOR = re.compile(
    r"^[#!]?(?:[A-Za-z_][A-Za-z_0-9]*|[0-9@*#?$!-])(?:\[[^\]]*\])?(:(?![-=+?])|[-=+?#%/^,@]|:[-=+?])?"
)
# ``${!name}`` (not ``${!prefix*}``/``${!prefix@}``/``${!a[@]}``, which list names or keys).
_INDIRECT = re.compile(r"^![A-Za-z_][A-Za-z_0-9]*(?:(?![A-Za-z_0-9*@\[])|\[[^\]@*]*\])")
_NUMERIC_SLICE = re.compile(r"^\s*-?[0-9]+(?::\s*-?[0-9]+)?\s*$")
_SIMPLE_REFERENCE = re.compile(
    r"\$(?:([A-Za-z_][A-Za-z_0-9]*)|\{([A-Za-z_][A-Za-z_0-9]*)(?::(-?[0-9]+)(?::([0-9]+))?)?\}|"
    r"\{!([A-Za-z_][A-Za-z_0-9]*)\})"
)


def blank_time_keywords(source: str) -> str:
    for _ in range(8):  # ``time time ls``: each pass blanks the keyword at the front
        if "time" not in source:
            return source
        blanked = _TIME_KEYWORD.sub(lambda m: m.group(1) + m.group(2) + " " * len(m.group(3)), source)
        if blanked == source:
            return source
        source = blanked
    return source


def unquote_heredoc_delimiters(source: str) -> tuple[str, frozenset[str]]:
    """The source with quoted here-document delimiters unquoted, and the names that were quoted.

    A name used both quoted and unquoted is not counted as quoted (its bodies are then all checked).
    """
    if "<<" not in source:
        return source, frozenset()
    quoted: set[str] = set()

    def unquote(match: re.Match[str]) -> str:
        name = match.group(3) or match.group(4)
        quoted.add(name)
        return match.group(1) + name

    rewritten = _QUOTED_DELIMITER.sub(unquote, source)
    unquoted_uses = {m.group(1) for m in re.finditer(r"<<-?[ \t]*([A-Za-z_0-9]+)", source)}
    return rewritten, frozenset(quoted - unquoted_uses)


@dataclass
class Expansions:
    # Command substitutions inside the text, to analyse as scripts.
    scripts: list[str] = field(default_factory=list)
    # Why the text makes the command ask (arithmetic, a subscript).
    reasons: list[str] = field(default_factory=list)


def expansions_in(text: str, *, here_document: bool, limit: int = 200) -> Expansions:
    """What bash evaluates in ``text``: a shell word's source (single quotes are literal there) or a
    here-document body (``here_document``: quotes are plain characters, only ``$`` and backticks count)."""
    found = Expansions()
    _scan(text, here_document, found, limit, depth=0)
    found.reasons = list(dict.fromkeys(found.reasons))
    return found


_MAX_NESTING = 20


def _scan(text: str, here_document: bool, found: Expansions, limit: int, depth: int) -> None:
    if depth > _MAX_NESTING:
        found.reasons.append("nests expansions too deeply to analyse")
        return
    index = 0
    in_double = False
    while index < len(text):
        if len(found.scripts) >= limit:
            found.reasons.append("has too many command substitutions to analyse")
            return
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "'" and not here_document and not in_double:
            close = text.find("'", index + 1)
            index = len(text) if close < 0 else close + 1
            continue
        if char == '"' and not here_document:
            in_double = not in_double
            index += 1
            continue
        if char == "`":
            close = index + 1
            while close < len(text) and text[close] != "`":
                close += 2 if text[close] == "\\" else 1
            if close >= len(text):
                found.reasons.append("has an unterminated command substitution")
            found.scripts.append(re.sub(r"\\([`$\\])", r"\1", text[index + 1 : close]))
            index = close + 1
            continue
        if char != "$":
            index += 1
            continue
        following = text[index + 1 : index + 3]
        if following.startswith("[") or following == "((":
            found.reasons.append("evaluates arithmetic, whose variables and subscripts can run commands")
            index += 2
            continue
        if following.startswith("("):
            end = _matching(text, index + 1)
            if end >= len(text):
                found.reasons.append("has an unterminated command substitution")
            found.scripts.append(text[index + 2 : end])
            index = end + 1
            continue
        if following.startswith("{"):
            end = _matching(text, index + 1)
            inner = text[index + 2 : end]
            if "[" in inner and not _PLAIN_SUBSCRIPT.match(inner):
                found.reasons.append("uses an array subscript, which bash evaluates as code")
            operator = _OPERATOR.match(inner)
            if operator and operator.group(1) == ":" and not _NUMERIC_SLICE.match(inner[operator.end() :]):
                found.reasons.append("takes a substring at an offset bash evaluates as arithmetic")
            if _INDIRECT.match(inner):
                found.reasons.append("expands a variable named at run time (${!name})")
            if "@P" in inner or "@E" in inner or "@A" in inner:
                found.reasons.append("expands a variable as a prompt or as code (${x@P})")
            if "$" in inner or "`" in inner:
                _scan(inner, True, found, limit, depth + 1)
            index = end + 1
            continue
        index += 1


def known_value(raw: str, variables: dict[str, str]) -> str | None:
    """``raw`` (a word's source) with ``$x``, ``${x}``, ``${x:1:2}`` and ``${!x}`` replaced by the values the
    command gave them, or None when some other expansion remains."""

    def value(match: re.Match[str]) -> str:
        plain, braced, offset, length, indirect = match.groups()
        if indirect is not None:
            name = variables.get(indirect, "")
            if name not in variables:
                raise KeyError(indirect)
            return variables[name]
        name = plain or braced
        if name not in variables:
            raise KeyError(name)
        result = variables[name]
        if offset is not None:
            start = int(offset)
            result = result[start:] if length is None else result[start : start + int(length)]
        return result

    try:
        replaced = _SIMPLE_REFERENCE.sub(value, raw)
    except KeyError:
        return None
    return None if "$" in replaced or "`" in replaced else replaced
