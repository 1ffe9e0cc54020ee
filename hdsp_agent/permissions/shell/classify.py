"""What one simple command does, from its words alone: the findings for it, and what it runs in turn.

``classify(argv, scope)`` is called by the analyser (``analyser.py``) for every simple command it finds, with
the words already unquoted. Wrappers (``xargs``, ``env``, ``nice``, ``find -exec``) hand their inner command
back as ``commands`` so it is analysed as a part of its own; shells hand back their ``-c`` script as
``scripts``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...user_text import UserText, user_text
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
from .options import (
    has_option,
    long_options,
    names_long_option,
    option_values,
    positionals,
    short_flags,
    value_word,
)
from .programs import (
    classify_git,
    classify_interpreter,
    classify_network,
    classify_package_manager,
    classify_shell,
)
from .tables import (
    ASKING_WRAPPERS,
    DANGEROUS_VARIABLES,
    DISK_COMMANDS,
    ENVIRONMENT_BUILTINS,
    FILE_LIST_OPTIONS,
    FILE_READ_OPTIONS,
    FILE_WRITE_OPTIONS,
    HARMLESS_SET_FLAGS,
    HARMLESS_VARIABLE_PREFIXES,
    HARMLESS_VARIABLES,
    INFO_COMMANDS,
    INTERPRETERS,
    LOADER_VARIABLE_PARTS,
    LOADER_VARIABLE_PREFIXES,
    NETWORK_COMMANDS,
    PACKAGE_MANAGERS,
    PATTERN_FIRST,
    POWER_COMMANDS,
    PRIVILEGE_COMMANDS,
    PROCESS_KILLERS,
    READ_COMMANDS,
    SERVICE_MANAGERS,
    SHELLS,
    SYSTEM_COMMANDS,
    SYSTEMCTL_POWER,
    VALUE_OPTIONS,
    WRAPPER_LEADING_ARGS,
    WRAPPERS,
    WRITING_OPTIONS,
)
from .words import Word, command_name

# ``rm``-like commands tried in place of a command name only known at run time (``$x -rf /``): if the
# arguments would be a disaster for one of them, the disguise is denied.
DISGUISE_CANDIDATES = ("rm", "chmod", "chown")


@dataclass
class Classification:
    findings: list[Finding] = field(default_factory=list)
    # Shell source this command runs (``bash -c``, ``eval``, ``trap``, ``watch``): analysed part by part.
    scripts: list[str] = field(default_factory=list)
    # Commands this command runs (wrappers, ``find -exec``): each analysed as a part of its own.
    commands: list[list[Word]] = field(default_factory=list)
    # A shell or interpreter that runs whatever arrives on stdin (the analyser looks at what feeds it).
    reads_code_from_stdin: bool = False
    # The directory ``commands`` run in when the wrapper changes it (``env -C dir``); None: unchanged.
    directory: Word | None = None


def classify(argv: list[Word], scope: ShellScope) -> Classification:
    program, args = argv[0], argv[1:]
    name = command_name(program)
    if program.glob or program.brace:
        return Classification(
            [caution(user_text("the command name %1 is a pattern bash expands", repr(program.text)))]
        )
    if name in PRIVILEGE_COMMANDS:
        return Classification([deny(user_text("runs commands with another user's privileges (%1)", name))])
    if name.startswith("mkfs") or name in DISK_COMMANDS:
        return Classification([deny(user_text("formats, partitions or wipes disks (%1)", name))])
    if name in POWER_COMMANDS or (
        name in ("init", "telinit") and [a.text for a in args][:1] in (["0"], ["6"])
    ):
        return Classification([deny(user_text("shuts down or restarts the machine (%1)", name))])
    if name in SERVICE_MANAGERS:
        if any(word.text in SYSTEMCTL_POWER for word in args):
            return Classification([deny(user_text("shuts down or restarts the machine (%1)", name))])
        return Classification([deny(user_text("controls system services (%1)", name))])
    if name in SYSTEM_COMMANDS:
        return Classification([deny(UserText(SYSTEM_COMMANDS[name], [name]))])
    if name in PROCESS_KILLERS:
        return Classification(_kill_findings(name, args))
    handler = _FILE_COMMANDS.get(name)
    if handler is not None:
        verdict = handler(name, args, scope)
        return Classification(verdict.findings, commands=verdict.nested)
    if name == "git":
        return Classification(classify_git(args, scope).findings)
    if name == "ps" and any("e" in arg.text for arg in args if not arg.text.startswith("-")):
        return Classification(
            [deny(user_text("prints processes' environments (ps e), where the server's keys are"))]
        )
    if name == "jq" and any("env" in word.text or "$ENV" in word.text for word in args):
        return Classification([ask(user_text("jq reads the environment, which may hold secrets"))])
    if name in READ_COMMANDS:
        return Classification(_read_command(name, args, scope) + _chdir_findings(args, scope))
    if name in INFO_COMMANDS:
        return Classification(_info_command(name, args, scope))
    if name in WRAPPERS:
        return _wrapper(name, args, scope)
    if name in ENVIRONMENT_BUILTINS:
        return _environment_builtin(name, args)
    if name == "flock":
        return _wrapper(name, args, scope)
    if name in ASKING_WRAPPERS:
        # They ask whatever they run (another root, namespaces, tracing), and what they run is judged too.
        wrapped = _wrapper(name, args, scope)
        reason = ask(user_text("runs a command under %1", name))
        return Classification(
            [reason, *(f for f in wrapped.findings if f.decision != "allow")],
            wrapped.scripts,
            wrapped.commands,
        )
    if name == "eval":
        return _eval(args)
    if name in ("source", "."):
        script = positionals(args)[:1]
        if script and script[0].text in _STDIN_FILES:
            # ``source /dev/stdin <<EOF``: the shell runs what feeds it; the analyser judges that.
            return Classification(reads_code_from_stdin=True)
        return Classification(_source(name, args, scope))
    if name in SHELLS:
        if name == "busybox" and args:
            return classify(args, scope)
        program_verdict = classify_shell(name, args, scope)
    elif name in PACKAGE_MANAGERS:
        program_verdict = classify_package_manager(name, args)
        program_verdict.findings += _chdir_findings(args, scope)
    elif name in NETWORK_COMMANDS:
        program_verdict = classify_network(name, args, scope)
    elif name in INTERPRETERS or name.startswith(("python", "pypy")):
        if name == "watch":
            return _watch(args)
        program_verdict = classify_interpreter(name, args, scope)
    elif "/" in program.text:
        return Classification(
            [ask(user_text("runs the program %1", program.text)), *_chdir_findings(args, scope)]
        )
    else:
        return Classification(
            [
                ask(user_text("%1 is not on the list of read-only commands", name)),
                *_chdir_findings(args, scope),
            ]
        )
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


# Long options whose value is text, not a file (``--output-delimiter=/``, ``--format=%s/%s``).
_NOT_PATH_OPTIONS = (
    "delim",
    "separator",
    "sep",
    "format",
    "color",
    "colour",
    "style",
    "regex",
    "pattern",
    "label",
)
_WRITE_FILE_OPTIONS = frozenset(
    {"--output", "--output-file", "--outfile", "--out", "--log-file", "--logfile", "--save", "--dump"}
)


def _long_option_paths(args: list[Word], scope: ShellScope) -> list[Finding]:
    """``--any-option=PATH``: a value that looks like a path is read-checked (``--files0-from=~/.ssh/x``)."""
    findings: list[Finding] = []
    for arg in args:
        if arg.text == "--":
            break
        if arg.text.startswith("--") and "=" in arg.text:
            option, value = arg.text.split("=", 1)
            if any(part in option for part in _NOT_PATH_OPTIONS):
                continue
            if value.startswith(("/", "~", ".")) or "/" in value or arg.dynamic:
                word = value_word(arg, value)
                if any(names_long_option(option, written) for written in _WRITE_FILE_OPTIONS):
                    findings += write_findings(word, scope)
                    findings.append(ask(user_text("%1 writes a file", option), edit=True))
                else:
                    findings += read_findings(word, scope)
    return findings


def _chdir_findings(args: list[Word], scope: ShellScope) -> list[Finding]:
    """``--chdir=DIR``/``--directory=DIR``: the program works elsewhere; where must be fine to read."""
    directories = option_values(args, frozenset({"--chdir", "--directory"}))
    return [
        f for directory in directories for f in read_findings(directory, scope, verb=user_text("works in"))
    ]


def _value_options(name: str) -> frozenset[str]:
    """The options of ``name`` known to take a value (a short-option cluster ends at one of them)."""
    return (
        READ_COMMANDS.get(name, frozenset())
        | (frozenset({"-e", "--regexp", "-f", "--file"}) if name in PATTERN_FIRST else frozenset())
        | FILE_READ_OPTIONS.get(name, frozenset())
        | FILE_WRITE_OPTIONS.get(name, frozenset())
        | VALUE_OPTIONS.get(name, frozenset())
    )


def _read_command(name: str, args: list[Word], scope: ShellScope) -> list[Finding]:
    takes_value = _value_options(name)
    option_findings: list[Finding] = []
    for value in option_values(args, FILE_READ_OPTIONS.get(name, frozenset()), takes_value):
        option_findings += read_findings(value, scope)
    for value in option_values(args, FILE_WRITE_OPTIONS.get(name, frozenset()), takes_value):
        option_findings += write_findings(value, scope)
    for option in sorted(FILE_LIST_OPTIONS.get(name, frozenset())):
        if has_option(args, option, takes_value):
            # The files read are named inside another file (or stdin): the check cannot see which.
            option_findings.append(
                caution(
                    user_text("%1 %2 reads files named in another file, known only at run time", name, option)
                )
            )
    option_findings += _long_option_paths(args, scope)
    for option in sorted(WRITING_OPTIONS.get(name, frozenset())):
        if has_option(args, option, takes_value):
            return [ask(user_text("%1 %2 writes files or runs commands", name, option)), *option_findings]
    paths = positionals(args, READ_COMMANDS[name] | takes_value)
    # The first positional is the pattern unless ``-e``/``-f`` gave it, in any spelling (``grep -ef .env x``
    # is the pattern ``f`` over ``.env`` and ``x``).
    if name in PATTERN_FIRST and not any(
        has_option(args, option, takes_value) for option in ("-e", "--regexp", "-f", "--file")
    ):
        paths = paths[1:]
    findings = [allow(user_text("%1 only reads", name)), *option_findings]
    if name == "uniq" and len(paths) >= 2:
        findings += write_findings(paths[1], scope)
        paths = paths[:1]
    if name in PATTERN_FIRST:
        for value in option_values(args, frozenset({"-f", "--file"}), takes_value):
            findings += read_findings(value, scope)
    for path in paths:
        findings += read_findings(path, scope)
    if _searches_hidden_recursively(name, args):
        for directory in paths or [Word(".", ".")]:
            if not directory.dynamic and tree_has_secrets(directory, scope):
                findings.append(
                    caution(
                        user_text(
                            "searches %1 recursively, including files that may hold secrets", directory.text
                        )
                    )
                )
    return findings


def _searches_hidden_recursively(name: str, args: list[Word]) -> bool:
    if name in ("grep", "egrep", "fgrep"):
        directories = [word.text for word in option_values(args, frozenset({"-d", "--directories"}))]
        return (
            bool({"r", "R"} & short_flags(args))
            or bool({"--recursive", "--dereference-recursive"} & long_options(args))
            or any(value.startswith("recurse") for value in directories)
        )
    if name == "diff":
        return "r" in short_flags(args) or "--recursive" in long_options(args)
    if name == "rg":  # rg skips hidden and ignored files unless told otherwise (``-.`` is ``--hidden``)
        return bool({"u", "."} & short_flags(args)) or bool(
            {"--hidden", "--no-ignore", "--unrestricted"} & long_options(args)
        )
    return False


def _info_command(name: str, args: list[Word], scope: ShellScope) -> list[Finding]:
    if name == "pushd" and not [word for word in args if not word.text.startswith(("+", "-"))]:
        return [caution(user_text("pushd without a directory goes back to one known only at run time"))]
    if name in ("cd", "pushd"):
        targets = positionals(args)
        if not targets or targets[0].text in ("~", "-"):
            return [caution(user_text("%1 leaves the project (to the home or previous directory)", name))]
        return [
            allow(user_text("changes directory")),
            *read_findings(targets[0], scope, verb=user_text("changes directory to")),
        ]
    if name == "hostname" and positionals(args):
        return [ask(user_text("changes the machine's host name"))]
    if name == "date" and (has_option(args, "-s", _value_options(name)) or "--set" in long_options(args)):
        return [ask(user_text("sets the system clock"))]
    if name in ("test", "[") and any(arg.text in ("-v", "-R") for arg in args):
        return [
            caution(
                user_text(("%1 -v evaluates a variable name, whose array subscript can run commands"), name)
            )
        ]
    if name == "printf" and has_option(args[:1], "-v"):
        target = option_values(args[:2], frozenset({"-v"}))
        if not target or not _is_plain_name(target[0]) or variable_loads_code(target[0].text):
            return [
                caution(user_text("printf -v assigns a variable that can run commands or change later ones"))
            ]
    findings = [allow(user_text("%1 only prints or tests", name))]
    if name in FILE_READ_OPTIONS:
        for value in option_values(args, FILE_READ_OPTIONS[name], _value_options(name)):
            findings += read_findings(value, scope)
    return findings


def _is_plain_name(word: Word) -> bool:
    return not word.dynamic and word.text.isidentifier()


def _kill_findings(name: str, args: list[Word]) -> list[Finding]:
    if name == "killall5":
        return [deny(user_text("kills every process on the machine (killall5)"))]
    if name == "kill":
        rest = args[1:] if args and args[0].text.startswith("-") and args[0].text != "--" else args
        if args and args[0].text in ("-s", "-n") and len(args) > 1:
            rest = args[2:]
        texts = [word.text for word in rest]
        if "-1" in texts:
            return [deny(user_text("kills every process the user owns (kill -1)"))]
        if "1" in texts or "0" in texts or "-0" in texts:
            return [deny(user_text("kills init or the whole process group (kill 1 / kill 0)"))]
        if any("PPID" in (word.raw or word.text) for word in rest):
            return [deny(user_text("kills the process that started the command (the server)"))]
    return [ask(user_text("stops processes (%1)", name))]


def _wrapper(name: str, args: list[Word], scope: ShellScope) -> Classification:
    values = WRAPPERS.get(name) or ASKING_WRAPPERS.get(name) or frozenset({"-w", "--timeout", "-E"})
    findings: list[Finding] = []
    scripts: list[str] = []
    directory: Word | None = None
    for value in option_values(args, FILE_READ_OPTIONS.get(name, frozenset())):
        findings += read_findings(value, scope)
    for value in option_values(args, FILE_WRITE_OPTIONS.get(name, frozenset())):
        findings += write_findings(value, scope)
    index = 0
    while index < len(args) and (args[index].is_option or (name == "env" and "=" in args[index].text)):
        word = args[index]
        following = args[index + 1] if index + 1 < len(args) else None
        if name == "env" and "=" in word.text and not word.is_option:
            findings += assignment_findings(word.text, exported=True)
        elif name == "command" and word.text in ("-v", "-V"):
            return Classification([allow(user_text("looks up a command"))])
        elif name == "env" and word.text in ("-S", "--split-string") and following is not None:
            scripts.append(following.text)
            index += 1
        elif name == "env" and word.text.startswith(("-S", "--split-string=")):
            scripts.append(word.text.split("=", 1)[1] if word.text.startswith("--") else word.text[2:])
        elif name == "env" and word.text in ("-C", "--chdir") and following is not None:
            directory = following
            index += 1
        elif name == "env" and word.text.startswith(("-C", "--chdir=")):
            text = word.text.split("=", 1)[1] if word.text.startswith("--") else word.text[2:]
            directory = Word(text, text, word.dynamic, word.glob, word.brace)
        elif name in ("flock", "script") and word.text in ("-c", "--command") and following is not None:
            scripts.append(following.text)
            index += 1
        elif word.text in values:
            index += 1
        index += 1
    index += WRAPPER_LEADING_ARGS.get(name, 0)
    inner = list(args[index:])
    if name == "script":  # its positional is the typescript it writes, not a command
        for word in inner:
            findings += write_findings(word, scope)
        inner = []
    if name == "flock" and len(inner) >= 2 and inner[0].text in ("-c", "--command"):
        if inner[1].dynamic:
            return Classification([caution(user_text("flock -c runs a command built at run time"))])
        scripts.append(inner[1].text)
        inner = []
    if directory is not None:
        findings += read_findings(directory, scope, verb=user_text("runs in"))
    if name == "xargs":
        replace = _xargs_replacement(args)
        inner = [Word(w.text, w.raw, True) if replace and replace in w.text else w for w in inner] or [
            Word("echo", "echo")
        ]
        inner.append(
            Word("{input}", "(input)", dynamic=True)
        )  # xargs appends what it reads: paths unknown here
        if _deletes_recursively(inner):
            findings.append(
                deny(user_text("runs %1 recursively on whatever paths arrive on its input", inner[0].text))
            )
    if not inner:
        if name == "env" and not scripts:
            return Classification([ask(user_text("prints the environment, which may hold secrets"))])
        return Classification(findings or [allow(user_text("%1 with nothing to run", name))], scripts)
    findings.append(allow(user_text("runs %1 (checked separately)", inner[0].text)))
    return Classification(findings, scripts, [inner], directory=directory)


def _deletes_recursively(argv: list[Word]) -> bool:
    """``rm -rf``, ``chmod -R``, ``chown -R``, ``shred``: a command that destroys whatever paths it gets."""
    name = command_name(argv[0]) if argv else ""
    flags, longs = short_flags(argv[1:]), long_options(argv[1:])
    if name == "rm":
        return bool({"r", "R"} & flags) or "--recursive" in longs
    if name in ("chmod", "chown", "chgrp"):
        return "R" in flags or "--recursive" in longs
    return name == "shred"


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
        return Classification([caution(user_text("watch runs a command built at run time"))])
    return Classification(
        [allow(user_text("runs a command repeatedly (checked separately)"))], [" ".join(w.text for w in rest)]
    )


def _environment_builtin(name: str, args: list[Word]) -> Classification:
    if name == "set":
        if not args:
            return Classification([ask(user_text("prints every shell variable, which may hold secrets"))])
        if "--" in [arg.text for arg in args] or all(arg.text in HARMLESS_SET_FLAGS for arg in args):
            return Classification([allow(user_text("sets shell options"))])
        return Classification([ask(user_text("changes shell options"))])
    if name == "trap":
        action = positionals(args)[:1]
        if action and action[0].dynamic:
            return Classification([caution(user_text("trap runs a command built at run time"))])
        return Classification(
            [allow(user_text("sets a trap (its command is checked separately)"))],
            [action[0].text] if action else [],
        )
    if name == "let":
        return Classification(
            [caution(user_text("let evaluates arithmetic, whose array subscripts can run commands"))]
        )
    if name in ("read", "mapfile", "readarray", "getopts"):
        return _reads_into_variables(name, args)
    if name in ("export", "declare", "typeset", "readonly", "local", "unset"):
        flags = short_flags(args)
        if flags & {"n", "i", "a", "A"} and name != "unset":
            return Classification(
                [
                    caution(
                        user_text(
                            (
                                "%1 -%2 makes later assignments evaluate names or arithmetic, which "
                                "can run commands"
                            ),
                            name,
                            "".join(sorted(flags & {"n", "i", "a", "A"})),
                        )
                    )
                ]
            )
        exported = name == "export" or "x" in flags
        if name != "unset" and (not positionals(args) or "p" in flags):
            return Classification([ask(user_text("%1 prints shell variables, which may hold secrets", name))])
        findings = [f for arg in positionals(args) for f in assignment_findings(arg.text, exported=exported)]
        return Classification(findings or [allow(user_text("%1 sets shell variables", name))])
    return Classification([ask(user_text("changes shell settings (%1)", name))])


def _reads_into_variables(name: str, args: list[Word]) -> Classification:
    names = positionals(args, frozenset({"-d", "-n", "-N", "-p", "-t", "-u", "-C", "-c", "-O", "-s"}))
    if name in ("mapfile", "readarray") or "a" in short_flags(args):
        return Classification(
            [caution(user_text("%1 fills an array, whose subscripts can run commands", name))]
        )
    for word in names[1:] if name == "getopts" else names:
        findings = assignment_findings(word.text + "=", exported=False)
        if findings:
            return Classification(findings)
    return Classification([allow(user_text("%1 reads input into shell variables", name))])


def variable_loads_code(name: str) -> bool:
    """Whether setting ``name`` (already exported, or exported by this command) can make a program load
    code or configuration (PATH, PAGER, GIT_*, LD_PRELOAD, BASH_ENV, ...)."""
    upper = name.upper()
    return (
        name in DANGEROUS_VARIABLES
        or upper.startswith(LOADER_VARIABLE_PREFIXES)
        or any(part in upper for part in LOADER_VARIABLE_PARTS)
    )


def is_harmless_variable(name: str) -> bool:
    return name in HARMLESS_VARIABLES or name.startswith(HARMLESS_VARIABLE_PREFIXES)


def assignment_findings(text: str, *, exported: bool) -> list[Finding]:
    """Findings for ``NAME=value``: an exported variable (an env prefix, ``env``, ``export``) must be on the
    harmless list; a plain shell variable only asks when its name is one programs load code from. A subscript
    (``a[...]=``) is arithmetic, which can run commands."""
    variable = text.split("=", 1)[0].rstrip("+")
    if "[" in variable or not variable:
        return [
            caution(user_text("assigns %1, whose array subscript can run commands", repr(variable or text)))
        ]
    if variable in DANGEROUS_VARIABLES:
        return [caution(user_text("changes %1, which decides what later commands run or load", variable))]
    if exported and not is_harmless_variable(variable):
        return [
            caution(
                user_text(
                    ("sets %1 for the commands it runs, which may make them load code or config"), variable
                )
            )
        ]
    if exported and "/" in text.split("=", 1)[-1] and "=" in text:
        # ``LC_ALL=/path``, ``TZ=/path``: even these load files named by a path.
        return [caution(user_text("sets %1 to a path, which the commands it runs may load", variable))]
    if not exported and variable_loads_code(variable):
        return [caution(user_text("changes %1, which may make later commands load code or config", variable))]
    return []


def _eval(args: list[Word]) -> Classification:
    if any(arg.fetches_code for arg in args):
        return Classification([deny(user_text("evaluates text downloaded or decoded at run time"))])
    if any(arg.dynamic for arg in args):
        return Classification([caution(user_text("evaluates text built at run time"))])
    if not args:
        return Classification([allow(user_text("eval with nothing to evaluate"))])
    return Classification(
        [allow(user_text("evaluates the given text (checked as a command)"))],
        [" ".join(a.text for a in args)],
    )


_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})


def _source(name: str, args: list[Word], scope: ShellScope) -> list[Finding]:
    script = positionals(args)[:1]
    if not script:
        return [caution(user_text("%1 without a file", name))]
    if script[0].fetches_code:
        return [deny(user_text("runs code downloaded or decoded at run time in this shell"))]
    if script[0].dynamic:
        return [caution(user_text("runs %1 in this shell, a script known only at run time", script[0].raw))]
    return [
        ask(user_text("runs the script %1 in this shell", script[0].text)),
        *read_findings(script[0], scope, verb=user_text("runs")),
    ]
