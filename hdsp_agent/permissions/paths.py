"""Resolving a path the model gave against the root, so no tool reads or writes outside it by accident.

Symlinks are resolved, so a link inside the root that points outside counts as outside.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from ..tools.base import PermissionAction, PermissionKind, ToolError

E_PATH_OUTSIDE_ROOT = "E_PATH_OUTSIDE_ROOT"
E_PATH_INVALID = "E_PATH_INVALID"


@functools.lru_cache(maxsize=64)
def resolved_root(root: Path) -> Path:
    """The root with symlinks resolved. Cached: a server's root does not move while it runs, and resolving it
    again for every path of every call was most of the tool pipeline's overhead."""
    return root.resolve()


def resolve_in_root(root: Path, user_path: str, *, allow_outside: bool = False) -> Path:
    """The absolute, symlink-resolved path for ``user_path`` (relative to ``root`` unless absolute).

    Raises ``ToolError`` when the path is malformed or lands outside the root. Read tools pass
    ``allow_outside=True``: for them, outside the root is the policy's question (ask), already answered by then.
    """
    if "\x00" in user_path:
        raise ToolError(E_PATH_INVALID, "the path contains a NUL byte", "Send a plain relative path.")
    root_resolved = resolved_root(root)
    candidate = Path(os.path.expanduser(user_path)) if user_path.startswith("~") else Path(user_path)
    if not candidate.is_absolute():
        candidate = root_resolved / candidate
    resolved = candidate.resolve()
    if not allow_outside and not is_inside(resolved, root_resolved):
        raise ToolError(
            E_PATH_OUTSIDE_ROOT,
            f"{user_path!r} is outside the working directory",
            "Use a path relative to the working directory (the project root).",
        )
    return resolved


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


# Files whose contents are secrets: reading them needs the user's explicit permission.
_SENSITIVE_NAMES = (".netrc", ".git-credentials", ".pgpass", "credentials", "credentials.json")
_SENSITIVE_SUFFIXES = (".pem", ".key", ".p12", ".pfx")
_SENSITIVE_DIRS = (".ssh", ".aws", ".gnupg", ".kube", ".docker")


def is_sensitive(path: Path) -> bool:
    name = path.name
    if name.startswith(".env") and name != ".env.example":
        return True
    if name.startswith("id_rsa") or name.startswith("id_ed25519") or name.startswith("id_ecdsa"):
        return True
    if name in _SENSITIVE_NAMES or name.endswith(_SENSITIVE_SUFFIXES):
        return True
    return any(part in _SENSITIVE_DIRS for part in path.parts[:-1])


def read_action(root: Path, user_path: str) -> PermissionAction | None:
    """What a read of ``user_path`` needs from the policy: None for an ordinary file inside the root."""
    try:
        resolved = resolve_in_root(root, user_path, allow_outside=True)
    except ToolError:
        return None  # the tool itself reports the malformed path
    if not is_inside(resolved, resolved_root(root)):
        return PermissionAction(PermissionKind.FILE_READ, user_path, "outside the working directory")
    if is_sensitive(resolved):
        return PermissionAction(PermissionKind.FILE_READ_SENSITIVE, user_path, "may contain secrets")
    return None
