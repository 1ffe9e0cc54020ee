"""What one simple command does, from its words alone: the findings for it, and what it runs in turn.

``classify(argv, scope)`` is called by the analyser (``commands.py``) for every simple command it finds, with
the words already unquoted. Wrappers (``xargs``, ``env``, ``nice``, ``find -exec``) hand their inner command
back as ``commands`` so it is analysed as a part of its own; shells hand back their ``-c`` script as
``scripts``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..findings import Finding, allow, ask, caution, deny
from .files import (
    FileVerdict,
    ShellScope,
    classify_creators,
    classify_dd,
    classify_find,
    classify_move_copy,
    classify_permissions,
    classify_rm,
    classify_rmdir,
    classify_tee,
    read_findings,
    tree_has_secrets,
    write_findings,
)
from .programs import (
    classify_git,
    classify_interpreter,
    classify_network,
    classify_package_manager,
    classify_shell,
)
from .tables import (
    DANGEROUS_VARIABLES,
    DISK_COMMANDS,
    ENVIRONMENT_BUILTINS,
    HARMLESS_SET_FLAGS,
    INFO_COMMANDS,
    INTERPRETERS,
    NETWORK_COMMANDS,
    PACKAGE_MANAGERS,
    PATTERN_FIRST,
    POWER_COMMANDS,
    PRIVILEGE_COMMANDS,
    PROCESS_KILLERS,
    READ_COMMANDS,
    SERVICE_MANAGERS,
    SHELLS,
    SYSTEMCTL_POWER,
    WRAPPER_LEADING_ARGS,
    WRAPPERS,
    WRITING_OPTIONS,
)
from .words import Word, command_name, long_options, positionals, short_flags


@dataclass
class Classification:
    findings: list[Finding] = field(default_factory=list)
    # Shell source this command runs (``bash -c``, ``eval``, ``trap``, ``watch``): analysed part by part.
    scripts: list[str] = field(default_factory=list)
    # Commands this command runs (wrappers, ``find -exec``): each analysed as a part of its own.
    commands: list[list[Word]] = field(default_factory=list)
    # A shell or interpreter that runs whatever arrives on stdin (the analyser looks at what feeds it).
    reads_code_from_stdin: bool = False


def classify(argv: list[Word], scope: ShellScope) -> Classification:
    program, args = argv[0], argv[1:]
    name = command_name(program)
    if program.glob or program.brace:
        return Classification([caution(f"the command name {program.text!r} is a pattern bash expands")])
    if name in PRIVILEGE_COMMANDS:
        return Classification([deny(f"runs commands with another user's privileges ({name})")])
    if name.startswith("mkfs") or name in DISK_COMMANDS:
        return Classification([deny(f"formats, partitions or wipes disks ({name})")])
    if name in POWER_COMMANDS or (
        name in ("init", "telinit") and [a.text for a in args][:1] in (["0"], ["6"])
    ):
        return Classification([deny(f"shuts down or restarts the machine ({name})")])
    if name in SERVICE_MANAGERS:
        if any(word.text in SYSTEMCTL_POWER for word in args):
            return Classification([deny(f"shuts down or restarts the machine ({name})")])
        return Classification([ask(f"controls system services ({name})")])
    if name in PROCESS_KILLERS:
        return Classification(_kill_findings(name, args))
    handler = _FILE_COMMANDS.get(name)
    if handler is not None:
        verdict = handler(name, args, scope)
        return Classification(verdict.findings, commands=verdict.nested)
    if name == "git":
        return Classification(classify_git(args, scope).findings)
    if name in READ_COMMANDS:
        return Classification(_read_command(name, args, scope))
    if name in INFO_COMMANDS:
        return Classification(_info_command(name, args, scope))
    if name in WRAPPERS:
        return _wrapper(name, args)
    if name in ENVIRONMENT_BUILTINS:
        return _environment_builtin(name, args)
    if name == "eval":
        return _eval(args)
    if name in ("source", "."):
        return Classification(_source(name, args, scope))
    if name in SHELLS:
        if name == "busybox" and args:
            return classify(args, scope)
        program_verdict = classify_shell(name, args, scope)
    elif name in PACKAGE_MANAGERS:
        program_verdict = classify_package_manager(name, args)
    elif name in NETWORK_COMMANDS:
        program_verdict = classify_network(name, args, scope)
    elif name in INTERPRETERS or name.startswith(("python", "pypy")):
        if name == "watch":
            return _watch(args)
        program_verdict = classify_interpreter(name, args, scope)
    elif "/" in program.text:
        return Classification([ask(f"runs the program {program.text}")])
    else:
        return Classification([ask(f"{name} is not on the list of read-only commands")])
    return Classification(
        program_verdict.findings, program_verdict.scripts, [], program_verdict.reads_code_from_stdin
    )


def _file_command(name: str, args: list[Word], scope: ShellScope) -> FileVerdict:
    if name == "rm" or name == "unlink":
        return classify_rm(args, scope)
    if name == "rmdir":
        return classify_rmdir(args, scope)
    if name in ("chmod", "chown", "chgrp"):
        return classify_permissions(name, args, scope)
    if name in ("mv", "cp", "ln", "install"):
        return classify_move_copy(name, args, scope)
    if name in ("mkdir", "touch", "truncate", "shred"):
        return classify_creators(name, args, scope)
    if name == "dd":
        return classify_dd(args, scope)
    if name == "tee":
        return classify_tee(args, scope)
    return classify_find(args, scope)


_FILE_COMMANDS = {
    name: _file_command
    for name in (
        "rm",
        "unlink",
        "rmdir",
        "chmod",
        "chown",
        "chgrp",
        "mv",
        "cp",
        "ln",
        "install",
        "mkdir",
        "touch",
        "truncate",
        "shred",
        "dd",
        "tee",
        "find",
    )
}


def _read_command(name: str, args: list[Word], scope: ShellScope) -> list[Finding]:
    for option in WRITING_OPTIONS.get(name, frozenset()):
        if any(arg.text == option or arg.text.startswith(option + "=") for arg in args):
            return [ask(f"{name} {option} writes files or runs commands")]
    values = READ_COMMANDS[name] | (
        frozenset({"-e", "--regexp", "-f", "--file"}) if name in PATTERN_FIRST else frozenset()
    )
    paths = positionals(args, values)
    if name in PATTERN_FIRST and not any(arg.text in ("-e", "--regexp", "-f", "--file") for arg in args):
        paths = paths[1:]
    findings = [allow(f"{name} only reads")]
    if name == "uniq" and len(paths) >= 2:
        findings += write_findings(paths[1], scope)
        paths = paths[:1]
    for index, arg in enumerate(args[:-1]):
        if arg.text in ("-f", "--file") and name in PATTERN_FIRST:
            findings += read_findings(args[index + 1], scope)
    for path in paths:
        findings += read_findings(path, scope)
    if _searches_hidden_recursively(name, args):
        for directory in paths or [Word(".", ".")]:
            if not directory.dynamic and tree_has_secrets(directory, scope):
                findings.append(
                    caution(f"searches {directory.text} recursively, including files that may hold secrets")
                )
    return findings


def _searches_hidden_recursively(name: str, args: list[Word]) -> bool:
    if name in ("grep", "egrep", "fgrep"):
        return bool({"r", "R"} & short_flags(args)) or bool(
            {"--recursive", "--dereference-recursive"} & long_options(args)
        )
    if name == "rg":  # rg skips hidden and ignored files unless told otherwise
        return "u" in short_flags(args) or bool(
            {"--hidden", "--no-ignore", "--unrestricted"} & long_options(args)
        )
    return False


def _info_command(name: str, args: list[Word], scope: ShellScope) -> list[Finding]:
    if name in ("cd", "pushd"):
        targets = positionals(args)
        if not targets or targets[0].text in ("~", "-"):
            return [caution(f"{name} leaves the project (to the home or previous directory)")]
        return [allow("changes directory"), *read_findings(targets[0], scope, verb="changes directory to")]
    if name == "hostname" and positionals(args):
        return [ask("changes the machine's host name")]
    if name == "date" and any(arg.text.startswith(("-s", "--set")) for arg in args):
        return [ask("sets the system clock")]
    return [allow(f"{name} only prints or tests")]


def _kill_findings(name: str, args: list[Word]) -> list[Finding]:
    if name == "killall5":
        return [deny("kills every process on the machine (killall5)")]
    if name == "kill":
        rest = args[1:] if args and args[0].text.startswith("-") and args[0].text != "--" else args
        if any(word.text == "-1" for word in rest):
            return [deny("kills every process the user owns (kill -1)")]
    return [ask(f"stops processes ({name})")]


def _wrapper(name: str, args: list[Word]) -> Classification:
    values = WRAPPERS[name]
    findings: list[Finding] = []
    scripts: list[str] = []
    index = 0
    while index < len(args) and (args[index].is_option or (name == "env" and "=" in args[index].text)):
        word = args[index]
        if name == "env" and "=" in word.text and not word.is_option:
            findings += _assignment_findings(word.text)
        elif name == "command" and word.text in ("-v", "-V"):
            return Classification([allow("looks up a command")])
        elif name == "env" and word.text in ("-S", "--split-string") and index + 1 < len(args):
            scripts.append(args[index + 1].text)
            index += 1
        elif word.text in values:
            index += 1
        index += 1
    index += WRAPPER_LEADING_ARGS.get(name, 0)
    inner = list(args[index:])
    if name == "xargs":
        replace = _xargs_replacement(args)
        inner = [Word(w.text, w.raw, True) if replace and replace in w.text else w for w in inner] or [
            Word("echo", "echo")
        ]
        inner.append(
            Word("{input}", "(input)", dynamic=True)
        )  # xargs appends what it reads: paths unknown here
    if not inner:
        if name == "env" and not scripts:
            return Classification([ask("prints the environment, which may hold secrets")])
        return Classification(findings or [allow(f"{name} with nothing to run")], scripts)
    findings.append(allow(f"runs {inner[0].text} (checked separately)"))
    return Classification(findings, scripts, [inner])


def _xargs_replacement(args: list[Word]) -> str | None:
    for index, word in enumerate(args):
        if word.text in ("-I", "--replace") and index + 1 < len(args):
            return args[index + 1].text
        if word.text.startswith("-I") and len(word.text) > 2:
            return word.text[2:]
        if word.text == "-i":
            return "{}"
    return None


def _watch(args: list[Word]) -> Classification:
    index = 0
    while index < len(args) and args[index].is_option:  # watch's own options come before the command
        index += 2 if args[index].text in ("-n", "--interval") else 1
    rest = args[index:]
    if any(word.dynamic for word in rest):
        return Classification([caution("watch runs a command built at run time")])
    return Classification(
        [allow("runs a command repeatedly (checked separately)")], [" ".join(w.text for w in rest)]
    )


def _environment_builtin(name: str, args: list[Word]) -> Classification:
    if name == "set":
        if not args:
            return Classification([ask("prints every shell variable, which may hold secrets")])
        if "--" in [arg.text for arg in args] or all(arg.text in HARMLESS_SET_FLAGS for arg in args):
            return Classification([allow("sets shell options")])
        return Classification([ask("changes shell options")])
    if name == "trap":
        action = positionals(args)[:1]
        if action and action[0].dynamic:
            return Classification([caution("trap runs a command built at run time")])
        return Classification(
            [allow("sets a trap (its command is checked separately)")], [action[0].text] if action else []
        )
    if name in ("export", "declare", "typeset", "readonly", "local", "unset"):
        findings = [f for arg in positionals(args) for f in _assignment_findings(arg.text)]
        return Classification(findings or [allow(f"{name} sets shell variables")])
    return Classification([ask(f"changes shell settings ({name})")])


def _assignment_findings(text: str) -> list[Finding]:
    variable = text.split("=", 1)[0].rstrip("+")
    if variable in DANGEROUS_VARIABLES:
        return [caution(f"changes {variable}, which decides what later commands run or load")]
    return []


def _eval(args: list[Word]) -> Classification:
    if any(arg.fetches_code for arg in args):
        return Classification([deny("evaluates text downloaded or decoded at run time")])
    if any(arg.dynamic for arg in args):
        return Classification([caution("evaluates text built at run time")])
    return Classification(
        [allow("evaluates the given text (checked as a command)")], [" ".join(a.text for a in args)]
    )


def _source(name: str, args: list[Word], scope: ShellScope) -> list[Finding]:
    script = positionals(args)[:1]
    if not script:
        return [caution(f"{name} without a file")]
    if script[0].fetches_code:
        return [deny("runs code downloaded or decoded at run time in this shell")]
    if script[0].dynamic:
        return [caution(f"runs {script[0].raw} in this shell, a script known only at run time")]
    return [
        ask(f"runs the script {script[0].text} in this shell"),
        *read_findings(script[0], scope, verb="runs"),
    ]
