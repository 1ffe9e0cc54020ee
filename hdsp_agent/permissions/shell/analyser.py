"""Shell command analysis: parse with bashlex, split into parts, judge every part.

A command is parsed (never matched with regexes on its text) and split on ``;``, ``&&``, ``||``, ``|``, ``&``
and newlines. The analyser looks inside ``$(...)``, backticks, ``<(...)``, ``bash -c '...'``, ``eval``,
here-documents fed to a shell, ``xargs``, ``find -exec`` and wrappers (``env``, ``nice``, ``timeout``, ...).
Every simple command becomes a ``CommandPart`` with its findings; the command as a whole is as strict as its
strictest part.

What bashlex cannot parse (``case``, ``$((...))``, ``[[ ]]``) is never allowed: the analysis asks, saying
why, and is denied when a part recovered from the text is destructive (``case x in a) rm -rf /;; esac``).

Code bash evaluates where bashlex sees plain text is found here: the bodies of unquoted here-documents
(``$(...)``, backticks), array subscripts and arithmetic (``${a[$(cmd)]}``, ``((...))``, ``let``, which
evaluate variables' values as code), ``$IFS`` splitting, brace-expanded command names. ``cd``/``pushd``
move the base every later path is judged from. The working directory is followed as a set of directories
it may be (``ShellScope``), never narrowed.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...user_text import user_text
from ..decision import DecisionKind
from ..findings import Finding, allow, ask, caution, deny, strictest, verdict
from ..paths import resolved_root
from .classify import DISGUISE_CANDIDATES, assignment_findings, classify
from .files import (
    ShellScope,
    process_file_problem,
    read_findings,
    resolve_directory,
    write_findings,
)
from .recover import recovered_denials
from .tables import SECRET_VARIABLE, SHELLS
from .text import (
    blank_time_keywords,
    expansions_in,
    known_value,
    unquote_heredoc_delimiters,
)
from .tree import commands_named, heredoc_body, runs_code_source, self_calls
from .words import Word, command_name, expand_braces, read_word

# Longer commands, or more parts, are not analysed: denied with the reason (a script that long belongs in a
# file the user can read, written with the edit tools).
MAX_COMMAND_CHARS = 20_000
MAX_DEPTH = 6
MAX_PARTS = 400
_SECRET_REFERENCE = re.compile(r"\$\{?([A-Za-z_0-9]*" + SECRET_VARIABLE + r"[A-Za-z_0-9]*)", re.IGNORECASE)
_IFS = re.compile(r"\$\{?IFS(?::[^}]*)?\}?")
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
_HEREDOCS = frozenset({"<<", "<<-"})
_SUBSTITUTIONS = frozenset({"commandsubstitution", "processsubstitution"})
_DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})
_MAX_LOOP_VALUES = 8
# The part of a ``${...}`` expansion before its operator, to reach the word after it (``${x:-$(id)}``).
_PARAMETER_HEAD = re.compile(
    r"^[#!]?(?:[A-Za-z_][A-Za-z_0-9]*|[0-9@*#?$!-])(?:\[[^\]]*\])?(?::?[-=+?]|##?|%%?|//?|\^\^?|,,?)?"
)


class _Unparsed(Exception):
    pass


@dataclass(frozen=True)
class CommandPart:
    """One simple command (or redirect, or unparsed text) and what was found about it."""

    text: str
    # The words as bash will see them; empty for what is not a command (a redirect of a group, unparsed text).
    argv: tuple[str, ...]
    findings: tuple[Finding, ...]

    @property
    def decision(self) -> DecisionKind:
        return verdict(self.findings)

    @property
    def reasons(self) -> list[str]:
        """The reasons behind this part's decision (the findings that made it as strict as it is)."""
        decision = self.decision
        return list(dict.fromkeys(f.reason for f in self.findings if f.decision == decision))


@dataclass(frozen=True)
class CommandAnalysis:
    command: str
    parts: tuple[CommandPart, ...]
    parsed: bool = True

    @property
    def decision(self) -> DecisionKind:
        return strictest((part.decision for part in self.parts), default="ask")

    @property
    def inert(self) -> bool:
        """Allowed, and proven to do nothing but what its text says (``inert.py``): what may run without
        asking when no OS sandbox is available."""
        from .inert import is_inert

        return self.parsed and self.decision == "allow" and is_inert(self.command)

    @property
    def reasons(self) -> list[str]:
        """Human-readable, one line per reason per part, strictest parts first (for the approval dialog)."""
        ordered = sorted(self.parts, key=lambda part: -["allow", "ask", "deny"].index(part.decision))
        return [f"{part.text.strip()}: {reason}" for part in ordered for reason in part.reasons]


def analyze_command(command: str, root: Path, cwd: Path | None = None) -> CommandAnalysis:
    """Analyse ``command`` as bash would run it in ``cwd`` (default: ``root``)."""
    scope = ShellScope(resolved_root(root), (cwd or root).resolve())
    if not command.strip() or not _has_code(command):
        return CommandAnalysis(
            command, (CommandPart(command, (), (caution(user_text("the command is empty")),)),), False
        )
    if len(command) > MAX_COMMAND_CHARS:
        reason = (
            f"the command is too long to analyse ({len(command):,} characters, over {MAX_COMMAND_CHARS:,}): "
            "write a script file and run that"
        )
        return CommandAnalysis(command, (CommandPart(command[:200], (), (deny(reason),)),), False)
    analyser = _Analyser(command, scope, depth=0, functions=frozenset())
    try:
        analyser.run()
    except _Unparsed as error:
        findings = [caution(str(error)), *recovered_denials(command, scope)]
        return CommandAnalysis(command, (CommandPart(command, (), tuple(findings)),), False)
    return CommandAnalysis(command, tuple(analyser.parts))


def _globbed_process_file(word: Word) -> str | None:
    """``/pro?/self/environ``, ``/*/self/environ``: the pattern matches a process's files."""
    if not word.glob or not word.text.startswith("/") or word.dynamic:
        return None
    for match in glob.glob(word.text)[:50]:
        problem = process_file_problem(match)
        if problem:
            return problem
    return None


def _has_code(command: str) -> bool:
    """Whether anything but blank lines and comments is there (bashlex fails on comment-only input)."""
    return any(line.strip() and not line.strip().startswith("#") for line in command.splitlines())


def _parse(source: str) -> list[Any]:
    # Imported on the first command analysed, not when the server extension loads (bashlex's parser tables
    # were a fifth of the extension's import time).
    import bashlex

    try:
        return list(bashlex.parse(source))
    except Exception as error:  # bashlex raises parse errors, NotImplementedError and worse on odd input
        kind = (
            "uses shell syntax the analyser does not support"
            if isinstance(error, NotImplementedError)
            else "could not be parsed"
        )
        raise _Unparsed(
            f"the command {kind} ({type(error).__name__}: {error}), so it cannot be checked"
        ) from None


class _Analyser:
    def __init__(
        self,
        source: str,
        scope: ShellScope,
        depth: int,
        functions: frozenset[str],
        variables: dict[str, str] | None = None,
    ) -> None:
        # bashlex cannot read the ``time`` keyword or quoted here-document delimiters: both are rewritten
        # (same meaning for the analysis) and the quoted delimiters remembered, their bodies being literal.
        source, self.literal_heredocs = unquote_heredoc_delimiters(blank_time_keywords(source))
        self.source = source
        self.scope = scope
        self.depth = depth
        self.functions = set(functions)
        # Values of variables assigned literally in this command (``x=/``), to see through ``$x`` when
        # looking for a destructive command in disguise. Only ever used to deny, never to allow.
        self.variables: dict[str, str] = dict(variables or {})
        # A part wrote through ``.git`` or made a link: later git commands may read a config it wrote.
        self.touched_git = False
        self.parts: list[CommandPart] = []

    def run(self) -> None:
        for tree in _parse(self.source):
            self.node(tree, ())

    def child(self, source: str) -> _Analyser:
        inner = _Analyser(source, self.scope, self.depth + 1, frozenset(self.functions), self.variables)
        inner.touched_git = self.touched_git
        return inner

    # -- the tree --------------------------------------------------------------------------------------------

    def node(self, node: Any, upstream: tuple[Any, ...]) -> None:
        kind = node.kind
        if kind == "list":
            # Inside a group that is a pipeline stage (``curl ... | { bash; }``) every member may read the
            # pipe.
            for part in node.parts:
                if part.kind != "operator":
                    self.node(part, upstream)
        elif kind == "pipeline":
            stages = [part for part in node.parts if part.kind not in ("pipe", "reservedword")]
            for index, stage in enumerate(stages):
                self.node(stage, upstream + tuple(stages[:index]))
        elif kind == "compound":
            if self.text(node).startswith("(("):
                self.add(
                    self.text(node),
                    (),
                    [
                        caution(
                            user_text(
                                "(( )) evaluates arithmetic, whose variables and subscripts can run commands"
                            )
                        )
                    ],
                )
            for part in node.list:
                if part.kind != "reservedword":
                    self.node(part, upstream)
            self.group_redirects(node)
        elif kind in ("if", "for", "while", "until"):
            if kind != "if" and commands_named(node, self.source, _DIRECTORY_CHANGERS):
                # A cd late in a loop body moves where its first parts run on the next pass: go through the
                # loop once to learn where it may go, then judge it from there too (and from anywhere
                # later passes go: unknown).
                probe = _Analyser(
                    self.source, self.scope, self.depth, frozenset(self.functions), self.variables
                )
                probe.literal_heredocs = self.literal_heredocs
                for part in node.parts:
                    if part.kind not in ("reservedword", "word", "assignment"):
                        probe.node(part, ())
                self.scope = probe.scope.moved_to(None, certain=False)
            for part in node.parts:
                if part.kind in ("word", "assignment"):
                    self.substitutions(part)
                elif part.kind != "reservedword":
                    self.node(part, ())
            if kind == "for":
                self.loop_values(node)
        elif kind == "function":
            self.function(node)
        elif kind == "command":
            self.command(node, upstream)
        elif kind in _SUBSTITUTIONS:
            self.node(node.command, ())
        elif kind in ("word", "assignment"):
            self.substitutions(node)
        elif kind not in ("reservedword", "operator", "pipe"):
            self.add(
                self.text(node),
                (),
                [caution(user_text("uses a shell construct (%1) the analyser does not handle", kind))],
            )

    def loop_values(self, node: Any) -> None:
        """``for d in / ~; do rm -rf $d; done``: judge the body once per literal value of the loop variable,
        keeping only the denials (the body was judged already with the variable unknown)."""
        words = [part for part in node.parts if part.kind == "word"]
        body = [part for part in node.parts if part.kind not in ("word", "reservedword", "assignment")]
        if len(words) < 2 or not body or self.depth >= MAX_DEPTH:
            return
        name = words[0].word
        values = [read_word(self.text(word)) for word in words[1:]]
        if any(value.dynamic for value in values) or not any(
            ref in self.source for ref in (f"${name}", f"${{{name}")
        ):
            return
        texts = [
            text for value in values for text in (expand_braces(value.text) if value.brace else [value.text])
        ]
        for text in texts[:_MAX_LOOP_VALUES]:
            probe = _Analyser(
                self.source, self.scope, self.depth + 1, frozenset(self.functions), self.variables
            )
            probe.literal_heredocs = self.literal_heredocs
            probe.variables[name] = text
            for part in body:
                probe.node(part, ())
            for part in probe.parts:
                denials = [f for f in part.findings if f.decision == "deny"]
                if denials:
                    self.add(f"{part.text} (with {name}={text})", part.argv, denials)
                    return

    def substitutions(self, word_node: Any) -> None:
        for part in getattr(word_node, "parts", []):
            if part.kind in _SUBSTITUTIONS:
                self.node(part.command, ())
            elif part.kind == "parameter":
                self.parameter(part.value)

    def parameter(self, value: str) -> None:
        """``${x:-$(cmd)}``: bashlex keeps the word after the operator as text; parse it to reach ``cmd``."""
        if "$(" not in value and "`" not in value and "<(" not in value:
            return
        head = _PARAMETER_HEAD.match(value)
        rest = value[head.end() :] if head else value
        inner = self.child("echo " + rest)
        try:
            for tree in _parse(inner.source):
                for word in getattr(tree, "parts", []):
                    inner.substitutions(word)
        except _Unparsed:
            self.add(
                value,
                (),
                [caution(user_text("a parameter expansion contains a command that cannot be analysed"))],
            )
            return
        self.parts += inner.parts

    def function(self, node: Any) -> None:
        name = node.name.word
        calls, spawns = self_calls(node.body, name, spawned=False)
        if spawns:
            self.add(
                self.text(node),
                (),
                [
                    deny(
                        user_text(
                            ("defines a fork bomb: %1 starts copies of itself in pipes or the background"),
                            name,
                        )
                    )
                ],
            )
        elif calls:
            self.add(
                self.text(node), (), [caution(user_text("defines %1, a function that calls itself", name))]
            )
        self.functions.add(name)
        self.node(node.body, ())

    def group_redirects(self, node: Any) -> None:
        findings = self.redirect_findings(getattr(node, "redirects", []))
        if findings:
            self.add(self.text(node), (), findings)

    # -- simple commands -------------------------------------------------------------------------------------

    def command(self, node: Any, upstream: tuple[Any, ...]) -> None:
        assignments = [part for part in node.parts if part.kind == "assignment"]
        word_nodes = [part for part in node.parts if part.kind == "word"]
        redirects = [part for part in node.parts if part.kind == "redirect"]
        text = self.text(node)
        for part in assignments + word_nodes:
            self.substitutions(part)
        for redirect in redirects:
            if hasattr(redirect.output, "kind"):
                self.substitutions(redirect.output)
        findings: list[Finding] = []
        # What bash evaluates inside words that bashlex keeps as text: subscripts, arithmetic, $IFS.
        for part in assignments + word_nodes + [r.output for r in redirects if hasattr(r.output, "kind")]:
            findings += self.expansions(self.text(part), quoted_context=False)
        if _IFS.search(text):
            findings.append(caution(user_text("splits words with $IFS, which hides what runs")))
            self.script(_IFS.sub(" ", text), text)
        for redirect in redirects:
            if redirect.type in _HEREDOCS and redirect.heredoc is not None:
                delimiter = getattr(redirect.output, "word", "")
                if delimiter not in self.literal_heredocs:
                    findings += self.expansions(heredoc_body(redirect), quoted_context=True)
                problem = process_file_problem(heredoc_body(redirect))
                if problem:
                    findings.append(deny(problem))
        words = [self.word(word) for word in word_nodes]
        for assignment in assignments:
            findings += assignment_findings(assignment.word, exported=bool(word_nodes))
            name, _, value = assignment.word.partition("=")
            problem = process_file_problem(value)
            if problem:
                findings.append(deny(problem))
            if not word_nodes:
                value_source = self.text(assignment)[len(name) + 1 :]
                literal = read_word(value_source)
                if literal.dynamic:
                    known = known_value(value_source, self.variables)  # ``y=$x`` after ``x=/``
                    literal = read_word(known) if known is not None else literal
                if literal.dynamic:
                    self.variables.pop(name, None)
                else:
                    self.variables[name] = literal.text
        findings += self.redirect_findings(redirects)
        self.simple(words, findings, text, upstream, redirects)

    def expansions(self, text: str, *, quoted_context: bool) -> list[Finding]:
        """Findings for what bash evaluates inside ``text`` that bashlex leaves as text: command
        substitutions (analysed as scripts), arithmetic and array subscripts (asked about)."""
        if "$" not in text and "`" not in text:
            return []
        found = expansions_in(text, here_document=quoted_context)
        for script in found.scripts:
            self.script(script, text[:60])
        return [caution(reason) for reason in found.reasons]

    def simple(
        self,
        argv: list[Word],
        findings: list[Finding],
        text: str,
        upstream: tuple[Any, ...],
        redirects: list[Any],
    ) -> None:
        if not argv:
            self.add(text, (), findings or [allow(user_text("only sets shell variables or redirects"))])
            return
        program = argv[0]
        name = command_name(program)
        for word in argv:
            problem = process_file_problem(word.text) or _globbed_process_file(word)
            if problem:
                findings.append(deny(problem))
                break
        for word in argv[1:]:
            secret = _SECRET_REFERENCE.search(word.raw) if word.dynamic else None
            if secret:
                findings.append(
                    caution(user_text("expands $%1, a variable that may hold a secret", secret.group(1)))
                )
        if program.brace and not program.dynamic and self.depth < MAX_DEPTH:
            # ``{rm,-rf,/}`` is ``rm -rf /``: judge the words bash makes of it.
            expanded = [text for text in expand_braces(program.text) if text]  # empty words vanish
            if expanded and expanded != [program.text]:
                findings.append(caution(user_text("the command name is a brace expansion")))
                self.nested([Word(t, t) for t in expanded] + argv[1:], ())
        if program.fetches_code:
            findings.append(
                deny(
                    user_text(
                        "runs a command downloaded or decoded at run time (%1)", program.raw or program.text
                    )
                )
            )
        elif program.dynamic:
            findings.append(
                caution(
                    user_text("the command name %1 is known only at run time", program.raw or program.text)
                )
            )
            findings += self.disguised_command(argv)
        elif name in self.functions and "/" not in program.text:
            findings.append(
                allow(user_text("calls the function %1 defined in the command (its body is checked)", name))
            )
        else:
            classification = classify(argv, self.scope)
            findings += classification.findings
            findings += self.resolved_denials(argv)
            for script in classification.scripts:
                self.script(script, text)
            outer_scope = self.scope
            if classification.directory is not None:
                moved = resolve_directory(classification.directory, self.scope)
                self.scope = self.scope.moved_to(
                    moved[0] if moved and len(moved) == 1 else None, certain=True
                )
            try:
                for inner in classification.commands:
                    self.nested(inner, upstream if name == "xargs" else ())
            finally:
                if classification.directory is not None:  # ``env -C`` moves only its own command
                    self.scope = outer_scope
            if name == "git" and self.touched_git:
                findings.append(
                    caution(
                        user_text("git runs after this command changed files that may be its configuration")
                    )
                )
            if classification.reads_code_from_stdin:
                findings += self.stdin_findings(name, redirects, upstream)
            if name in _DIRECTORY_CHANGERS:
                self.change_directory(name, argv[1:])
            elif name in ("source", "."):
                self.scope = self.scope.moved_to(None, certain=False)  # the script may cd anywhere
        self.add(text, tuple(word.text for word in argv), findings)
        if verdict(findings) != "allow":
            self.note_git_writes(argv, redirects)

    def note_git_writes(self, argv: list[Word], redirects: list[Any]) -> None:
        """Remember a part that may write a repository's configuration (a path through ``.git``, a link,
        ``git init``/``clone``/``config``): a later git command in the same command asks."""
        name = command_name(argv[0]) if argv else ""
        targets = [w.text for w in argv[1:]] + [
            self.text(r.output) for r in redirects if hasattr(r.output, "kind") and r.type in _WRITE_REDIRECTS
        ]
        if name in ("ln", "link") or (
            name == "git"
            and {"init", "clone", "config", "submodule", "worktree"} & {w.text for w in argv[1:3]}
        ):
            self.touched_git = True
        elif any(".git" in target.lower() for target in targets):
            self.touched_git = True

    def change_directory(self, name: str, args: list[Word]) -> None:
        """Follow ``cd``/``pushd``/``popd``: later relative paths may be judged from the new directory too."""
        targets = [word for word in args if not word.is_option]
        if name == "popd" or (targets and targets[0].text == "-"):
            self.scope = self.scope.moved_to(None, certain=False)
            return
        target = targets[0] if targets else Word("~", "~")
        directories = resolve_directory(target, self.scope)
        if directories is None:
            self.scope = self.scope.moved_to(None, certain=False)
            return
        for directory in directories:
            self.scope = self.scope.moved_to(directory, certain=False)

    def disguised_command(self, argv: list[Word]) -> list[Finding]:
        """A command name known only at run time with the arguments of a disaster (``$x -rf /``): deny."""
        resolved = self.resolved_denials(argv)
        if resolved:
            return resolved
        for candidate in DISGUISE_CANDIDATES:
            trial = classify([Word(candidate, candidate), *argv[1:]], self.scope)
            denials = [f for f in trial.findings if f.decision == "deny"]
            if denials:
                return [
                    deny(
                        user_text(
                            "a command known only at run time, with the arguments of %1: %2",
                            candidate,
                            denials[0].reason,
                        )
                    )
                ]
        return []

    def resolved_denials(self, argv: list[Word]) -> list[Finding]:
        """With the variables the command assigned put in (``x=/; rm -rf $x``), is it a disaster?"""
        if not self.variables or not any(word.dynamic for word in argv) or self.depth >= MAX_DEPTH:
            return []
        resolved: list[Word] = []
        for word in argv:
            value = known_value(word.raw, self.variables) if word.dynamic else None
            resolved.append(read_word(value) if value is not None else word)
        if resolved == argv or resolved[0].dynamic:
            return []
        trial = classify(resolved, self.scope)
        return [
            deny(
                user_text(
                    "with its variables filled in (%1): %2", " ".join(w.text for w in resolved)[:80], f.reason
                )
            )
            for f in trial.findings
            if f.decision == "deny"
        ]

    def nested(self, argv: list[Word], upstream: tuple[Any, ...]) -> None:
        text = " ".join(word.raw or word.text for word in argv)
        if self.depth >= MAX_DEPTH:
            self.add(text, (), [caution(user_text("commands are nested too deeply to analyse"))])
            return
        self.depth += 1
        try:
            self.simple(list(argv), [], text, upstream, [])
        finally:
            self.depth -= 1

    def script(self, source: str, parent: str) -> None:
        if self.depth >= MAX_DEPTH:
            self.add(parent, (), [caution(user_text("scripts are nested too deeply to analyse"))])
            return
        if not _has_code(source):
            return
        if len(source) > MAX_COMMAND_CHARS:
            self.add(parent, (), [deny(user_text("a script inside the command is too long to analyse"))])
            return
        inner = self.child(source)
        try:
            inner.run()
        except _Unparsed as error:
            self.add(
                source, (), [caution(user_text("the script inside %1: %2", repr(parent.strip()[:60]), error))]
            )
            return
        self.parts += inner.parts
        self.touched_git = self.touched_git or inner.touched_git
        self.scope = inner.scope if inner.scope.bases() != self.scope.bases() else self.scope

    def stdin_findings(self, name: str, redirects: list[Any], upstream: tuple[Any, ...]) -> list[Finding]:
        """A shell or interpreter running what comes in on stdin: judge what feeds it."""
        is_shell = name in SHELLS or name in ("source", ".")
        for redirect in redirects:
            if redirect.type in _HEREDOCS and redirect.heredoc is not None:
                if not is_shell:
                    return [ask(user_text("runs %1 code from a here-document", name))]
                self.script(heredoc_body(redirect), f"{name} <<")
                return [allow(user_text("runs the here-document with %1 (checked part by part)", name))]
            if redirect.type == "<<<" and hasattr(redirect.output, "kind"):
                body = self.word(redirect.output)
                if body.fetches_code:
                    return [deny(user_text("%1 runs code downloaded or decoded at run time", name))]
                if body.dynamic or not is_shell:
                    return [caution(user_text("%1 runs code from a here-string", name))]
                self.script(body.text, f"{name} <<<")
                return [allow(user_text("runs the here-string with %1 (checked part by part)", name))]
            if redirect.type == "<" and hasattr(redirect.output, "kind"):
                script = self.word(redirect.output)
                return [
                    ask(user_text("runs the script %1 with %2", script.text, name)),
                    *read_findings(script, self.scope, verb=user_text("runs")),
                ]
        if any(runs_code_source(stage, self.source) for stage in upstream):
            return [deny(user_text("pipes downloaded or decoded content into %1, which runs it", name))]
        if upstream:
            piped = self.echoed_text(upstream[-1]) if is_shell else None
            if piped is not None:
                self.script(piped, f"{name} <")
            return [caution(user_text("runs the commands %1 reads from a pipe", name))]
        return [ask(user_text("starts %1 reading commands from its input", name))]

    def echoed_text(self, stage: Any) -> str | None:
        """The text ``echo 'cmd'`` (plain words, no options) writes into a pipe, to judge as a script."""
        if getattr(stage, "kind", "") != "command":
            return None
        words = [self.word(part) for part in stage.parts if part.kind == "word"]
        name = command_name(words[0]) if words else ""
        if name == "cat" and len(words) == 1:  # ``cat <<EOF | sh``: the here-document is the script
            for redirect in (part for part in stage.parts if part.kind == "redirect"):
                if redirect.type in _HEREDOCS and redirect.heredoc is not None:
                    return heredoc_body(redirect)
            return None
        if len(words) < 2 or name not in ("echo", "printf") or any(w.dynamic for w in words):
            return None
        if words[1].text.startswith("-") or (name == "printf" and ("%" in words[1].text or len(words) > 2)):
            return None
        return " ".join(word.text for word in words[1:])

    def redirect_findings(self, redirects: list[Any]) -> list[Finding]:
        findings: list[Finding] = []
        for redirect in redirects:
            if redirect.type in _HEREDOCS or redirect.type == "<<<" or not hasattr(redirect.output, "kind"):
                continue
            target = self.word(redirect.output)
            if target.text == "-" or target.text.isdigit():
                continue  # closing or duplicating a file descriptor
            if redirect.type in _WRITE_REDIRECTS:
                findings += write_findings(target, self.scope)
            elif redirect.type in ("<", "<&"):
                findings += read_findings(target, self.scope)
        return findings

    # -- words and text --------------------------------------------------------------------------------------

    def word(self, node: Any) -> Word:
        value = read_word(self.text(node))
        parts = getattr(node, "parts", [])
        substituted = any(part.kind in _SUBSTITUTIONS for part in parts)
        fetches = substituted and any(
            runs_code_source(part, self.source) for part in parts if part.kind in _SUBSTITUTIONS
        )
        return replace(value, dynamic=value.dynamic or substituted, fetches_code=fetches)

    def text(self, node: Any) -> str:
        start, end = node.pos
        return self.source[start:end]

    def add(self, text: str, argv: tuple[str, ...], findings: list[Finding]) -> None:
        if len(self.parts) >= MAX_PARTS:
            if not self.parts[-1].text.startswith("..."):
                reason = (
                    f"more than {MAX_PARTS} parts: too many to analyse (write a script file and run that)"
                )
                self.parts.append(CommandPart("...", (), (deny(reason),)))
            return
        unique = tuple(dict.fromkeys(findings)) or (ask(user_text("nothing is known about this command")),)
        self.parts.append(CommandPart(text, argv, unique))


__all__ = ["CommandAnalysis", "CommandPart", "analyze_command"]
