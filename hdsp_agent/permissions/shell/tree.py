"""Questions about a bashlex tree the analyser asks: which commands run inside a node, whether one of them
downloads or decodes a payload, whether a function calls itself, what a here-document says."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .options import short_flags
from .tables import DECODERS, DOWNLOADERS
from .words import Word, command_name, read_word

# Escapes in one printf/echo word that spell out bytes (``\x72\x6d`` is ``rm``): obfuscation when piped to a
# shell.
_BYTE_ESCAPES = re.compile(r"\\(x[0-9a-fA-F]|[0-7]{1,3}|u[0-9a-fA-F])")


def _children(node: Any) -> Iterator[Any]:
    for attribute in ("parts", "list"):
        yield from (child for child in getattr(node, attribute, None) or [] if hasattr(child, "kind"))
    for attribute in ("command", "body", "output", "heredoc"):
        child = getattr(node, attribute, None)
        if hasattr(child, "kind"):
            yield child


def _commands_in(node: Any) -> Iterator[Any]:
    if node.kind == "command":
        yield node
    for child in _children(node):
        yield from _commands_in(child)


def runs_code_source(node: Any, source: str) -> bool:
    """Whether a downloader or a decoder runs anywhere in ``node`` (a pipeline stage, a substitution)."""
    for command in _commands_in(node):
        words = [read_word(source[w.pos[0] : w.pos[1]]) for w in command.parts if w.kind == "word"]
        if words and _is_code_source(words):
            return True
    return False


def _is_code_source(argv: list[Word]) -> bool:
    name = command_name(argv[0])
    args = argv[1:]
    if name in DOWNLOADERS:
        return True
    if name in DECODERS:
        options = DECODERS[name]
        if options is None:
            return True
        flags = short_flags(args)
        return any(arg.text in options for arg in args) or any(f"-{flag}" in options for flag in flags)
    if name in ("printf", "echo"):
        return (name == "printf" or "e" in short_flags(args)) and any(
            _BYTE_ESCAPES.search(arg.raw or arg.text) for arg in args
        )
    return False


def self_calls(node: Any, name: str, *, spawned: bool) -> tuple[bool, bool]:
    """(calls itself, calls itself in a pipe or in the background) for a function body."""
    calls = spawns = False
    if node.kind == "command":
        words = [part for part in node.parts if part.kind == "word"]
        if words and words[0].word == name:
            return True, spawned
    if node.kind == "pipeline":
        spawned = True
    children = list(_children(node))
    for index, child in enumerate(children):
        background = (
            node.kind == "list"
            and index + 1 < len(children)
            and getattr(children[index + 1], "op", "") == "&"
        )
        child_calls, child_spawns = self_calls(child, name, spawned=spawned or background)
        calls, spawns = calls or child_calls, spawns or child_spawns
    return calls, spawns


def heredoc_body(redirect: Any) -> str:
    """The here-document's text without its terminator line (bashlex keeps it), tabs stripped for ``<<-``."""
    delimiter = getattr(redirect.output, "word", "")
    lines = redirect.heredoc.value.split("\n")
    if lines and lines[-1].strip() == delimiter:
        lines = lines[:-1]
    if redirect.type == "<<-":
        lines = [line.lstrip("\t") for line in lines]
    return "\n".join(lines)


def commands_named(node: Any, source: str, names: frozenset[str]) -> bool:
    """Whether a command named one of ``names`` runs anywhere in ``node``."""
    for command in _commands_in(node):
        words = [part for part in command.parts if part.kind == "word"]
        if words and command_name(read_word(source[words[0].pos[0] : words[0].pos[1]])) in names:
            return True
    return False
