"""Which options a command was given, read the way the programs themselves read them.

Most programs the analyser allows (coreutils, grep, diffutils, xargs) parse their arguments with GNU
``getopt_long``, which accepts more spellings than the obvious ones:

- short options cluster, and the one that takes a value may come last: ``sort -uo FILE`` and ``sort -uoFILE``
  are ``sort -u -o FILE``;
- a long option may be cut to any unambiguous prefix: ``sort --outp FILE`` is ``sort --output FILE``,
  ``xargs --arg-f=.env`` is ``xargs --arg-file=.env``.

A check that compares words with ``-o`` or ``--output`` exactly misses all of those, and each miss is a write
or a read that skips the question. So every question "was option X given, and with what value?" goes through
this module, and it answers generously where it cannot know: a cluster is read letter by letter as getopt
does, and ends at the first letter known to take a value (``date -Iseconds`` is ``-I seconds``, no ``-s``),
but a letter not known to take one is read as a flag, so the letters after it still count; any prefix of a
long option counts as that option (an ambiguous prefix is an error for the program, so counting it only asks
more).
The one place that must not be generous is ``positionals``: skipping a word as an option's value hides it from
the path checks, so a word is skipped only when the option is spelled exactly and alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from .words import Word


def names_long_option(text: str, option: str) -> bool:
    """Whether the word ``text`` (``--outp``, ``--outp=x``) gives the long ``option`` (``--output``)."""
    name = text.split("=", 1)[0]
    return option.startswith("--") and name.startswith("--") and len(name) > 2 and option.startswith(name)


def _option_words(args: list[Word]) -> Iterable[tuple[int, Word]]:
    """The options among ``args`` before ``--``, with their index."""
    for index, arg in enumerate(args):
        if arg.text == "--":
            return
        if arg.is_option:
            yield index, arg


def _cluster(text: str, takes_value: frozenset[str]) -> list[tuple[str, str]]:
    """A short-option word as getopt reads it: ``-uoF`` → [(u, ""), (o, "F")] when ``-o`` takes a value.

    Each letter with what follows it in the word, the value of the first letter known to take one (the
    cluster ends there)."""
    letters = text[1:]
    read: list[tuple[str, str]] = []
    for position, letter in enumerate(letters):
        rest = letters[position + 1 :]
        if "-" + letter in takes_value:
            return [*read, (letter, rest)]
        read.append((letter, ""))
    return read


def _is_cluster(text: str) -> bool:
    return text.startswith("-") and not text.startswith("--") and len(text) > 1


def has_option(args: list[Word], option: str, takes_value: frozenset[str] = frozenset()) -> bool:
    """Whether ``option`` is given: ``-o``, ``-o`` inside a cluster (``-uo``), ``--output``, a prefix of it
    (``--outp``), with or without ``=VALUE``. ``takes_value``: the program's short options known to take a
    value (a cluster ends at one)."""
    for _, arg in _option_words(args):
        text = arg.text
        if text == option:
            return True
        if option.startswith("--"):
            if names_long_option(text, option):
                return True
        elif len(option) == 2 and _is_cluster(text):
            if any(letter == option[1] for letter, _ in _cluster(text, takes_value | {option})):
                return True
        elif text.startswith(option + "="):  # find's and other single-dash long options
            return True
    return False


def option_values(
    args: list[Word], options: frozenset[str], takes_value: frozenset[str] = frozenset()
) -> list[Word]:
    """The values given to ``options``: ``-f F``, ``-fF``, ``-xf F``, ``-xfF``, ``--file F``, ``--file=F``,
    ``--fi F`` (``options`` take values; ``takes_value``: the program's other short options that do)."""
    found: list[Word] = []
    for index, arg in _option_words(args):
        text = arg.text
        following = args[index + 1] if index + 1 < len(args) else None
        for option in options:
            if option.startswith("--"):
                if not names_long_option(text, option):
                    continue
                if "=" in text:
                    found.append(value_word(arg, text.split("=", 1)[1]))
                elif following is not None:
                    found.append(following)
            elif len(option) == 2 and _is_cluster(text):
                for letter, rest in _cluster(text, takes_value | options):
                    if letter != option[1]:
                        continue
                    if rest:
                        found.append(value_word(arg, rest))
                    elif following is not None:
                        found.append(following)
            elif text == option and following is not None:
                found.append(following)
    return found


def value_word(word: Word, value: str) -> Word:
    """The part of ``word`` after its option (``-oFILE`` → ``FILE``), with the word's run-time facts."""
    return Word(value, value, word.dynamic, word.glob, word.brace, word.fetches_code)


def short_flags(args: list[Word]) -> set[str]:
    """Letters of short options given before ``--`` (``-rf`` → {r, f})."""
    letters: set[str] = set()
    for _, arg in _option_words(args):
        if not arg.text.startswith("--"):
            letters.update(arg.text[1:])
    return letters


class LongOptions:
    """The long options given before ``--``, asked by their full names: ``"--recursive" in given`` is true
    for ``--recursive``, ``--recur`` and ``--recursive=x`` alike (``getopt_long`` takes prefixes)."""

    def __init__(self, args: list[Word]) -> None:
        options = (arg.text for _, arg in _option_words(args) if arg.text.startswith("--"))
        self.written = {text.split("=", 1)[0] for text in options}

    def __contains__(self, option: object) -> bool:
        return isinstance(option, str) and any(names_long_option(text, option) for text in self.written)

    def __and__(self, options: Iterable[str]) -> set[str]:
        """The ``options`` given (``{"--hidden", "--no-ignore"} & given``)."""
        return {option for option in options if option in self}

    __rand__ = __and__


def long_options(args: list[Word]) -> LongOptions:
    return LongOptions(args)


def positionals(args: list[Word], value_options: frozenset[str] = frozenset()) -> list[Word]:
    """The non-option arguments; ``value_options`` (e.g. ``-n``) take the next word as their value.

    Only an option spelled exactly skips the next word: any other spelling leaves the word among the
    positionals, where the path checks see it (see the module's docstring)."""
    found: list[Word] = []
    index = 0
    options_done = False
    while index < len(args):
        arg = args[index]
        if options_done or not arg.is_option:
            found.append(arg)
        elif arg.text == "--":
            options_done = True
        elif arg.text in value_options:
            index += 1  # skip the option's value
        index += 1
    return found
