"""Which files hold secrets, by name (DESIGN.md §4, layer 4): reading one asks the user, and no search, glob,
map or index tool returns what is in it.

Names are compared case-insensitively, with trailing spaces and dots ignored: ``.ENV``, ``server.PEM`` and
``.npmrc.`` are the files they look like on the filesystems that fold case or drop trailing dots (macOS,
Windows shares), and a hostile project may pick whichever spelling slips past a list. Where a secret is
known by its *location* rather than its name (the Jupyter runtime directory, a configured key file),
``protected.py`` says so; ``paths.is_sensitive`` asks both.

The administrator adds patterns with ``c.HdspAgentApp.sensitive_patterns_extra`` (``configure_extra``).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath

import pathspec

# Final path components that are secrets wherever they are (globs, lower case).
# fmt: off
SECRET_NAME_GLOBS: tuple[str, ...] = (
    # environment files (``.env.example`` and friends are exempt below); direnv's ``.envrc`` exports too
    ".env", ".env.*", ".envrc",
    # package managers, VCS and network credentials
    ".npmrc", ".pypirc", ".netrc", "_netrc", ".git-credentials", ".htpasswd", ".pgpass", ".my.cnf",
    ".mylogin.cnf", ".vault-token", ".databrickscfg", ".renviron", ".boto", ".s3cfg", ".dockercfg",
    "credentials", "*credentials*.json", "client_secret*.json", "service[-_]account*.json", "secrets.*",
    # keys, certificates and keystores
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.ppk",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "id_xmss*",
    # terraform state and variables hold provider credentials in clear text
    "*.tfstate", "*.tfstate.*", "*.tfvars", "*.tfvars.json",
    # Jupyter: configuration (may hold the model API key), runtime files (the server token), kernel
    # connection files (the HMAC key that lets anyone run code in the kernel), notebook signing secret
    "jupyter_server_config.*", "jupyter_notebook_config.*", "jupyter_lab_config.*",
    "jpserver-*.json", "jpserver-*.html", "nbserver-*.json", "nbserver-*.html",
    "kernel-*-*-*-*-*.json", "notebook_secret",
)
# ``.env*`` files that conventionally hold placeholders, not secrets.
NOT_SECRET_NAMES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
# Directories whose whole contents are credentials, at any depth.
SECRET_DIRS = frozenset(
    {".ssh", ".aws", ".azure", ".gnupg", ".kube", ".docker", ".password-store", ".kaggle"}
)
# Runs of path components that are credentials (a directory or a file), at any depth.
SECRET_SEQUENCES: tuple[tuple[str, ...], ...] = (
    (".config", "gcloud"), (".config", "gh", "hosts.yml"), (".config", "hub"),
    (".config", "rclone", "rclone.conf"), (".cargo", "credentials"), (".cargo", "credentials.toml"),
    (".gem", "credentials"), (".m2", "settings.xml"), (".huggingface", "token"),
    ("huggingface", "token"),
    # git's config holds credentials as ``http.extraheader`` and remote URLs with tokens; git itself reads it
    # (the sandbox leaves it readable), a command or tool that prints it asks
    (".git", "config"),
)
# fmt: on

_SEQUENCE_STARTS = frozenset(run[0] for run in SECRET_SEQUENCES)
_NAME_PATTERN = re.compile("|".join(fnmatch.translate(glob) for glob in SECRET_NAME_GLOBS))


def normalize_name(name: str) -> str:
    """How a path component is compared: lower case, trailing spaces and dots dropped (``..`` kept)."""
    stripped = name.rstrip(" .")
    return (stripped or name).lower()


def normalized_parts(path: PurePath | str) -> list[str]:
    """The components of ``path``, each as ``normalize_name`` makes it (a string is split on ``/`` by hand:
    this runs for every file a search returns)."""
    raw = path.lower().split("/") if isinstance(path, str) else [part.lower() for part in path.parts]
    return [(part.rstrip(" .") or part) if part[-1] in " ." else part for part in raw if part and part != "/"]


def is_secret_name(name: str) -> bool:
    """Whether a file called ``name`` holds secrets wherever it is."""
    normalized = normalize_name(name)
    return normalized not in NOT_SECRET_NAMES and _NAME_PATTERN.match(normalized) is not None


@dataclass(frozen=True)
class _Extra:
    """The administrator's patterns: gitignore-style (matched on the path, at any depth unless anchored) and
    absolute paths (everything under them)."""

    spec: pathspec.GitIgnoreSpec | None = None
    absolute: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()


_extra = _Extra()


def configure_extra(patterns: Iterable[str]) -> None:
    """Set the administrator's extra patterns (``sensitive_patterns_extra``); replaces any set before."""
    global _extra
    relative: list[str] = []
    absolute: list[str] = []
    for pattern in (p.strip() for p in patterns):
        if not pattern or pattern.startswith("#"):
            continue
        if pattern.startswith(("/", "~")):
            absolute.append(os.path.realpath(os.path.expanduser(pattern)).lower())
        else:
            relative.append(pattern.lower())
    spec = pathspec.GitIgnoreSpec.from_lines(relative) if relative else None
    _extra = _Extra(spec, tuple(absolute), tuple(relative))


def matches_secret_patterns(path: PurePath | str) -> bool:
    """Whether ``path`` (relative or absolute, resolved or as given) names a secret by its components."""
    parts = normalized_parts(path)
    if not parts:
        return False
    name = parts[-1]
    if name not in NOT_SECRET_NAMES and _NAME_PATTERN.match(name) is not None:
        return True
    if not SECRET_DIRS.isdisjoint(parts[:-1]):
        return True
    if not _SEQUENCE_STARTS.isdisjoint(parts) and any(_contains_run(parts, run) for run in SECRET_SEQUENCES):
        return True
    return (_extra.spec is not None or bool(_extra.absolute)) and _matches_extra(parts, str(path))


def _contains_run(parts: Sequence[str], run: tuple[str, ...]) -> bool:
    first = run[0]
    for index, part in enumerate(parts):
        if part == first and tuple(parts[index : index + len(run)]) == run:
            return True
    return False


def _matches_extra(parts: list[str], text: str) -> bool:
    extra = _extra
    if extra.spec is not None and extra.spec.match_file("/".join(parts)):
        return True
    if extra.absolute and os.path.isabs(text):
        lowered = "/" + "/".join(parts)
        return any(lowered == base or lowered.startswith(base.rstrip("/") + "/") for base in extra.absolute)
    return False


def ripgrep_excludes() -> list[str]:
    """Exclusion globs for ripgrep (``--iglob``: case-insensitive) covering the names above.

    rg is the first filter, the caller filters its results again in Python (``matches_secret_patterns``):
    a glob cannot exempt ``.env.example`` without turning into an allow-list, nor catch every trailing dot.
    """
    globs: list[str] = []
    for glob in SECRET_NAME_GLOBS:
        globs += [f"!{glob}", f"!{glob}[. ]"]
    for directory in sorted(SECRET_DIRS):
        globs += [f"!{directory}/", f"!{directory}[. ]/"]
    for run in SECRET_SEQUENCES:
        globs.append("!**/" + "/".join(run))
    globs += [f"!{pattern}" for pattern in _extra.patterns if not pattern.startswith("!")]
    return globs


def ripgrep_secret_globs() -> list[str]:
    """The same names as ``ripgrep_excludes`` as an allow-list (``rg --files`` of only the secret files),
    a little wider (any trailing dots or spaces): the caller keeps what ``matches_secret_patterns`` says."""
    globs = list(SECRET_NAME_GLOBS) + [f"{glob}[. ]*" for glob in SECRET_NAME_GLOBS]
    globs += [f"**/{directory}/**" for directory in sorted(SECRET_DIRS)]
    for run in SECRET_SEQUENCES:
        globs += ["**/" + "/".join(run), "**/" + "/".join(run) + "/**"]
    globs += [pattern for pattern in _extra.patterns if not pattern.startswith("!")]
    return globs
