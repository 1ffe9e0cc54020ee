"""Walking a tree the way git sees it: nested ``.gitignore`` files apply to their own directory and below."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

# Never useful to list or search, whether or not a .gitignore mentions them.
ALWAYS_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True)
class _Scope:
    base: Path
    spec: pathspec.GitIgnoreSpec


class GitignoreWalker:
    """Walks ``start``; ``.gitignore`` files from ``project_root`` down to ``start`` apply too, as in git."""

    def __init__(
        self, start: Path, project_root: Path | None = None, *, respect_gitignore: bool = True
    ) -> None:
        self.start = start
        self.project_root = project_root or start
        self.respect_gitignore = respect_gitignore

    def walk(self) -> Iterator[tuple[Path, bool]]:
        """Yield ``(path, is_dir)`` depth-first in name order, skipping ignored entries and their subtrees."""
        inherited: list[_Scope] = []
        if self.start != self.project_root and self.project_root in self.start.parents:
            ancestors = [self.project_root, *reversed(self.start.relative_to(self.project_root).parents[:-1])]
            for ancestor in ancestors:
                inherited += self._load_scope(
                    ancestor if ancestor.is_absolute() else self.project_root / ancestor
                )
        yield from self._walk_dir(self.start, inherited)

    def _walk_dir(self, directory: Path, scopes: list[_Scope]) -> Iterator[tuple[Path, bool]]:
        scopes = scopes + self._load_scope(directory)
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and entry.name in ALWAYS_SKIPPED_DIRS:
                continue
            if self._ignored(path, is_dir, scopes):
                continue
            yield path, is_dir
            if is_dir:
                yield from self._walk_dir(path, scopes)

    def _load_scope(self, directory: Path) -> list[_Scope]:
        if not self.respect_gitignore:
            return []
        gitignore = directory / ".gitignore"
        try:
            lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []
        return [_Scope(directory, pathspec.GitIgnoreSpec.from_lines(lines))]

    @staticmethod
    def _ignored(path: Path, is_dir: bool, scopes: list[_Scope]) -> bool:
        ignored = False
        for scope in scopes:  # outer first: a nested .gitignore can re-include with "!"
            relative = path.relative_to(scope.base).as_posix() + ("/" if is_dir else "")
            result = scope.spec.check_file(relative)
            if result.include is not None:
                ignored = result.include
        return ignored
