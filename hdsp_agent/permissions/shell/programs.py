"""Programs with subcommands or code of their own: git, package managers, network clients, shells, ...

Each returns the findings for one invocation; shells also return the script they run (``bash -c``) for the
analyser to check part by part, and say when they would run whatever arrives on stdin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...user_text import user_text
from ..findings import Finding, allow, ask, caution, deny
from .files import ShellScope, read_findings, resolve_directory, tree_has_secrets, write_findings
from .gitconfig import repository_config_problem
from .options import positionals
from .tables import (
    CODE_OPTIONS,
    GIT_ASK_REASONS,
    GIT_BRANCH_LISTING,
    GIT_READ_SUBCOMMANDS,
    MODULE_OPTIONS,
    PACKAGE_INSTALL_SUBCOMMANDS,
    PACKAGE_QUERIES,
    SHELL_STARTUP_OPTIONS,
    SHELL_VALUE_OPTIONS,
    VERSION_ARGUMENTS,
)
from .words import Word

_RUNS_PROJECT_CODE = frozenset(
    {"run", "test", "start", "exec", "x", "dlx", "create", "init", "build", "bench", "tool"}
)
# Interpreters that run a program read from stdin when given no script.
_STDIN_LANGUAGES = frozenset(
    {
        "python",
        "python2",
        "python3",
        "pypy",
        "pypy3",
        "perl",
        "ruby",
        "node",
        "nodejs",
        "php",
        "lua",
        "luajit",
        "Rscript",
        "R",
        "julia",
        "pwsh",
        "powershell",
        "osascript",
        "tclsh",
        "wish",
        "ipython",
    }
)
_PROGRAM_REASONS = {
    "make": "runs the project's build (any command in the Makefile)",
    "pytest": "runs the project's tests (arbitrary code)",
    "tox": "runs the project's test environments",
    "nox": "runs the project's sessions",
    "docker": "controls containers",
    "podman": "controls containers",
    "kubectl": "controls a Kubernetes cluster",
    "sed": "sed is not on the read-only list (it can write files and run commands)",
    "awk": "runs an awk program (awk can write files and run commands)",
    "crontab": "schedules commands",
    "at": "schedules commands",
    "chroot": "runs a command in another root",
    "vim": "opens an editor (interactive)",
    "less": "opens a pager (interactive)",
    "jupyter": "runs a Jupyter command (may execute notebooks)",
}


@dataclass
class ProgramVerdict:
    findings: list[Finding] = field(default_factory=list)
    # Shell source this program runs (``bash -c '...'``): analysed part by part.
    scripts: list[str] = field(default_factory=list)
    # The program runs whatever arrives on stdin (``sh`` with no script, ``python`` with no script).
    reads_code_from_stdin: bool = False


def is_version_query(args: list[Word]) -> bool:
    return len(args) == 1 and args[0].text in VERSION_ARGUMENTS


def classify_git(args: list[Word], scope: ShellScope) -> ProgramVerdict:
    verdict = ProgramVerdict()
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        option = args[index].text
        if option in ("--version", "--help", "-h") and len(args) == 1:
            return ProgramVerdict([allow(user_text("prints git's version or help"))])
        if option in ("-c", "--config-env") or option.startswith(("--config-env=", "-c")):
            verdict.findings.append(
                caution(user_text("sets git configuration for this call (configuration can run commands)"))
            )
        elif option == "-C" and index + 1 < len(args):
            directory = args[index + 1]
            verdict.findings += read_findings(directory, scope, verb=user_text("runs git in"))
            moved = resolve_directory(directory, scope)
            scope = scope.moved_to(moved[0] if moved and len(moved) == 1 else None, certain=True)
        elif option.startswith(("--git-dir", "--work-tree", "--namespace", "--super-prefix")) or (
            option.startswith("--exec-path") and (len(args) > 1 or "=" in option)
        ):
            verdict.findings.append(caution(user_text("points git elsewhere (%1)", option.split("=")[0])))
        elif option in ("-p", "--paginate"):
            verdict.findings.append(caution(user_text("git --paginate runs the configured pager")))
        if option in ("-c", "-C", "--config-env", "--git-dir", "--work-tree", "--namespace"):
            index += 1
        index += 1
    if index >= len(args):
        verdict.findings.append(allow(user_text("prints git's usage")))
        return verdict
    subcommand, rest = args[index], args[index + 1 :]
    if subcommand.dynamic:
        verdict.findings.append(caution(user_text("the git subcommand is known only at run time")))
        return verdict
    verdict.findings.append(_git_subcommand(subcommand.text, rest))
    verdict.findings += _git_paths(subcommand.text, rest, scope)
    if not scope.cwd_unknown:
        for base in scope.bases():
            problem = repository_config_problem(base)
            if problem:
                verdict.findings.append(caution(problem))
                break
    return verdict


def _git_paths(name: str, rest: list[Word], scope: ShellScope) -> list[Finding]:
    """Files a read-only git subcommand reads outside the repository: ``diff --no-index A B``, ``grep -f F``,
    ``config -f F``, ``--output=F`` (checked as a write)."""
    findings: list[Finding] = []
    if name in _GIT_PATH_READERS:
        # Paths and ``REV:path`` blobs: ``git diff --no-index /etc/passwd x`` (outside a repository every
        # ``git diff`` is one), ``git show HEAD:.env``.
        for word in positionals(rest, _GIT_VALUE_OPTIONS):
            findings += read_findings(word, scope)
            if ":" in word.text and not word.dynamic:
                path = word.text.split(":", 1)[1]
                if path:
                    findings += [f for f in read_findings(Word(path, path), scope) if "secrets" in f.reason]
    if name == "grep" and tree_has_secrets(Word(".", "."), scope):
        findings.append(
            caution(user_text("git grep searches tracked files, including files that may hold secrets"))
        )
    for index, word in enumerate(rest):
        following = rest[index + 1] if index + 1 < len(rest) else None
        option, _, value = word.text.partition("=")
        if option in ("-f", "--file", "--blob-file") and name in ("grep", "config"):
            target = _value_of(word, value) if value else following
            if target is not None:
                findings += read_findings(target, scope)
        elif option in ("--output", "-o") and name not in ("grep",):
            target = _value_of(word, value) if value else following
            if target is not None:
                findings += write_findings(target, scope)
    return findings


# ``git config`` keys whose values are credentials (``http.<url>.extraheader``, ``credential.*``, ...).
_GIT_CREDENTIAL_KEY_WORDS = ("extraheader", "credential", "password", "token", "secret", "auth")


def _git_config_prints_credentials(texts: list[str]) -> bool:
    """Whether ``git config TEXTS`` prints every setting (``--list``, ``--get-regexp``) or one whose value is
    a credential; the output is redacted too, but a header's value can be in any form."""
    if any(text in ("-l", "--list", "--get-regexp", "--get-urlmatch") for text in texts):
        return True
    keys = [text.lower() for text in texts if not text.startswith("-")]
    return any(word in key for key in keys for word in _GIT_CREDENTIAL_KEY_WORDS)


_GIT_PATH_READERS = frozenset({"diff", "show", "log", "blame", "annotate", "cat-file", "whatchanged"})
_GIT_VALUE_OPTIONS = frozenset({"-n", "-L", "-S", "-G", "--grep", "--author", "-U", "--format", "-C", "-M"})


def _value_of(word: Word, value: str) -> Word:
    return Word(value, value, word.dynamic, word.glob, word.brace)


def _git_subcommand(name: str, rest: list[Word]) -> Finding:
    texts = [word.text for word in rest]
    if any(text.startswith(("--output", "--ext-diff")) for text in texts):
        return ask(user_text("git %1 writes its output to a file or runs an external diff", name))
    if name == "grep" and any(
        text.startswith("--open-files-in-pager") or (text.startswith("-O") and not text.startswith("--"))
        for text in texts
    ):
        return caution(user_text("git grep -O opens the files in a program named on the command line"))
    if any(text.startswith(("--textconv", "--upload-pack", "--receive-pack", "--exec")) for text in texts):
        return caution(user_text("git %1 runs a program named in its options or configuration", name))
    if name == "help" and texts:
        return ask(
            user_text("git help opens a manual page or a browser (a program of the configuration's choosing)")
        )
    if name == "config" and _git_config_prints_credentials(texts):
        return caution(
            user_text(
                "git config prints git's configuration, which may hold credentials (http.extraheader, "
                "tokens in remote URLs)"
            )
        )
    if name in GIT_READ_SUBCOMMANDS:
        problem = _git_read_problem(name, texts)
        return ask(problem) if problem else allow(user_text("git %1 only reads", name))
    if name == "reset" and "--hard" in texts:
        return ask(user_text("discards uncommitted changes (git reset --hard)"))
    if name == "push" and any(
        text in ("-f", "--force", "--mirror", "--delete", "-d") or text.startswith("--force")
        for text in texts
    ):
        return ask(user_text("force-pushes or deletes on the remote, overwriting its history"))
    if name in GIT_ASK_REASONS:
        return ask(user_text("git %1: %2", name, GIT_ASK_REASONS[name]))
    return ask(user_text("git %1 is not a read-only git command", name))


def _git_read_problem(name: str, texts: list[str]) -> str | None:
    """Why a normally read-only git subcommand changes something with these arguments, or None."""
    if name == "branch":
        listing = "--list" in texts or "-l" in texts
        for text in texts:
            option = text.split("=", 1)[0]
            if option in GIT_BRANCH_LISTING or option in ("--sort", "--format"):
                continue
            if text.startswith("-") or not listing:
                return "git branch with these arguments creates, renames or deletes branches"
    elif name == "tag":
        listing = not texts or "-l" in texts or "--list" in texts
        if not listing or any(text in ("-d", "--delete", "-a", "-s", "-f", "-m") for text in texts):
            return "git tag with these arguments creates or deletes tags"
    elif name == "remote":
        if texts and texts[0] not in ("-v", "--verbose", "get-url"):
            return f"git remote {texts[0]} changes or contacts remotes"
    elif name == "config":
        if not any(text in ("--get", "--get-all", "--get-regexp", "--list", "-l") for text in texts):
            return "git config with these arguments changes configuration"
    elif name == "stash":
        if not texts or texts[0] not in ("list", "show"):
            return "git stash with these arguments stashes or drops changes"
    elif name == "reflog":
        if texts and texts[0] not in ("show",) and not texts[0].startswith("-"):
            return f"git reflog {texts[0]} rewrites the reflog"
    return None


def classify_package_manager(name: str, args: list[Word]) -> ProgramVerdict:
    if not args:
        return ProgramVerdict([ask(user_text("runs the package manager %1", name))])
    words = [word.text for word in positionals(args)]
    subcommand = words[0] if words else args[0].text
    if name == "npx":
        return ProgramVerdict([ask(user_text("downloads and runs an npm package (npx)"))])
    if name in ("conda", "mamba", "micromamba") and words[:2] == ["env", "list"]:
        return ProgramVerdict([allow(user_text("%1 env list only reads", name))])
    queries = PACKAGE_QUERIES.get(name, frozenset())
    # Only the first word decides (``pip list``, ``npm --version``); options before it (``pip -v list``,
    # ``npm --prefix x``) may point the manager at other code, so they ask.
    if args[0].text in queries and not any(
        word.text.startswith("--") and word.text not in ("--version", "--help") and "=" in word.text
        for word in args
    ):
        return ProgramVerdict([allow(user_text("%1 %2 only reads what is installed", name, args[0].text))])
    if subcommand in PACKAGE_INSTALL_SUBCOMMANDS:
        return ProgramVerdict([ask(user_text("installs or changes packages (%1 %2)", name, subcommand))])
    if subcommand in _RUNS_PROJECT_CODE:
        return ProgramVerdict([ask(user_text("%1 %2 runs project code", name, subcommand))])
    return ProgramVerdict(
        [ask(user_text("runs the package manager %1 (%2), which may run project code", name, subcommand))]
    )


def classify_network(name: str, args: list[Word], scope: ShellScope) -> ProgramVerdict:
    if is_version_query(args):
        return ProgramVerdict([allow(user_text("prints %1's version or help", name))])
    verdict = ProgramVerdict([ask(user_text("uses the network (%1)", name))])
    for index, arg in enumerate(args[:-1]):
        value = args[index + 1]
        if arg.text in ("-o", "--output", "-O", "--output-document") and value.text != "-":
            verdict.findings += write_findings(value, scope, verb=user_text("downloads into"))
        elif arg.text in ("-T", "--upload-file", "--post-file", "--body-file"):
            verdict.findings += read_findings(value, scope, verb=user_text("uploads"))
        elif (
            arg.text in ("-d", "--data", "--data-binary", "--data-urlencode", "-F", "--form")
            and "@" in value.text
        ):
            uploaded = value.text.split("@", 1)[1].split(";", 1)[0]
            verdict.findings += read_findings(
                Word(uploaded, uploaded, value.dynamic), scope, verb=user_text("uploads")
            )
    return verdict


def classify_shell(name: str, args: list[Word], scope: ShellScope) -> ProgramVerdict:
    """``bash -c '...'`` runs its script (analysed here), ``bash file`` a file, bare ``bash`` its stdin."""
    if is_version_query(args) and args[0].text != "-v":
        return ProgramVerdict([allow(user_text("prints %1's version or help", name))])
    index, runs_string, reads_stdin = 0, False, False
    startup: list[Finding] = []
    while index < len(args):
        option = args[index].text
        if option in SHELL_STARTUP_OPTIONS or (
            option[:1] == "-" and option[1:2] != "-" and {"i", "l"} & set(option[1:])
        ):
            startup.append(
                caution(user_text("%1 %2 runs startup files, which may run any code", name, option))
            )
        if option in ("-O", "+O") and index + 1 < len(args) and args[index + 1].text == "extdebug":
            startup.append(caution(user_text("%1 -O extdebug runs the debugger's startup file", name)))
        if option in SHELL_VALUE_OPTIONS:
            index += 2
            continue
        if option == "--":
            index += 1
            break
        if option.startswith("--"):
            index += 1
            continue
        if option[:1] in ("-", "+") and len(option) > 1 and not args[index].dynamic:
            runs_string = runs_string or "c" in option[1:]
            reads_stdin = reads_stdin or "s" in option[1:]
            index += 1
            continue
        break
    rest = args[index:]
    verdict = _shell_program(name, args, rest, scope, runs_string=runs_string, reads_stdin=reads_stdin)
    verdict.findings = startup + verdict.findings
    return verdict


def _shell_program(
    name: str, args: list[Word], rest: list[Word], scope: ShellScope, *, runs_string: bool, reads_stdin: bool
) -> ProgramVerdict:
    if runs_string:
        if not rest:
            return ProgramVerdict([caution(user_text("%1 -c without a command", name))])
        return _code_word(
            rest[0],
            name,
            lambda script: ProgramVerdict(
                [allow(user_text("runs the given script with %1 (checked part by part)", name))], [script]
            ),
        )
    if rest and not reads_stdin:
        script = rest[0]
        return _code_word(
            script,
            name,
            lambda _: ProgramVerdict(
                [
                    ask(user_text("runs the shell script %1", script.text)),
                    *read_findings(script, scope, verb=user_text("runs")),
                ]
            ),
        )
    return ProgramVerdict(reads_code_from_stdin=True)


def classify_interpreter(name: str, args: list[Word], scope: ShellScope) -> ProgramVerdict:
    if is_version_query(args):
        return ProgramVerdict([allow(user_text("prints %1's version or help", name))])
    language = name.rstrip("0123456789.") or name
    is_python = language in ("python", "pypy", "ipython")
    index = 0
    while index < len(args) and args[index].is_option:
        option = args[index].text
        following = args[index + 1] if index + 1 < len(args) else None
        if is_python and option == "-m" and following is not None:
            return _python_module(following.text, args[index + 2 :])
        if option in CODE_OPTIONS and following is not None and not (language == "ruby" and option == "-r"):
            return _code_word(
                following,
                name,
                lambda _: ProgramVerdict([ask(user_text("runs %1 code given on the command line", name))]),
            )
        if is_python and option.startswith("-c") and len(option) > 2:
            return ProgramVerdict([ask(user_text("runs %1 code given on the command line", name))])
        index += 2 if option in MODULE_OPTIONS else 1
    rest = args[index:]
    if language not in _STDIN_LANGUAGES:
        reason = _PROGRAM_REASONS.get(name, f"runs {name}, which can run arbitrary code or change files")
        return ProgramVerdict([ask(reason)])
    if not rest or rest[0].text == "-":
        return ProgramVerdict(reads_code_from_stdin=True)
    script = rest[0]
    return _code_word(
        script,
        name,
        lambda _: ProgramVerdict(
            [
                ask(user_text("runs the %1 script %2", name, script.text)),
                *read_findings(script, scope, verb=user_text("runs")),
            ]
        ),
    )


def _python_module(module: str, rest: list[Word]) -> ProgramVerdict:
    # ``python -m X`` imports X from the working directory first: a pip.py in the project is what runs.
    if module in ("pip", "pip3"):
        pip = classify_package_manager("pip", rest)
        if pip.findings and pip.findings[0].decision == "allow":
            return ProgramVerdict(
                [ask(user_text("runs pip as a module, which a pip.py in the project would replace"))]
            )
        return pip
    if module in ("venv", "virtualenv"):
        return ProgramVerdict([ask(user_text("creates a virtual environment"), edit=True)])
    if module in ("http.server", "SimpleHTTPServer"):
        return ProgramVerdict([ask(user_text("serves files over HTTP"))])
    return ProgramVerdict([ask(user_text("runs the Python module %1", module))])


def _code_word(word: Word, program: str, literal_verdict: Callable[[str], ProgramVerdict]) -> ProgramVerdict:
    """The verdict for code given to ``program`` as a word: downloaded → deny, run-time → ask, else as is."""
    if word.fetches_code:
        return ProgramVerdict([deny(user_text("%1 runs code downloaded or decoded at run time", program))])
    if word.dynamic:
        return ProgramVerdict(
            [caution(user_text("%1 runs code built at run time (%2)", program, word.raw or word.text))]
        )
    return literal_verdict(word.text)
