"""Resolving a path the model gave against the root, so no tool reads or writes outside it by accident.

Symlinks are resolved, so a link inside the root that points outside counts as outside.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..tools.base import PermissionAction, PermissionKind, ToolError
from ..user_text import user_text
from .protected import is_secret_location, secret_locations
from .sensitive import matches_secret_patterns

E_PATH_OUTSIDE_ROOT = "E_PATH_OUTSIDE_ROOT"
E_PATH_INVALID = "E_PATH_INVALID"


@functools.lru_cache(maxsize=64)
def resolved_root(root: Path) -> Path:
    """The root with symlinks resolved. Cached: a server's root does not move while it runs, and resolving it
    again for every path of every call was most of the tool pipeline's overhead."""
    return root.resolve()


def resolve_in_root(
    root: Path, user_path: str, *, allow_outside: bool = False, memo: dict[str, Path] | None = None
) -> Path:
    """The absolute, symlink-resolved path for ``user_path`` (relative to ``root`` unless absolute).

    Raises ``ToolError`` when the path is malformed or lands outside the root. Read tools pass
    ``allow_outside=True``: for them, outside the root is the policy's question (ask), already answered by
    then. ``memo`` (a call's ``ToolContext.resolved_paths``) keeps the permission check's resolution, so the
    tool's ``run`` uses the very path the policy judged instead of resolving it again.
    """
    resolved = memo.get(user_path) if memo is not None else None
    if resolved is None:
        resolved = _resolve(resolved_root(root), user_path)
        if memo is not None:
            memo[user_path] = resolved
    if not allow_outside and not is_inside(resolved, resolved_root(root)):
        raise ToolError(
            E_PATH_OUTSIDE_ROOT,
            user_text("%1 is outside the working directory", repr(user_path)),
            user_text("Use a path relative to the working directory (the project root)."),
        )
    return resolved


def _resolve(root_resolved: Path, user_path: str) -> Path:
    if "\x00" in user_path:
        raise ToolError(
            E_PATH_INVALID,
            user_text("the path contains a NUL byte"),
            user_text("Send a plain relative path."),
        )
    given = os.path.expanduser(user_path) if user_path.startswith("~") else user_path
    # os.path.realpath on strings is Path.resolve without its Path objects (half the cost: this runs twice for
    # most tool calls); the stat after it is how Path.resolve notices a symlink loop, kept.
    real = os.path.realpath(os.path.join(root_resolved, given))
    try:
        os.stat(real)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ToolError(
                E_PATH_INVALID,
                user_text("%1 cannot be resolved (%2)", repr(user_path), error),
                user_text("Check for a symlink loop."),
            ) from None
    except ValueError as error:  # names the OS refuses
        raise ToolError(
            E_PATH_INVALID, user_text("%1 cannot be resolved (%2)", repr(user_path), error), ""
        ) from None
    return Path(real)


def is_inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def display_path(path: Path, root: Path) -> str:
    """The path as the model should write it back: relative to the root, with forward slashes."""
    for base in (resolved_root(root), root):
        try:
            return path.relative_to(base).as_posix() or "."
        except ValueError:
            continue
    return str(path)


def is_sensitive(path: Path | str) -> bool:
    """Whether ``path`` may hold secrets: by its name (``sensitive.py``: case-insensitive, trailing spaces and
    dots ignored) or, for an absolute path, by where it is (``protected.is_secret_location``: Jupyter's
    config, data and runtime directories, configured key files)."""
    if matches_secret_patterns(path):
        return True
    return os.path.isabs(path) and is_secret_location(path)


def is_sensitive_in(root: Path, path: str) -> bool:
    """Whether ``path`` as a search tool lists it (relative to ``root``, or absolute) may hold secrets: its
    own components by name (the root's ancestors do not count), and its absolute place."""
    return secret_filter(root)(path)


def secret_filter(root: Path) -> Callable[[str], bool]:
    """``is_sensitive_in`` for many paths under one root (a search's results, an index's files): the secret
    places are looked up once, and those inside the root compared as relative prefixes."""
    root_text = str(root)
    places = [*secret_locations()]
    if any(root_text == place or root_text.startswith(place.rstrip("/") + "/") for place in places):
        return lambda path: True  # the whole project lies in a secret place (Jupyter's runtime dir, say)
    prefix = root_text.rstrip("/") + "/"
    relative = tuple(place[len(prefix) :] for place in places if place.startswith(prefix))

    def check(path: str) -> bool:
        if matches_secret_patterns(path):
            return True
        if os.path.isabs(path):
            return is_secret_location(path)
        path = path.removeprefix("./")
        return any(path == place or path.startswith(place + "/") for place in relative)

    return check


def read_action(root: Path, user_path: str, memo: dict[str, Path] | None = None) -> PermissionAction | None:
    """What a read of ``user_path`` needs from the policy: None for an ordinary file inside the root."""
    try:
        resolved = resolve_in_root(root, user_path, allow_outside=True, memo=memo)
    except ToolError:
        return None  # the tool itself reports the malformed path
    if not is_inside(resolved, resolved_root(root)):
        return PermissionAction(PermissionKind.FILE_READ, user_path, "outside the working directory")
    # The name as given counts too: a link called ``.env`` is treated like the file it pretends to be.
    if is_sensitive(resolved) or is_sensitive(user_path):
        return PermissionAction(PermissionKind.FILE_READ_SENSITIVE, user_path, "may contain secrets")
    if has_other_names(resolved):
        return PermissionAction(PermissionKind.FILE_READ_SENSITIVE, user_path, HARD_LINK_DETAIL)
    return None


HARD_LINK_DETAIL = "has other hard links: it may be another name of a secret file or one outside the project"


def hard_link_reason(verb: str, path: str) -> str:
    return user_text(
        "%1 %2, which has other hard links (it may be another name of a secret file or one outside the "
        "project)",
        verb,
        path,
    )


def has_other_names(path: Path) -> bool:
    """A regular file with more than one hard link: its other names may be anywhere on the same filesystem
    (``~/.ssh/id_ed25519``, ``.git/config``), where the checks by name and place cannot see them. Unlike a
    symlink, a hard link cannot be resolved to "the real file", so reading one asks."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(status.st_mode) and status.st_nlink > 1


def write_action(root: Path, user_path: str, detail: str = "", *, delete: bool = False) -> PermissionAction:
    """What a write (or delete) of ``user_path`` asks the policy: the path as given, a preview as detail.

    The policy resolves the target itself (outside the root is denied, ``.git/`` and sensitive files ask), so
    tools report every write, inside the root or not.
    """
    kind = PermissionKind.FILE_DELETE if delete else PermissionKind.FILE_WRITE
    return PermissionAction(kind, user_path, detail)


@dataclass(frozen=True)
class PathFacts:
    """What the policy needs to know about one path the model gave."""

    given: str
    resolved: Path | None  # None when the path is malformed (``problem`` says why)
    inside: bool = False
    sensitive: bool = False
    git_internal: bool = False
    problem: str | None = None
    # A regular file inside the root with other hard links (``has_other_names``): reading it asks.
    hard_linked: bool = False


def inspect_path(root: Path, user_path: str, cwd: Path | None = None) -> PathFacts:
    """Resolve ``user_path`` (``~``, ``..``, symlinks, absolute) against ``cwd`` (default: the root) and
    classify it."""
    if "\x00" in user_path:
        return PathFacts(user_path, None, problem="the path contains a NUL byte")
    if not user_path.strip():
        return PathFacts(user_path, None, problem="the path is empty")
    root_resolved = resolved_root(root)
    candidate = Path(os.path.expanduser(user_path)) if user_path.startswith("~") else Path(user_path)
    if not candidate.is_absolute():
        candidate = (cwd or root_resolved) / candidate
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError, ValueError) as error:  # symlink loops, names the OS refuses
        return PathFacts(user_path, None, problem=f"the path cannot be resolved ({error})")
    inside = is_inside(resolved, root_resolved)
    sensitive = is_sensitive(resolved) or is_sensitive(user_path)
    git_internal = inside and _in_git_dir(resolved, root_resolved)
    hard_linked = inside and has_other_names(resolved)
    return PathFacts(user_path, resolved, inside, sensitive, git_internal, hard_linked=hard_linked)


def _in_git_dir(path: Path, root: Path) -> bool:
    relative = path.relative_to(root).parts
    return any(part.lower() == ".git" for part in relative)


# Directories whose loss (or whose permissions' loss) breaks the machine; their direct children count too.
# fmt: off
SYSTEM_DIRS = frozenset(
    {
        "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt",
        "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/usr", "/var",
        "/Applications", "/Library", "/System", "/Users", "/Volumes", "/private", "/cores", "/nix",
    }
)
# fmt: on


def critical_path_reason(path: Path, root: Path) -> str | None:
    """Why removing or re-permissioning ``path`` (already resolved) would be a disaster, or None.

    Critical: ``/``, any top-level directory, a system directory's direct children, the home directory and
    its ancestors, and any ancestor of the project root.
    """
    home = Path(os.path.expanduser("~")).resolve()
    text = path.as_posix()
    if path == Path(path.anchor):
        return "the filesystem root"
    if path == home:
        return "the home directory"
    if path in home.parents:
        return f"{text}, which contains the home directory"
    if len(path.parts) <= 2:
        return f"{text}, a top-level directory"
    if str(path.parent) in SYSTEM_DIRS:
        return f"{text}, a system directory"
    root_resolved = resolved_root(root)
    if path in root_resolved.parents:
        return f"{text}, which contains the project"
    return None


# Block devices and raw memory: writing to them destroys disks or the running system.
# fmt: off
_DEVICE_PREFIXES = (
    "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "dm-", "md", "loop", "sr", "nbd", "zram",
)
# fmt: on
_RAW_MEMORY = frozenset({"mem", "kmem", "port"})
# Writing here is harmless: the null sink, the process's own streams.
_HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def device_write_problem(path_text: str) -> tuple[str, bool] | None:
    """For a write target under ``/dev``: (why, destructive). None when writing there is harmless.

    ``destructive`` means a block device or raw memory (deny); other devices only need a look (ask).
    """
    if not path_text.startswith("/dev/"):
        return None
    normalized = os.path.normpath(path_text)
    if normalized in _HARMLESS_DEVICES or normalized.startswith(("/dev/fd/", "/dev/pts/")):
        return None
    name = normalized[len("/dev/") :]
    if name.startswith(("mapper/", "disk/")) or name in _RAW_MEMORY or name.startswith(_DEVICE_PREFIXES):
        return (f"writes to the device {normalized}", True)
    try:
        if stat.S_ISBLK(os.stat(normalized).st_mode):
            return (f"writes to the block device {normalized}", True)
    except OSError:
        pass
    return (f"writes to the device {normalized}", False)
