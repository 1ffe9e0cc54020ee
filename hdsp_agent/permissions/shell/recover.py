"""Denials recovered from a command bashlex could not parse.

Such a command is never allowed (it asks); but ``case x in a) rm -rf /;; esac`` or ``[[ 1 ]] && rm -rf ~``
must not become a mere question because the parser gave up. The text is cut at every operator and
reserved word bash knows, each piece split into words like the shell would, and each judged on its own:
any denial found is kept. This can only make a decision stricter, never lift one.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ...user_text import user_text
from ..findings import Finding, deny
from .classify import classify
from .files import ShellScope, process_file_problem, resolve_directory
from .words import Word, read_word

_CUTS = re.compile(
    r"\$\(|\(\(|\)\)|\[\[|\]\]|[;&|\n(){}`]|"
    r"\b(?:then|do|done|else|elif|fi|if|while|until|time|coproc|case|esac|in|select|function)\b|!"
)
_MAX_PIECES = 200


def recovered_denials(command: str, scope: ShellScope) -> list[Finding]:
    found: list[Finding] = []
    problem = process_file_problem(command)
    if problem:
        found.append(deny(problem))
    for piece in _CUTS.split(command)[:_MAX_PIECES]:
        try:
            tokens = shlex.split(piece, comments=True)
        except ValueError:
            tokens = piece.split()
        while tokens and (tokens[0] == "-p" or tokens[0].endswith(")")):
            tokens = tokens[1:]  # ``time -p``, a case pattern ``a)``
        if not tokens:
            continue
        words = [read_word(token) if "$" in token else Word(token, token) for token in tokens]
        if words[0].text in ("cd", "pushd"):
            # Follow the directory like the analyser does: ``case a in a) cd /;; esac; rm -rf *``.
            targets = [word for word in words[1:] if not word.is_option] or [Word("~", "~")]
            directories = resolve_directory(targets[0], scope)
            # None: a directory known only at run time (the scope then stops trusting relative paths).
            candidates: list[Path | None] = [*(directories or [])] or [None]
            for directory in candidates:
                scope = scope.moved_to(directory, certain=False)
            continue
        try:
            classification = classify(words, scope)
            findings = list(classification.findings)
            for inner in classification.commands[:4]:  # wrappers: ``time command rm -rf /``
                findings += classify(inner, scope).findings
        except Exception:  # a recovery attempt on broken text must never break the analysis
            continue
        found += [
            deny(user_text("the command cannot be parsed, and a part of it %1", finding.reason))
            for finding in findings
            if finding.decision == "deny"
        ]
    return list(dict.fromkeys(found))
