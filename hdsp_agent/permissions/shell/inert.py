"""Commands proven inert: what may run without asking when no OS sandbox is available.

Without a sandbox nothing confines a command, so "the analyser found nothing wrong" is not enough; only a
command whose every effect is known from its text qualifies:

- simple commands only, joined by ``;``, ``&&``, ``||`` or ``|`` (no groups, subshells, functions, loops,
  here-documents, background jobs);
- every program on the short list below, named bare (no path), with no environment prefix and no redirect;
- every word a literal: letters, digits and ``_./,:=+@%^-`` only, or a single-quoted string without ``$``,
  backquote or backslash — no expansion of any kind (variables, substitutions, globs, braces, tilde);
- every option on that program's list: none takes a program, a file to read or write, or a directory to
  change to (``date -f``, ``sort -o``, ``grep -f``, ``ls --hide``… are not there).

The analyser must also allow the command on its own (paths inside the project, no secrets): ``inert`` is an
extra condition, never a reason to allow.
"""

from __future__ import annotations

import re
from typing import Any

# Literal words: nothing bash would expand or treat specially.
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_./,:=+@%^-]+$")
_SINGLE_QUOTED = re.compile(r"^'[^'$`\\]*'$")
_NUMBER = re.compile(r"^[0-9]+$")

# program -> (short option letters allowed, long options allowed, options taking a numeric value)
_INERT: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    "ls": (
        "aAlhtrSR1dFpiUX",
        frozenset({"--all", "--almost-all", "--human-readable", "--recursive"}),
        frozenset(),
    ),
    "cat": ("nAbEsTv", frozenset({"--number", "--show-all"}), frozenset()),
    "head": ("qv", frozenset(), frozenset({"-n", "-c"})),
    "tail": ("qv", frozenset(), frozenset({"-n", "-c"})),
    "wc": ("lwcmL", frozenset({"--lines", "--words", "--bytes", "--chars"}), frozenset()),
    "pwd": ("LP", frozenset(), frozenset()),
    "echo": ("neE", frozenset(), frozenset()),
    "true": ("", frozenset(), frozenset()),
    "false": ("", frozenset(), frozenset()),
    "whoami": ("", frozenset(), frozenset()),
    "uname": ("asnrvmpio", frozenset({"--all"}), frozenset()),
    "nproc": ("", frozenset(), frozenset()),
    "basename": ("", frozenset(), frozenset()),
    "dirname": ("", frozenset(), frozenset()),
    "grep": ("nivclLwxHhEFoqs", frozenset({"--count", "--line-number", "--ignore-case"}), frozenset()),
    "sort": ("nrufbdM", frozenset({"--numeric-sort", "--reverse", "--unique"}), frozenset()),
    "uniq": ("cdiu", frozenset({"--count"}), frozenset()),
    "cut": ("", frozenset(), frozenset({"-f", "-c", "-b", "-d"})),
}
# cut's -d takes one character, not a number.
_ANY_VALUE = frozenset({("cut", "-d")})


def is_inert(command: str) -> bool:
    """Whether ``command`` is made only of inert simple commands (see the module docstring)."""
    import bashlex

    try:
        trees = list(bashlex.parse(command))
    except Exception:  # noqa: BLE001 - whatever bashlex cannot read is not proven anything
        return False
    commands: list[Any] = []
    return (
        all(_collect(tree, commands) for tree in trees)
        and bool(commands)
        and all(_inert_command(node, command) for node in commands)
    )


def _collect(node: Any, commands: list[Any]) -> bool:
    """Gather the simple commands of ``;``/``&&``/``||``/``|`` lists; False for anything else."""
    if node.kind == "command":
        commands.append(node)
        return True
    if node.kind in ("list", "pipeline"):
        for part in node.parts:
            if part.kind == "operator" and part.op not in (";", "&&", "||", "\n"):
                return False  # "&": a background job outlives the call
            if part.kind in ("operator", "pipe"):
                continue
            if not _collect(part, commands):
                return False
        return True
    return False


def _inert_command(node: Any, source: str) -> bool:
    words = []
    for part in node.parts:
        if part.kind != "word" or getattr(part, "parts", None):
            return False  # an assignment, a redirect, or a word with an expansion inside
        raw = source[part.pos[0] : part.pos[1]]
        if not (_PLAIN_WORD.match(raw) or _SINGLE_QUOTED.match(raw)):
            return False
        words.append(raw[1:-1] if raw.startswith("'") else raw)
    if not words or words[0] not in _INERT:
        return False
    return _options_allowed(words[0], words[1:])


def _options_allowed(program: str, args: list[str]) -> bool:
    letters, long_options, value_options = _INERT[program]
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return True  # only operands follow
        if program == "echo" or not arg.startswith("-") or arg == "-":
            index += 1
            continue
        if arg in value_options:
            value = args[index + 1] if index + 1 < len(args) else ""
            if not ((program, arg) in _ANY_VALUE or _NUMBER.match(value)):
                return False
            index += 2
            continue
        if arg.startswith("--"):
            if arg not in long_options:
                return False
        elif not (arg[1:].isdigit() and program in ("head", "tail")) and not all(
            c in letters for c in arg[1:]
        ):
            return False
        index += 1
    return True
