"""Shell commands that touch files: where they read, write and delete, judged against the project root.

Paths are resolved the way ``paths.inspect_path`` resolves a tool's path (``~``, ``..``, symlinks), relative
to the command's working directory. Globs are expanded against the real files (``cat .e*`` reads ``.env``),
brace lists are expanded, and a path only known at run time (``$FILE``, ``$(...)``) is never assumed harmless.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...user_text import user_text
from ..findings import Finding, allow, ask, caution, deny
from ..paths import critical_path_reason, device_write_problem, hard_link_reason, inspect_path, is_sensitive
from ..protected import protected_write_finding
from .options import long_options, positionals, short_flags
from .tables import PRIVILEGED_OWNERS
from .words import Word, expand_braces

# Enough to catch a secret among the matches, few enough to stay fast on a big tree.
_GLOB_LIMIT = 500
_TREE_SCAN_LIMIT = 5000
_SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"})


# Most working directories a command is followed through (``cd a; cd b; ...``); past this it is unknown.
_MAX_BASES = 8
# Where a process's memory, environment and open files can be read: the server's API key and token live there.
_PROC_PROCESS = re.compile(r"(?:^|[^A-Za-z0-9_-])/proc/+([^/\s'\"`;,)]*)")
# /proc entries about the whole machine, not one process.
_PROC_MACHINE_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_PROC_PROCESS_NAMES = frozenset({"self", "thread-self", "curproc"})
# System files: writing there changes how the machine boots, logs in, or runs every program.
_SYSTEM_WRITE_PREFIXES = (
    "/etc", "/boot", "/sys", "/proc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    "/var/spool/cron", "/var/lib",
)  # fmt: skip
# Expansions that carve a value out of a variable (``${x:0:1}``, ``${!x}``, ``${x/a/b}``) or split on $IFS:
# spelling a path that way for a recursive delete is a disguise, not a need.
_DISGUISED_EXPANSION = re.compile(r"\$\{(?:![A-Za-z_]|[#]?[A-Za-z_0-9@*]+(?::|/|#|%|\^|,|\[))|\$\{?IFS\b")


@dataclass(frozen=True)
class ShellScope:
    """Where a command runs: the project root and the working directory relative paths start from.

    After ``cd``/``pushd`` the analyser may not know which directory a later part runs in (``cd a || cd b``);
    ``others`` holds every other directory it may be, and ``cwd_unknown`` says a ``cd`` went somewhere only
    known at run time: relative paths are then judged from every base, or asked about.
    """

    root: Path
    cwd: Path
    others: tuple[Path, ...] = ()
    cwd_unknown: bool = False

    def bases(self) -> tuple[Path, ...]:
        return (self.cwd, *self.others)

    def moved_to(self, directory: Path | None, *, certain: bool) -> ShellScope:
        """The scope after a ``cd`` to ``directory`` (None: known only at run time)."""
        if directory is None:
            return ShellScope(self.root, self.cwd, self.others, cwd_unknown=True)
        if certain:
            return ShellScope(self.root, directory, (), self.cwd_unknown)
        bases = tuple(dict.fromkeys((*self.bases(), directory)))
        if len(bases) > _MAX_BASES:
            return ShellScope(self.root, self.cwd, self.others, cwd_unknown=True)
        return ShellScope(self.root, bases[0], bases[1:], self.cwd_unknown)


def resolve_directory(word: Word, scope: ShellScope) -> list[Path] | None:
    """The directories ``cd word`` may land in, or None when only known at run time."""
    if word.dynamic or word.glob or word.brace:
        return None
    text = word.text
    if text.startswith("~"):
        text = os.path.expanduser(text)
    if os.path.isabs(text):
        return [Path(os.path.normpath(text))]
    if scope.cwd_unknown:
        return None
    return [Path(os.path.normpath(os.path.join(base, text))) for base in scope.bases()]


def process_file_problem(text: str) -> str | None:
    """Why ``text`` names a process's own files under /proc (environ, cmdline, mem, fds), or None.

    Every per-process entry counts: ``/proc/<pid>/``, ``/proc/self/``, ``/proc/$PPID/``, ``/proc/*/``.
    """
    if "/proc" not in text:
        return None
    normalized = re.sub(r"/+", "/", text).replace("/./", "/")
    for match in _PROC_PROCESS.finditer(normalized):
        entry = match.group(1)
        if not entry:
            continue
        if entry in _PROC_PROCESS_NAMES or entry.isdigit() or not _PROC_MACHINE_RE.match(entry):
            return (
                f"reads a process's own files under /proc ({match.group(0).lstrip()[:60]}): the server's "
                "environment, command line and memory hold its keys"
            )
    return None


def system_write_problem(resolved: Path) -> str | None:
    text = resolved.as_posix()
    for prefix in _SYSTEM_WRITE_PREFIXES:
        if text == prefix or text.startswith(prefix + "/"):
            return f"writes {text}, a system file"
    return None


def disguised(word: Word) -> bool:
    """Whether a run-time word carves its value out of a variable or $IFS (a disguise for a path)."""
    return word.dynamic and bool(_DISGUISED_EXPANSION.search(word.raw or word.text))


@dataclass
class FileVerdict:
    findings: list[Finding] = field(default_factory=list)
    # Commands this one runs (``find -exec``): analysed as parts of their own.
    nested: list[list[Word]] = field(default_factory=list)


def _candidates(word: Word, scope: ShellScope) -> list[tuple[str, Path]]:
    """The paths a word names once bash has expanded braces and globs, each with the directory it is
    relative to (every directory the command may run in)."""
    texts = expand_braces(word.text) if word.brace else [word.text]
    expanded: list[tuple[str, Path]] = []
    for base in scope.bases():
        for text in texts:
            if not word.glob:
                expanded.append((text, base))
                continue
            pattern = text if os.path.isabs(os.path.expanduser(text)) else os.path.join(base, text)
            matches = glob.glob(os.path.expanduser(pattern))
            if len(matches) > _GLOB_LIMIT:
                # Past the limit only the names are looked at (cheap): a secret there is still found.
                matches = matches[:_GLOB_LIMIT] + [m for m in matches[_GLOB_LIMIT:] if is_sensitive(m)][:10]
            expanded.extend((match, base) for match in matches or [text])
    return expanded


def _relative_in_unknown_directory(word: Word, scope: ShellScope, verb: str) -> list[Finding]:
    text = word.text
    if scope.cwd_unknown and not text.startswith(("/", "~")):
        return [caution(user_text("%1 %2 in a directory known only at run time (after a cd)", verb, text))]
    return []


def _proc_findings(word: Word, verb: str) -> list[Finding]:
    problem = process_file_problem(word.text)
    return [deny(problem)] if problem else []


def read_findings(word: Word, scope: ShellScope, verb: str = user_text("reads")) -> list[Finding]:
    """Findings for a path a command reads: outside the project or a secret → ask; a process's files under
    /proc → deny."""
    found: list[Finding] = _proc_findings(word, verb)
    if word.dynamic:
        return [
            *found,
            caution(user_text("%1 %2, a path known only at run time", verb, word.raw or word.text)),
        ]
    found += _relative_in_unknown_directory(word, scope, verb)
    for text, base in _candidates(word, scope):
        facts = inspect_path(scope.root, text, base)
        proc = process_file_problem(str(facts.resolved)) if facts.resolved is not None else None
        if proc:
            found.append(deny(proc))
        elif facts.problem:
            found.append(caution(user_text("%1 %2: %3", verb, repr(text), facts.problem)))
        elif not facts.inside:
            found.append(caution(user_text("%1 %2, outside the project", verb, text)))
        elif facts.sensitive:
            found.append(caution(user_text("%1 %2, which may hold secrets", verb, text)))
        elif facts.hard_linked:
            found.append(caution(hard_link_reason(verb, text)))
    return _unique(found)


def write_findings(word: Word, scope: ShellScope, verb: str = user_text("writes")) -> list[Finding]:
    """Findings for a path a command writes: devices and system files (deny), outside the project, ``.git/``
    internals (of any repository), secrets."""
    found: list[Finding] = _proc_findings(word, verb)
    if word.dynamic:
        return [
            *found,
            caution(user_text("%1 %2, a path known only at run time", verb, word.raw or word.text)),
        ]
    found += _relative_in_unknown_directory(word, scope, verb)
    for text, base in _candidates(word, scope):
        device = device_write_problem(os.path.normpath(text)) if text.startswith("/dev/") else None
        if text.startswith("/dev/"):
            if device is not None:
                found.append(deny(device[0]) if device[1] else caution(device[0]))
            continue
        facts = inspect_path(scope.root, text, base)
        system = system_write_problem(facts.resolved) if facts.resolved is not None else None
        if facts.problem:
            found.append(caution(user_text("%1 %2: %3", verb, repr(text), facts.problem)))
        elif facts.resolved is not None and str(facts.resolved).startswith("/dev/"):
            device = device_write_problem(str(facts.resolved))
            if device is not None:
                found.append(deny(device[0]) if device[1] else caution(device[0]))
        elif system and not facts.inside:
            found.append(deny(system))
        elif (guarded := protected_write_finding(facts.resolved, scope.root, text, verb)) is not None:
            found.append(guarded)  # protected paths (protected.py): never, or ask whatever the rules say
        elif any(part.lower() == ".git" for part in Path(text).parts) and facts.inside:
            # A nested repository's config or hooks (``sub/.git/config``) runs code for git as much as ours.
            found.append(caution(user_text("%1 %2, inside a repository's .git directory", verb, text)))
        elif not facts.inside:
            found.append(caution(user_text("%1 %2, outside the project", verb, text)))
        elif facts.git_internal:
            found.append(caution(user_text("%1 %2, inside the repository's .git directory", verb, text)))
        elif facts.sensitive:
            found.append(caution(user_text("%1 %2, which may hold secrets", verb, text)))
        elif facts.hard_linked:
            found.append(caution(hard_link_reason(verb, text)))
    return _unique(found)


def delete_findings(
    word: Word, scope: ShellScope, *, recursive: bool, verb: str = user_text("deletes")
) -> list[Finding]:
    """Findings for a path a command deletes (or moves away, or re-permissions)."""
    if word.dynamic:
        if recursive and disguised(word):
            return [
                deny(
                    user_text(
                        "%1 %2 recursively, a path disguised by an expansion", verb, word.raw or word.text
                    )
                )
            ]
        critical = _critical_when_empty(word, scope) if recursive else None
        if critical:
            return [
                deny(
                    user_text(
                        "%1 %2 recursively, which is %3 if it expands empty",
                        verb,
                        word.raw or word.text,
                        critical,
                    )
                )
            ]
        return [caution(user_text("%1 %2, a path known only at run time", verb, word.raw or word.text))]
    found: list[Finding] = _relative_in_unknown_directory(word, scope, verb)
    texts = expand_braces(word.text) if word.brace else [word.text]
    for text, base in ((text, base) for base in scope.bases() for text in texts):
        target, covers_contents = _glob_base(text) if word.glob else (text, False)
        facts = inspect_path(scope.root, target, base)
        if facts.problem or facts.resolved is None:
            found.append(caution(user_text("%1 %2: %3", verb, repr(text), facts.problem)))
            continue
        critical = critical_path_reason(facts.resolved, scope.root)
        what = f"everything in {critical}" if covers_contents else critical
        guarded = protected_write_finding(facts.resolved, scope.root, target, verb, delete=True)
        if critical and recursive:
            found.append(deny(user_text("%1 %2 recursively", verb, what)))
        elif guarded is not None:
            found.append(guarded)  # protected paths (protected.py)
        elif critical:
            found.append(caution(user_text("%1 %2, which is %3", verb, text, critical)))
        elif facts.resolved == scope.root.resolve():
            found.append(
                caution(
                    f"{verb} the whole project"
                    if not covers_contents
                    else f"{verb} everything in the project"
                )
            )
        elif not facts.inside:
            found.append(caution(user_text("%1 %2, outside the project", verb, text)))
        elif facts.git_internal:
            found.append(caution(user_text("%1 %2, inside the repository's .git directory", verb, text)))
    return _unique(found)


def _critical_when_empty(word: Word, scope: ShellScope) -> str | None:
    """``rm -rf /usr/$X``, ``rm -rf ~/"$dir"``: the literal part before the first expansion, when the last
    path component is the expansion, is what is deleted if it expands to nothing."""
    cut = min((i for i in (word.text.find("$"), word.text.find("`")) if i >= 0), default=-1)
    if cut <= 0:
        return None
    prefix = word.text[:cut]
    if not prefix.endswith("/") or "/" in word.text[cut:].rstrip("/"):
        return None
    for base in scope.bases():
        facts = inspect_path(scope.root, prefix, base)
        if facts.resolved is not None:
            critical = critical_path_reason(facts.resolved, scope.root)
            if critical:
                return critical
    return None


def _glob_base(text: str) -> tuple[str, bool]:
    """For a glob like ``/usr/*`` the directory whose contents it covers (``/usr``) and True."""
    head, tail = os.path.split(text.rstrip("/") or "/")
    if any(char in tail for char in "*?[") and not any(char in head for char in "*?["):
        return (head or ".", True)
    return (text, False)


def tree_has_secrets(word: Word, scope: ShellScope) -> bool:
    """Whether a directory searched recursively holds files that may be secrets (a bounded walk), from
    every directory the command may be in."""
    if scope.cwd_unknown and not word.text.startswith(("/", "~")):
        return True  # the directory searched depends on a cd to somewhere unknown: assume the worst
    return any(_tree_has_secrets(word.text, scope, base) for base in scope.bases())


def _tree_has_secrets(text: str, scope: ShellScope, base: Path) -> bool:
    facts = inspect_path(scope.root, text, base)
    if not facts.inside:
        return False  # reading outside the project asks already; no walk over someone else's tree
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
    verdict = FileVerdict([ask(user_text("deletes files"))])
    if "--no-preserve-root" in longs:
        verdict.findings.append(deny(user_text("disables rm's protection of / (--no-preserve-root)")))
    for target in positionals(args):
        verdict.findings += delete_findings(target, scope, recursive=recursive)
    return verdict


def classify_rmdir(args: list[Word], scope: ShellScope) -> FileVerdict:
    verdict = FileVerdict([ask(user_text("deletes directories"))])
    for target in positionals(args):
        verdict.findings += delete_findings(target, scope, recursive=False)
    return verdict


_SETID_MODE = re.compile(r"^(?:[0-7]*[2-7][0-7]{3}|[ugoa]*[+=][rwxXt]*s[rwxXt]*)$")


def _privilege_change(name: str, mode_or_owner: Word | None) -> str | None:
    """Why a chmod/chown/chgrp hands out privileges (setuid/setgid, owner root), or None."""
    if name == "chgrp":
        return "changes a file's group (chgrp)"
    if mode_or_owner is None:
        return None
    if mode_or_owner.dynamic:
        return f"{name} with a mode or owner known only at run time ({mode_or_owner.raw})"
    text = mode_or_owner.text
    if name == "chmod":
        if any(_SETID_MODE.match(part) for part in text.split(",")):
            return f"sets the setuid/setgid bit (chmod {text})"
        return None
    owner, _, group = text.replace(".", ":", 1).partition(":")
    if owner in PRIVILEGED_OWNERS or group in PRIVILEGED_OWNERS:
        return f"gives files to a privileged user or group (chown {text})"
    return None


def classify_permissions(name: str, args: list[Word], scope: ShellScope) -> FileVerdict:
    """chmod / chown / chgrp: the first positional is the mode or owner (unless --reference gives it)."""
    recursive = "R" in short_flags(args) or "--recursive" in long_options(args)
    targets = positionals(args)
    reference = any(arg.text.startswith("--reference") for arg in args)
    # chmod's symbolic modes look like options (``chmod -x file``, ``chmod u-s``): take them from the raw
    # arguments.
    modes = [arg for arg in args if not arg.text.startswith("--")] if name == "chmod" else []
    mode_or_owner = None if reference else (targets[0] if targets else None)
    if name == "chmod" and not reference and modes and modes[0].text.startswith("-"):
        mode_or_owner = modes[0]
    elif not reference:
        targets = targets[1:]
    privilege = _privilege_change(name, mode_or_owner)
    changes = "permissions" if name == "chmod" else "ownership"
    verdict = FileVerdict([ask(f"changes file {changes}" + (" recursively" if recursive else ""))])
    if privilege:
        verdict.findings.append(deny(privilege))
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
    mode = _option_value(args, ("-m", "--mode")) if name == "install" else None
    if mode is not None and any(_SETID_MODE.match(part) for part in mode.text.split(",")):
        verdict.findings.append(deny(user_text("installs a setuid/setgid file (install -m %1)", mode.text)))
    for source in sources:
        if name == "mv":
            verdict.findings += delete_findings(source, scope, recursive=True, verb=user_text("moves away"))
        elif name == "ln":
            # A link to a secret or outside the project, read later through an innocent name.
            verdict.findings += read_findings(source, scope, verb=user_text("links to"))
        else:
            verdict.findings += read_findings(source, scope, verb=user_text("copies"))
    if destination is not None:
        verdict.findings += write_findings(destination, scope)
        if _names_a_folder(destination, scope, bool(target_option) or len(sources) > 1):
            # What lands in a folder is judged by its own name there: ``cp json.py analysis/`` writes
            # ``analysis/json.py`` (a module next to a notebook), ``mv pkg .venv/lib/`` a venv's package.
            for source in sources:
                if not source.dynamic and not source.glob and source.text.rstrip("/"):
                    entry = destination.text.rstrip("/") + "/" + os.path.basename(source.text.rstrip("/"))
                    verdict.findings += write_findings(_value_word(destination, entry), scope)
    return verdict


def _names_a_folder(destination: Word, scope: ShellScope, several: bool) -> bool:
    """Whether ``cp``/``mv``/``ln``/``install`` put their sources inside ``destination``."""
    if destination.dynamic or destination.glob:
        return False
    if several or destination.text.endswith("/"):
        return True
    for base in scope.bases():
        resolved = inspect_path(scope.root, destination.text, base).resolved
        if resolved is not None and resolved.is_dir():
            return True
    return False


def classify_creators(name: str, args: list[Word], scope: ShellScope) -> FileVerdict:
    """mkdir, touch, truncate, shred: each positional is a path they create or change."""
    values = frozenset(
        {"-m", "--mode", "-s", "--size", "-r", "--reference", "-d", "--date", "-t", "-n", "--iterations"}
    )
    reasons = {
        "mkdir": ask(user_text("creates directories"), edit=True),
        "touch": ask(user_text("creates or touches files"), edit=True),
        "truncate": ask(user_text("empties or resizes files")),
        "shred": ask(user_text("destroys file contents beyond recovery")),
    }
    verdict = FileVerdict([reasons.get(name, ask(user_text("changes files")))])
    for target in positionals(args, values):
        verdict.findings += write_findings(
            target, scope, verb=user_text("shreds") if name == "shred" else "writes"
        )
    return verdict


def classify_dd(args: list[Word], scope: ShellScope) -> FileVerdict:
    verdict = FileVerdict([ask(user_text("copies raw data with dd"))])
    for arg in args:
        key, _, value = arg.text.partition("=")
        if key == "of" and value:
            verdict.findings += write_findings(_value_word(arg, value), scope)
        elif key == "if" and value and not value.startswith("/dev/"):
            verdict.findings += read_findings(_value_word(arg, value), scope)
    return verdict


def classify_tee(args: list[Word], scope: ShellScope) -> FileVerdict:
    verdict = FileVerdict([allow(user_text("copies its input to files"))])
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
    verdict = FileVerdict([allow(user_text("lists files"))])
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
                    allow(user_text("runs %1 for each file found (checked separately)", inner[0].text))
                )
            else:
                verdict.findings.append(caution(user_text("%1 without a command", token)))
        elif token == "-delete":
            deletes = True
        elif token == "-files0-from" and index + 1 < len(args):
            verdict.findings += read_findings(args[index + 1], scope)
            index += 1
        elif token in ("-fprint", "-fprint0", "-fprintf", "-fls") and index + 1 < len(args):
            verdict.findings += write_findings(args[index + 1], scope)
            verdict.findings.append(ask(user_text("writes the list of files found to a file"), edit=True))
            index += 1
        index += 1
    destroys = any(command_name_of(inner) in _DESTROYERS for inner in verdict.nested)
    for start in starts or [Word(".", ".")]:
        if destroys and _is_critical(start, scope):
            verdict.findings.append(
                deny(
                    user_text(
                        ("runs a deleting command on every file found under %1, a critical directory"),
                        start.text,
                    )
                )
            )
        if deletes:
            verdict.findings += delete_findings(
                start, scope, recursive=True, verb=user_text("deletes files under")
            )
        else:
            verdict.findings += [
                f
                for f in read_findings(start, scope, verb=user_text("searches"))
                if "secrets" not in f.reason
            ]
    if deletes:
        verdict.findings.append(ask(user_text("deletes the files it finds")))
    return verdict


_DESTROYERS = frozenset({"rm", "shred", "unlink", "chmod", "chown", "chgrp", "truncate", "mv", "dd"})


def command_name_of(argv: list[Word]) -> str:
    return os.path.basename(argv[0].text.rstrip("/")) if argv else ""


def _is_critical(word: Word, scope: ShellScope) -> bool:
    if word.dynamic:
        return disguised(word)
    for base in scope.bases():
        facts = inspect_path(scope.root, word.text, base)
        if facts.resolved is not None and critical_path_reason(facts.resolved, scope.root):
            return True
    return False


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
