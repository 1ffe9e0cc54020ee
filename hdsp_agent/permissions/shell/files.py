"""Shell commands that touch files: where they read, write and delete, judged against the project root.

Paths are resolved the way ``paths.inspect_path`` resolves a tool's path (``~``, ``..``, symlinks), relative
to the command's working directory. Globs are expanded against the real files (``cat .e*`` reads ``.env``),
brace lists are expanded, and a path only known at run time (``$FILE``, ``$(...)``) is never assumed harmless.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import Finding, allow, ask, caution, deny
from ..paths import critical_path_reason, device_write_problem, inspect_path
from ..protected import protected_write_finding
from .words import Word, expand_braces, long_options, positionals, short_flags

# Enough to catch a secret among the matches, few enough to stay fast on a big tree.
_GLOB_LIMIT = 500
_TREE_SCAN_LIMIT = 5000
_SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"})


@dataclass(frozen=True)
class ShellScope:
    """Where a command runs: the project root and the working directory relative paths start from."""

    root: Path
    cwd: Path


@dataclass
class FileVerdict:
    findings: list[Finding] = field(default_factory=list)
    # Commands this one runs (``find -exec``): analysed as parts of their own.
    nested: list[list[Word]] = field(default_factory=list)


def _candidates(word: Word, scope: ShellScope) -> list[str]:
    """The paths a word names once bash has expanded braces and globs."""
    texts = expand_braces(word.text) if word.brace else [word.text]
    if not word.glob:
        return texts
    expanded: list[str] = []
    for text in texts:
        pattern = text if os.path.isabs(os.path.expanduser(text)) else os.path.join(scope.cwd, text)
        matches = glob.glob(os.path.expanduser(pattern))[:_GLOB_LIMIT]
        expanded.extend(matches or [text])
    return expanded


def read_findings(word: Word, scope: ShellScope, verb: str = "reads") -> list[Finding]:
    """Findings for a path a command reads: outside the project or a secret → ask."""
    if word.dynamic:
        return [caution(f"{verb} {word.raw or word.text}, a path known only at run time")]
    found: list[Finding] = []
    for text in _candidates(word, scope):
        facts = inspect_path(scope.root, text, scope.cwd)
        if facts.problem:
            found.append(caution(f"{verb} {text!r}: {facts.problem}"))
        elif not facts.inside:
            found.append(caution(f"{verb} {text}, outside the project"))
        elif facts.sensitive:
            found.append(caution(f"{verb} {text}, which may hold secrets"))
    return _unique(found)


def write_findings(word: Word, scope: ShellScope, verb: str = "writes") -> list[Finding]:
    """Findings for a path a command writes: devices, outside the project, ``.git/`` internals, secrets."""
    if word.dynamic:
        return [caution(f"{verb} {word.raw or word.text}, a path known only at run time")]
    found: list[Finding] = []
    for text in _candidates(word, scope):
        device = device_write_problem(os.path.normpath(text)) if text.startswith("/dev/") else None
        if text.startswith("/dev/"):
            if device is not None:
                found.append(deny(device[0]) if device[1] else caution(device[0]))
            continue
        facts = inspect_path(scope.root, text, scope.cwd)
        if facts.problem:
            found.append(caution(f"{verb} {text!r}: {facts.problem}"))
        elif facts.resolved is not None and str(facts.resolved).startswith("/dev/"):
            device = device_write_problem(str(facts.resolved))
            if device is not None:
                found.append(deny(device[0]) if device[1] else caution(device[0]))
        elif (guarded := protected_write_finding(facts.resolved, scope.root, text, verb)) is not None:
            found.append(guarded)  # protected paths (protected.py): never, or ask whatever the rules say
        elif not facts.inside:
            found.append(caution(f"{verb} {text}, outside the project"))
        elif facts.git_internal:
            found.append(caution(f"{verb} {text}, inside the repository's .git directory"))
        elif facts.sensitive:
            found.append(caution(f"{verb} {text}, which may hold secrets"))
    return _unique(found)


def delete_findings(
    word: Word, scope: ShellScope, *, recursive: bool, verb: str = "deletes"
) -> list[Finding]:
    """Findings for a path a command deletes (or moves away, or re-permissions)."""
    if word.dynamic:
        return [caution(f"{verb} {word.raw or word.text}, a path known only at run time")]
    found: list[Finding] = []
    for text in expand_braces(word.text) if word.brace else [word.text]:
        target, covers_contents = _glob_base(text) if word.glob else (text, False)
        facts = inspect_path(scope.root, target, scope.cwd)
        if facts.problem or facts.resolved is None:
            found.append(caution(f"{verb} {text!r}: {facts.problem}"))
            continue
        critical = critical_path_reason(facts.resolved, scope.root)
        what = f"everything in {critical}" if covers_contents else critical
        guarded = protected_write_finding(facts.resolved, scope.root, target, verb, delete=True)
        if critical and recursive:
            found.append(deny(f"{verb} {what} recursively"))
        elif guarded is not None:
            found.append(guarded)  # protected paths (protected.py)
        elif critical:
            found.append(caution(f"{verb} {text}, which is {critical}"))
        elif facts.resolved == scope.root.resolve():
            found.append(
                caution(
                    f"{verb} the whole project"
                    if not covers_contents
                    else f"{verb} everything in the project"
                )
            )
        elif not facts.inside:
            found.append(caution(f"{verb} {text}, outside the project"))
        elif facts.git_internal:
            found.append(caution(f"{verb} {text}, inside the repository's .git directory"))
    return _unique(found)


def _glob_base(text: str) -> tuple[str, bool]:
    """For a glob like ``/usr/*`` the directory whose contents it covers (``/usr``) and True."""
    head, tail = os.path.split(text.rstrip("/") or "/")
    if any(char in tail for char in "*?[") and not any(char in head for char in "*?["):
        return (head or ".", True)
    return (text, False)


def tree_has_secrets(word: Word, scope: ShellScope) -> bool:
    """Whether a directory searched recursively holds files that may be secrets (a bounded walk)."""
    facts = inspect_path(scope.root, word.text, scope.cwd)
    if facts.resolved is None or not facts.resolved.is_dir():
        return facts.sensitive
    seen = 0
    for directory, subdirs, files in os.walk(facts.resolved):
        subdirs[:] = [name for name in subdirs if name not in _SKIPPED_DIRS]
        for name in files + subdirs:
            seen += 1
            if inspect_path(scope.root, os.path.join(directory, name)).sensitive:
                return True
        if seen > _TREE_SCAN_LIMIT:
            return False
    return False


# -- commands ------------------------------------------------------------------------------------------------


def classify_rm(args: list[Word], scope: ShellScope) -> FileVerdict:
    flags, longs = short_flags(args), long_options(args)
    recursive = bool({"r", "R"} & flags) or "--recursive" in longs
    verdict = FileVerdict([ask("deletes files")])
    if "--no-preserve-root" in longs:
        verdict.findings.append(deny("disables rm's protection of / (--no-preserve-root)"))
    for target in positionals(args):
        verdict.findings += delete_findings(target, scope, recursive=recursive)
    return verdict


def classify_rmdir(args: list[Word], scope: ShellScope) -> FileVerdict:
    verdict = FileVerdict([ask("deletes directories")])
    for target in positionals(args):
        verdict.findings += delete_findings(target, scope, recursive=False)
    return verdict


def classify_permissions(name: str, args: list[Word], scope: ShellScope) -> FileVerdict:
    """chmod / chown / chgrp: the first positional is the mode or owner (unless --reference gives it)."""
    recursive = "R" in short_flags(args) or "--recursive" in long_options(args)
    targets = positionals(args)
    if not any(arg.text.startswith("--reference") for arg in args):
        targets = targets[1:]
    changes = "permissions" if name == "chmod" else "ownership"
    verdict = FileVerdict([ask(f"changes file {changes}" + (" recursively" if recursive else ""))])
    for target in targets:
        # Re-permissioning one critical directory (``chmod 777 /etc``) is as bad as a recursive change: deny
        # both.
        verdict.findings += delete_findings(target, scope, recursive=True, verb=f"changes the {changes} of")
    return verdict


def classify_move_copy(name: str, args: list[Word], scope: ShellScope) -> FileVerdict:
    values = frozenset({"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "-g"})
    words = positionals(args, values)
    target_option = _option_value(args, ("-t", "--target-directory"))
    sources, destination = (
        (words, target_option) if target_option else (words[:-1], words[-1] if words else None)
    )
    reasons = {"mv": "moves files", "cp": "copies files", "ln": "creates links", "install": "installs files"}
    verdict = FileVerdict([ask(reasons.get(name, "changes files"), edit=True)])
    for source in sources:
        if name == "mv":
            verdict.findings += delete_findings(source, scope, recursive=True, verb="moves away")
        elif name != "ln":
            verdict.findings += read_findings(source, scope, verb="copies")
    if destination is not None:
        verdict.findings += write_findings(destination, scope)
    return verdict


def classify_creators(name: str, args: list[Word], scope: ShellScope) -> FileVerdict:
    """mkdir, touch, truncate, shred: each positional is a path they create or change."""
    values = frozenset(
        {"-m", "--mode", "-s", "--size", "-r", "--reference", "-d", "--date", "-t", "-n", "--iterations"}
    )
    reasons = {
        "mkdir": ask("creates directories", edit=True),
        "touch": ask("creates or touches files", edit=True),
        "truncate": ask("empties or resizes files"),
        "shred": ask("destroys file contents beyond recovery"),
    }
    verdict = FileVerdict([reasons.get(name, ask("changes files"))])
    for target in positionals(args, values):
        verdict.findings += write_findings(target, scope, verb="shreds" if name == "shred" else "writes")
    return verdict


def classify_dd(args: list[Word], scope: ShellScope) -> FileVerdict:
    verdict = FileVerdict([ask("copies raw data with dd")])
    for arg in args:
        key, _, value = arg.text.partition("=")
        if key == "of" and value:
            verdict.findings += write_findings(_value_word(arg, value), scope)
        elif key == "if" and value and not value.startswith("/dev/"):
            verdict.findings += read_findings(_value_word(arg, value), scope)
    return verdict


def classify_tee(args: list[Word], scope: ShellScope) -> FileVerdict:
    verdict = FileVerdict([allow("copies its input to files")])
    for target in positionals(args):
        verdict.findings += write_findings(target, scope)
    return verdict


def classify_find(args: list[Word], scope: ShellScope) -> FileVerdict:
    """find: its start paths are read; -exec runs a command per file; -delete and -fprint change files."""
    index = 0
    starts: list[Word] = []
    while index < len(args) and not _starts_expression(args[index]):
        starts.append(args[index])
        index += 1
    verdict = FileVerdict([allow("lists files")])
    deletes = False
    while index < len(args):
        token = args[index].text
        if token in ("-exec", "-execdir", "-ok", "-okdir"):
            inner: list[Word] = []
            index += 1
            while index < len(args) and args[index].text not in (";", "+"):
                word = args[index]
                # Each file found is substituted for {}: a run-time value, like xargs' input.
                inner.append(Word(word.text, word.raw, True) if "{}" in word.text else word)
                index += 1
            if inner:
                verdict.nested.append(inner)
                verdict.findings.append(
                    allow(f"runs {inner[0].text} for each file found (checked separately)")
                )
            else:
                verdict.findings.append(caution(f"{token} without a command"))
        elif token == "-delete":
            deletes = True
        elif token in ("-fprint", "-fprint0", "-fprintf", "-fls") and index + 1 < len(args):
            verdict.findings += write_findings(args[index + 1], scope)
            verdict.findings.append(ask("writes the list of files found to a file", edit=True))
            index += 1
        index += 1
    for start in starts or [Word(".", ".")]:
        if deletes:
            verdict.findings += delete_findings(start, scope, recursive=True, verb="deletes files under")
        else:
            verdict.findings += [
                f for f in read_findings(start, scope, verb="searches") if "secrets" not in f.reason
            ]
    if deletes:
        verdict.findings.append(ask("deletes the files it finds"))
    return verdict


def _starts_expression(word: Word) -> bool:
    return word.text.startswith("-") or word.text in ("(", "!", ")", ",")


def _option_value(args: list[Word], names: tuple[str, ...]) -> Word | None:
    for index, arg in enumerate(args):
        if arg.text in names and index + 1 < len(args):
            return args[index + 1]
        for name in names:
            if name.startswith("--") and arg.text.startswith(name + "="):
                return _value_word(arg, arg.text[len(name) + 1 :])
    return None


def _value_word(word: Word, value: str) -> Word:
    return Word(value, value, word.dynamic, word.glob, word.brace, word.fetches_code)


def _unique(findings: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(findings))
