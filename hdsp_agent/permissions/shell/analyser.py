"""Shell command analysis: parse with bashlex, split into parts, judge every part.

A command is parsed (never matched with regexes on its text) and split on ``;``, ``&&``, ``||``, ``|``, ``&``
and newlines. The analyser looks inside ``$(...)``, backticks, ``<(...)``, ``bash -c '...'``, ``eval``,
here-documents fed to a shell, ``xargs``, ``find -exec`` and wrappers (``env``, ``nice``, ``timeout``, ...).
Every simple command becomes a ``CommandPart`` with its findings; the command as a whole is as strict as its
strictest part.

What bashlex cannot parse (``case``, ``$((...))``, ``[[ ]]``, quoted here-document delimiters) is never
allowed: the analysis asks, saying why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..decision import DecisionKind
from ..findings import Finding, allow, ask, caution, deny, strictest, verdict
from ..paths import resolved_root
from .classify import classify
from .files import ShellScope, read_findings, write_findings
from .tables import DANGEROUS_VARIABLES, SHELLS
from .tree import heredoc_body, runs_code_source, self_calls
from .words import Word, command_name, read_word

MAX_COMMAND_CHARS = 20_000
MAX_DEPTH = 6
MAX_PARTS = 400
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
_HEREDOCS = frozenset({"<<", "<<-"})
_SUBSTITUTIONS = frozenset({"commandsubstitution", "processsubstitution"})
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
            command, (CommandPart(command, (), (caution("the command is empty"),)),), False
        )
    if len(command) > MAX_COMMAND_CHARS:
        reason = f"the command is too long to analyse ({len(command):,} characters)"
        return CommandAnalysis(command, (CommandPart(command[:200], (), (caution(reason),)),), False)
    analyser = _Analyser(command, scope, depth=0, functions=frozenset())
    try:
        analyser.run()
    except _Unparsed as error:
        return CommandAnalysis(command, (CommandPart(command, (), (caution(str(error)),)),), False)
    return CommandAnalysis(command, tuple(analyser.parts))


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
    def __init__(self, source: str, scope: ShellScope, depth: int, functions: frozenset[str]) -> None:
        self.source = source
        self.scope = scope
        self.depth = depth
        self.functions = set(functions)
        self.parts: list[CommandPart] = []

    def run(self) -> None:
        for tree in _parse(self.source):
            self.node(tree, ())

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
            for part in node.list:
                if part.kind != "reservedword":
                    self.node(part, upstream)
            self.group_redirects(node)
        elif kind in ("if", "for", "while", "until"):
            for part in node.parts:
                if part.kind in ("word", "assignment"):
                    self.substitutions(part)
                elif part.kind != "reservedword":
                    self.node(part, ())
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
                [caution(f"uses a shell construct ({kind}) the analyser does not handle")],
            )

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
        inner = _Analyser("echo " + rest, self.scope, self.depth + 1, frozenset(self.functions))
        try:
            for tree in _parse(inner.source):
                for word in getattr(tree, "parts", []):
                    inner.substitutions(word)
        except _Unparsed:
            self.add(value, (), [caution("a parameter expansion contains a command that cannot be analysed")])
            return
        self.parts += inner.parts

    def function(self, node: Any) -> None:
        name = node.name.word
        calls, spawns = self_calls(node.body, name, spawned=False)
        if spawns:
            self.add(
                self.text(node),
                (),
                [deny(f"defines a fork bomb: {name} starts copies of itself in pipes or the background")],
            )
        elif calls:
            self.add(self.text(node), (), [caution(f"defines {name}, a function that calls itself")])
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
        for part in assignments + word_nodes:
            self.substitutions(part)
        for redirect in redirects:
            if hasattr(redirect.output, "kind"):
                self.substitutions(redirect.output)
        findings: list[Finding] = []
        for assignment in assignments:
            variable = assignment.word.split("=", 1)[0].rstrip("+")
            if variable in DANGEROUS_VARIABLES:
                findings.append(caution(f"sets {variable}, which decides what the command runs or loads"))
        findings += self.redirect_findings(redirects)
        argv = [self.word(word) for word in word_nodes]
        self.simple(argv, findings, self.text(node), upstream, redirects)

    def simple(
        self,
        argv: list[Word],
        findings: list[Finding],
        text: str,
        upstream: tuple[Any, ...],
        redirects: list[Any],
    ) -> None:
        if not argv:
            self.add(text, (), findings or [allow("only sets shell variables or redirects")])
            return
        program = argv[0]
        name = command_name(program)
        if program.fetches_code:
            findings.append(
                deny(f"runs a command downloaded or decoded at run time ({program.raw or program.text})")
            )
        elif program.dynamic:
            findings.append(
                caution(f"the command name {program.raw or program.text} is known only at run time")
            )
        elif name in self.functions and "/" not in program.text:
            findings.append(allow(f"calls the function {name} defined in the command (its body is checked)"))
        else:
            classification = classify(argv, self.scope)
            findings += classification.findings
            for script in classification.scripts:
                self.script(script, text)
            for inner in classification.commands:
                self.nested(inner, upstream if name == "xargs" else ())
            if classification.reads_code_from_stdin:
                findings += self.stdin_findings(name, redirects, upstream)
        self.add(text, tuple(word.text for word in argv), findings)

    def nested(self, argv: list[Word], upstream: tuple[Any, ...]) -> None:
        text = " ".join(word.raw or word.text for word in argv)
        if self.depth >= MAX_DEPTH:
            self.add(text, (), [caution("commands are nested too deeply to analyse")])
            return
        self.depth += 1
        try:
            self.simple(list(argv), [], text, upstream, [])
        finally:
            self.depth -= 1

    def script(self, source: str, parent: str) -> None:
        if self.depth >= MAX_DEPTH:
            self.add(parent, (), [caution("scripts are nested too deeply to analyse")])
            return
        if not _has_code(source):
            return
        inner = _Analyser(source, self.scope, self.depth + 1, frozenset(self.functions))
        try:
            inner.run()
        except _Unparsed as error:
            self.add(source, (), [caution(f"the script inside {parent.strip()[:60]!r}: {error}")])
            return
        self.parts += inner.parts

    def stdin_findings(self, name: str, redirects: list[Any], upstream: tuple[Any, ...]) -> list[Finding]:
        """A shell or interpreter running what comes in on stdin: judge what feeds it."""
        is_shell = name in SHELLS
        for redirect in redirects:
            if redirect.type in _HEREDOCS and redirect.heredoc is not None:
                if not is_shell:
                    return [ask(f"runs {name} code from a here-document")]
                self.script(heredoc_body(redirect), f"{name} <<")
                return [allow(f"runs the here-document with {name} (checked part by part)")]
            if redirect.type == "<<<" and hasattr(redirect.output, "kind"):
                body = self.word(redirect.output)
                if body.fetches_code:
                    return [deny(f"{name} runs code downloaded or decoded at run time")]
                if body.dynamic or not is_shell:
                    return [caution(f"{name} runs code from a here-string")]
                self.script(body.text, f"{name} <<<")
                return [allow(f"runs the here-string with {name} (checked part by part)")]
            if redirect.type == "<" and hasattr(redirect.output, "kind"):
                script = self.word(redirect.output)
                return [
                    ask(f"runs the script {script.text} with {name}"),
                    *read_findings(script, self.scope, verb="runs"),
                ]
        if any(runs_code_source(stage, self.source) for stage in upstream):
            return [deny(f"pipes downloaded or decoded content into {name}, which runs it")]
        if upstream:
            return [caution(f"runs the commands {name} reads from a pipe")]
        return [ask(f"starts {name} reading commands from its input")]

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
                self.parts.append(
                    CommandPart(
                        "...", (), (caution(f"more than {MAX_PARTS} parts: the rest is not analysed"),)
                    )
                )
            return
        unique = tuple(dict.fromkeys(findings)) or (ask("nothing is known about this command"),)
        self.parts.append(CommandPart(text, argv, unique))


__all__ = ["CommandAnalysis", "CommandPart", "analyze_command"]
