"""Why a cell's replayed outputs differ from its saved ones, named from the cells' sources and counts.

For each differing cell the first cause the evidence supports is named, in this order: the cell's error names
a variable (or the cell uses one) that is defined only by a later cell, or redefined by a later cell that ran
before it (execution counts), or by no cell at all; a file it reads that a later cell writes; unseeded
randomness in it or in a cell it depends on; the environment. A difference that follows from an earlier
differing cell it depends on is said to follow from it. What is left is a cell whose saved outputs its source
does not produce: it was edited after it ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .cell_facts import CellFacts

Cause = Literal[
    "used_before_defined",
    "deleted_or_edited_cell",
    "out_of_order",
    "file_read_before_written",
    "unseeded_random",
    "environment",
    "follows_from",
]
CAUSE_TITLES: dict[str, str] = {
    "used_before_defined": "a name used before the cell that defines it",
    "deleted_or_edited_cell": "a variable from a deleted or edited cell",
    "out_of_order": "out-of-order execution",
    "file_read_before_written": "a file read before the cell that writes it",
    "unseeded_random": "unseeded randomness",
    "environment": "an environment dependence",
    "follows_from": "follows from an earlier difference",
}
_NAME_ERROR = re.compile(r"name '([^']+)' is not defined")


@dataclass(frozen=True)
class Attribution:
    cause: Cause
    explanation: str
    # The other cell the cause points at (the one that defines/writes/randomizes), if any.
    related_index: int | None = None


def _definers(name: str, facts: list[CellFacts]) -> list[CellFacts]:
    return [cell for cell in facts if name in cell.defines]


def _name_cause(cell: CellFacts, name: str, facts: list[CellFacts]) -> Attribution | None:
    earlier = [c for c in _definers(name, facts) if c.index < cell.index]
    later = [c for c in _definers(name, facts) if c.index > cell.index]
    if not earlier and later:
        return Attribution(
            "used_before_defined",
            f"`{name}` is used here but first defined by a later cell (index {later[0].index}); "
            "it only worked because that cell had run before",
            later[0].index,
        )
    if not earlier and not later:
        return Attribution(
            "deleted_or_edited_cell",
            f"`{name}` is defined by no cell of the notebook: it came from a cell that was deleted or edited",
        )
    count = cell.execution_count
    if earlier and later and count is not None:
        ran_before = [c for c in later if c.execution_count is not None and c.execution_count < count]
        last_earlier = max((c.execution_count or 0) for c in earlier)
        ran_between = [
            c for c in ran_before if c.execution_count is not None and c.execution_count > last_earlier
        ]
        if ran_between:
            other = ran_between[-1]
            return Attribution(
                "out_of_order",
                f"`{name}` was redefined by a later cell (index {other.index}, execution count "
                f"{other.execution_count}) that ran before this one (count {count})",
                other.index,
            )
    return None


def _random_source(cell: CellFacts, facts: list[CellFacts]) -> CellFacts | None:
    seeded_before = any(c.seeds for c in facts if c.index < cell.index)
    if cell.random_calls and not seeded_before and not cell.seeds:
        return cell
    return None


def attribute(
    cell: CellFacts,
    facts: list[CellFacts],
    replay_error: str | None,
    differing: set[int],
) -> Attribution:
    """The cause of ``cell``'s difference; ``differing``: indexes of earlier cells that differed too."""
    named = _NAME_ERROR.search(replay_error or "")
    candidates = [named.group(1)] if named else sorted(cell.uses)
    for name in candidates:
        found = _name_cause(cell, name, facts)
        if found is not None and (
            named or found.cause != "deleted_or_edited_cell" or _unresolved(name, facts)
        ):
            return found
    for path in sorted(cell.reads_files):
        writers = [c for c in facts if path in c.writes_files]
        if writers and all(w.index > cell.index for w in writers):
            return Attribution(
                "file_read_before_written",
                f"reads `{path}`, which only a later cell (index {writers[0].index}) writes",
                writers[0].index,
            )
    upstream = _upstream(cell, facts)
    for source in [cell, *upstream]:
        random_cell = _random_source(source, facts)
        if random_cell is not None:
            where = (
                "here"
                if random_cell is cell
                else f"in the cell at index {random_cell.index}, which this cell uses"
            )
            return Attribution(
                "unseeded_random",
                f"`{random_cell.random_calls[0]}` is called {where} with no seed set before it",
                None if random_cell is cell else random_cell.index,
            )
    for source in [cell, *upstream]:
        if source.environment:
            where = "here" if source is cell else f"in the cell at index {source.index}, which this cell uses"
            return Attribution(
                "environment",
                f"depends on the environment (`{source.environment[0]}`) {where}",
                None if source is cell else source.index,
            )
    for source in upstream:
        if source.index in differing:
            return Attribution(
                "follows_from",
                f"uses a value from the cell at index {source.index}, which differed",
                source.index,
            )
    if upstream:
        names = ", ".join(f"`{name}`" for name in sorted(upstream[0].defines & cell.uses)) or "its values"
        return Attribution(
            "deleted_or_edited_cell",
            "the saved outputs are not what the sources produce: this cell, or the cell at index "
            f"{upstream[0].index} that gives it {names}, was edited after it ran",
            upstream[0].index,
        )
    return Attribution(
        "deleted_or_edited_cell",
        "the saved outputs are not what this cell's source produces: it was edited after it ran",
    )


def _unresolved(name: str, facts: list[CellFacts]) -> bool:
    return not _definers(name, facts)


def _upstream(cell: CellFacts, facts: list[CellFacts]) -> list[CellFacts]:
    """Earlier cells whose names this cell uses, nearest first, transitively."""
    wanted = set(cell.uses)
    found: list[CellFacts] = []
    for other in reversed([c for c in facts if c.index < cell.index]):
        provided = other.defines & wanted
        if provided:
            found.append(other)
            wanted -= provided
            wanted |= other.uses
    return found
