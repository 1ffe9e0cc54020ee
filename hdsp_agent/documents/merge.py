"""Putting the agent's change into text the user has changed too: a line-based 3-way merge (``merge3``).

The agent computes its edit on the text it knows (the file as it read it, plus its own earlier changes): that
is the base. The user's editor holds the base with their unsaved typing (ours); the agent's result is theirs.
Where only one side changed a region, that side wins; where both changed the same lines (or lines next to
each other, with no unchanged line between), it is a conflict and nothing is merged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import merge3

E_EDIT_CONFLICT = "E_EDIT_CONFLICTS_WITH_UNSAVED_TYPING"


@dataclass(frozen=True)
class MergeConflict:
    """Lines (1-based, inclusive, in the user's text) where the user's typing and the agent's edit overlap."""

    first_line: int
    last_line: int


def merge_texts(base: str, ours: str, theirs: str) -> str | MergeConflict:
    """``base`` with both ``ours`` and ``theirs`` changes, or the first region where they collide."""
    if ours == base:
        return theirs
    if theirs == base or ours == theirs:
        return ours
    base_lines = base.splitlines(keepends=True)
    our_lines = ours.splitlines(keepends=True)
    their_lines = theirs.splitlines(keepends=True)
    merged: list[str] = []
    for region in merge3.Merge3(base_lines, our_lines, their_lines).merge_regions():
        kind = region[0]
        if kind == "unchanged":
            merged += base_lines[region[1] : region[2]]
        elif kind in ("a", "same"):
            merged += our_lines[region[1] : region[2]]
        elif kind == "b":
            merged += their_lines[region[1] : region[2]]
        else:  # "conflict": (kind, base_start, base_end, a_start, a_end, b_start, b_end)
            conflict: tuple[Any, ...] = tuple(region)
            a_start, a_end = conflict[3], conflict[4]
            return MergeConflict(a_start + 1, max(a_start + 1, a_end))
    return "".join(merged)
