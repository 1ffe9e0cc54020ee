"""One shell word, as bash will see it: quotes removed, and whether its value is only known at run time.

bashlex splits the command into words and finds substitutions; it does not always remove quotes the way bash
does (``'r''m'`` stays ``r''m``, ``$'\\x72m'`` becomes a parameter). So each word's source text is read again
here, on its own, by a small lexer that knows bash's quoting: single and double quotes, backslashes, ANSI-C
``$'...'`` strings, ``$VAR``/``${...}``/``$(...)``/backticks (run-time values) and unquoted globs and braces.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass

# Run-time values that are still known: ``$HOME`` is the home directory (``rm -rf $HOME`` is ``rm -rf ~``).
_KNOWN_PARAMETERS = {"HOME": "~"}
_NAME_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | set("0123456789")
_SPECIAL_PARAMETERS = set("@*#?$!-0123456789")


@dataclass(frozen=True)
class Word:
    """A word of a command: ``text`` is its value after quote removal (run-time parts left as written)."""

    text: str
    raw: str = ""
    # Part of the value comes from a variable, a substitution or arithmetic: bash decides it at run time.
    dynamic: bool = False
    # Unquoted glob characters (``*``, ``?``, ``[``): bash expands the word to matching file names.
    glob: bool = False
    # Unquoted brace expansion (``{a,b}``, ``{1..3}``): bash turns the word into several.
    brace: bool = False
    # A substitution inside runs a downloader or a decoder (set by the analyser, which sees the substitution).
    fetches_code: bool = False

    @property
    def is_option(self) -> bool:
        return self.text.startswith("-") and len(self.text) > 1 and not self.dynamic


def literal(text: str) -> Word:
    """A word known in full (tests, and values built by the analyser itself)."""
    return Word(text, text)


def read_word(raw: str) -> Word:
    """The value of one shell word's source text ``raw``."""
    lexer = _WordLexer(raw)
    lexer.run()
    return Word("".join(lexer.out), raw, lexer.dynamic, lexer.glob, lexer.brace)


class _WordLexer:
    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.pos = 0
        self.out: list[str] = []
        self.dynamic = False
        self.glob = False
        self.brace = False

    def run(self) -> None:
        raw = self.raw
        while self.pos < len(raw):
            char = raw[self.pos]
            if char == "'":
                end = raw.find("'", self.pos + 1)
                end = len(raw) if end < 0 else end
                self.out.append(raw[self.pos + 1 : end])
                self.pos = end + 1
            elif char == '"':
                self._double_quoted()
            elif char == "\\":
                if raw[self.pos + 1 : self.pos + 2] != "\n":  # backslash-newline is a line continuation
                    self.out.append(raw[self.pos + 1 : self.pos + 2])
                self.pos += 2
            elif char == "$":
                self._dollar(quoted=False)
            elif char == "`":
                self._backtick()
            else:
                if char in "*?" or (char == "[" and "]" in raw[self.pos + 1 :]):
                    self.glob = True
                elif (
                    char == "{"
                    and ("," in raw[self.pos :] or ".." in raw[self.pos :])
                    and "}" in raw[self.pos :]
                ):
                    self.brace = True
                self.out.append(char)
                self.pos += 1

    def _double_quoted(self) -> None:
        raw = self.raw
        self.pos += 1
        while self.pos < len(raw) and raw[self.pos] != '"':
            char = raw[self.pos]
            if char == "\\" and self.pos + 1 < len(raw):
                following = raw[self.pos + 1]
                if following in '$`"\\':
                    self.out.append(following)
                elif following != "\n":
                    self.out.append(char + following)
                self.pos += 2
            elif char == "$":
                self._dollar(quoted=True)
            elif char == "`":
                self._backtick()
            else:
                self.out.append(char)
                self.pos += 1
        self.pos += 1

    def _dollar(self, *, quoted: bool) -> None:
        raw = self.raw
        following = raw[self.pos + 1 : self.pos + 2]
        if following == "'" and not quoted:
            self._ansi_c()
        elif following == '"' and not quoted:
            self.pos += 1  # $"..." is a translated string: a plain double-quoted one for us
            self._double_quoted()
        elif following in ("{", "("):
            end = _matching(raw, self.pos + 1)
            name = raw[self.pos + 2 : end]
            self._parameter(name if following == "{" else None, raw[self.pos : end + 1])
            self.pos = end + 1
        elif following and following in _NAME_START:
            end = self.pos + 1
            while end < len(raw) and raw[end] in _NAME_CHARS:
                end += 1
            self._parameter(raw[self.pos + 1 : end], raw[self.pos : end])
            self.pos = end
        elif following and following in _SPECIAL_PARAMETERS:
            self._parameter(None, raw[self.pos : self.pos + 2])
            self.pos += 2
        else:
            self.out.append("$")
            self.pos += 1

    def _parameter(self, name: str | None, written: str) -> None:
        if name in _KNOWN_PARAMETERS and not self.out:
            self.out.append(_KNOWN_PARAMETERS[name])
            return
        self.dynamic = True
        self.out.append(written)

    def _ansi_c(self) -> None:
        raw = self.raw
        end = self.pos + 2
        while end < len(raw) and raw[end] != "'":
            end += 2 if raw[end] == "\\" else 1
        body = raw[self.pos + 2 : min(end, len(raw))]
        try:
            self.out.append(codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape"))
        except (UnicodeDecodeError, ValueError):
            self.dynamic = True  # an escape we cannot read: treat the value as unknown
            self.out.append(body)
        self.pos = end + 1

    def _backtick(self) -> None:
        raw = self.raw
        end = self.pos + 1
        while end < len(raw) and raw[end] != "`":
            end += 2 if raw[end] == "\\" else 1
        self.dynamic = True
        self.out.append(raw[self.pos : end + 1])
        self.pos = end + 1


def _matching(raw: str, opening: int) -> int:
    """Index of the bracket closing the one at ``opening`` (nesting and quotes respected; else the end)."""
    pairs = {"{": "}", "(": ")"}
    stack = [pairs[raw[opening]]]
    index = opening + 1
    while index < len(raw) and stack:
        char = raw[index]
        if char == "\\":
            index += 2
            continue
        if char == "'":
            close = raw.find("'", index + 1)
            index = len(raw) if close < 0 else close + 1
            continue
        if char in pairs:
            stack.append(pairs[char])
        elif char == stack[-1]:
            stack.pop()
        index += 1
    return index - 1 if not stack else len(raw)


def command_name(word: Word) -> str:
    """The program a command word runs: ``/usr/bin/rm`` and ``rm`` are both ``rm``."""
    return os.path.basename(word.text.rstrip("/")) if "/" in word.text else word.text


def expand_braces(text: str, limit: int = 64) -> list[str]:
    """Bash brace expansion for comma lists (``/{usr,etc}`` → ``/usr``, ``/etc``), at most ``limit`` results.

    Sequences and nesting are left as written: the caller treats a word it cannot expand as unknown.
    """
    start = text.find("{")
    end = text.find("}", start + 1)
    if start < 0 or end < 0 or "," not in text[start:end] or "{" in text[start + 1 : end]:
        return [text]
    head, body, tail = text[:start], text[start + 1 : end], text[end + 1 :]
    results: list[str] = []
    for choice in body.split(","):
        for rest in expand_braces(tail, limit):
            results.append(head + choice + rest)
            if len(results) >= limit:
                return results
    return results
