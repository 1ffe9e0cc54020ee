"""What an analysis found about one call or one part of a shell command, and how findings combine.

A finding is a decision plus the human-readable reason the approval dialog shows. Its weight says what may
lift it later, in the policy:

- a *soft* finding is a default (a tool's level, what kind of command ``pip install`` is): any matching rule
  replaces it;
- a *firm* ``ask`` (a sensitive file, a path outside the root, a command name computed at run time) stands
  against broad allow rules: only a rule naming exactly this subject, or a grant for this session, lifts it;
- a *protected* ``ask`` (a write to a protected path: ``.hdsp/``, ``.git/hooks``, ``.bashrc``, a secret file)
  stands against every rule, every mode and a grant for the session: only the user's approval of that very
  call lifts it;
- a *firm* ``deny`` (``rm -rf ~``, a write outside the root) stands against everything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # decision.py imports the policy defaults, which import this module
    from .decision import DecisionKind

_RANK: dict[DecisionKind, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class Finding:
    decision: DecisionKind
    reason: str
    firm: bool = False
    # A soft ``ask`` for something that only changes files inside the root: accept-edits mode lifts it.
    edit: bool = False
    # An ``ask`` nothing but the user's approval of this call lifts (``protected.py``).
    protected: bool = False
    # A soft ``ask`` to run a cell of the notebook in view: the run-in-view mode lifts it (``modes.py``).
    in_view: bool = False


def allow(reason: str) -> Finding:
    return Finding("allow", reason)


def ask(reason: str, *, edit: bool = False) -> Finding:
    """A soft ask: the default for this kind of call, which a matching allow rule lifts."""
    return Finding("ask", reason, edit=edit)


def caution(reason: str) -> Finding:
    """A firm ask: a risk in the arguments that broad allow rules do not lift."""
    return Finding("ask", reason, firm=True)


def protect(reason: str) -> Finding:
    """A protected ask: no rule, mode or session grant lifts it (a write to a protected path)."""
    return Finding("ask", reason, firm=True, protected=True)


def deny(reason: str) -> Finding:
    """A firm deny: nothing the user or the model does can make this run."""
    return Finding("deny", reason, firm=True)


def rank(decision: DecisionKind) -> int:
    return _RANK[decision]


def strictest(decisions: Iterable[DecisionKind], default: DecisionKind = "allow") -> DecisionKind:
    """The strictest of ``decisions`` (deny > ask > allow); ``default`` when there are none."""
    result = default
    first = True
    for decision in decisions:
        if first or _RANK[decision] > _RANK[result]:
            result = decision
            first = False
    return result


def verdict(findings: Iterable[Finding]) -> DecisionKind:
    """The decision a list of findings leads to on its own, with no rule applied."""
    return strictest((finding.decision for finding in findings), default="ask")
