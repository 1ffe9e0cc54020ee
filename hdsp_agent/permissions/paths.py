"""Resolving a path the model gave against the root, so no tool reads or writes outside it by accident.

Symlinks are resolved, so a link inside the root that points outside counts as outside.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..tools.base import ToolError

E_PATH_OUTSIDE_ROOT = "E_PATH_OUTSIDE_ROOT"
E_PATH_INVALID = "E_PATH_INVALID"


def resolve_in_root(root: Path, user_path: str) -> Path:
    """The absolute, symlink-resolved path for ``user_path`` (relative to ``root`` unless absolute).

    Raises ``ToolError`` when the path is malformed or lands outside the root.
    """
    if "\x00" in user_path:
        raise ToolError(E_PATH_INVALID, "the path contains a NUL byte", "Send a plain relative path.")
    root_resolved = root.resolve()
    candidate = Path(os.path.expanduser(user_path)) if user_path.startswith("~") else Path(user_path)
    if not candidate.is_absolute():
        candidate = root_resolved / candidate
    resolved = candidate.resolve()
    if not is_inside(resolved, root_resolved):
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
    for base in (root.resolve(), root):
        try:
            return path.relative_to(base).as_posix() or "."
        except ValueError:
            continue
    return str(path)
