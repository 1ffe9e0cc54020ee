"""Plan mode: the plan the agent wrote, saved by the server, and the approved plan sent back to it.

In plan mode the policy lets only read tools run (``permissions/policy.py``); the agent's last answer is the
plan, a Markdown checklist. The server, not a tool call, writes it to ``.hdsp/plans/<date>-<slug>.md``: plan
mode stays read-only, and the file is the user's to edit ("Edit" opens it in JupyterLab). ``.hdsp/`` is a
protected folder (``permissions/protected.py`` ``ASK_DIRS``): the agent cannot rewrite an approved plan
later without asking. "Approve plan" reads the file as it is then — the edited file is what runs.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

PLANS_DIR = Path(".hdsp") / "plans"
MAX_PLAN_CHARS = 20_000
# Appended to the user's message in plan mode: what the model is to do with this turn.
PLAN_REQUEST = (
    "(hdsp-agent) Plan mode: explore with read-only tools (files, notebooks, kernel variables), change "
    "nothing, then answer with the plan as a Markdown checklist, one step per line ('- [ ] step'). The "
    "user approves or edits it before anything runs."
)
_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[[ xX~]\]\s+(.+?)\s*$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.+?)\s*$")


class PlanFileError(ValueError):
    """A plan path outside ``.hdsp/plans/``, a missing file, or a file with no steps."""


def plan_items(markdown: str) -> list[str]:
    """The steps of a plan: its checklist lines ('- [ ] step'), else its numbered lines."""
    lines = markdown.splitlines()
    steps = [match.group(1) for line in lines if (match := _CHECKBOX.match(line))]
    if not steps:
        steps = [match.group(1) for line in lines if (match := _NUMBERED.match(line))]
    return [step[:200] for step in steps]


def slug(task: str) -> str:
    words = re.findall(r"[A-Za-z0-9가-힣]+", task.lower())
    return "-".join(words)[:48].strip("-") or "plan"


def write_plan(root: Path, task: str, markdown: str, now: float | None = None) -> str:
    """Save the plan; its path relative to ``root`` (a new name when one of the same day and task exists)."""
    folder = root / PLANS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{time.strftime('%Y-%m-%d', time.localtime(now))}-{slug(task)}"
    path = folder / f"{stem}.md"
    number = 2
    while path.exists():
        path = folder / f"{stem}-{number}.md"
        number += 1
    title = task.strip().splitlines()[0][:120] if task.strip() else "Plan"
    path.write_text(f"# {title}\n\n{markdown.strip()}\n", encoding="utf-8")
    return path.relative_to(root).as_posix()


def read_plan(root: Path, relative: str) -> str:
    """The plan file as it is now; ``PlanFileError`` for a path outside ``.hdsp/plans/`` or no steps."""
    folder = (root / PLANS_DIR).resolve()
    path = (root / relative).resolve()
    if path.parent != folder or path.suffix != ".md":
        raise PlanFileError(f"not a plan file: {relative} (plans live in {PLANS_DIR.as_posix()}/)")
    if not path.is_file():
        raise PlanFileError(f"the plan file {relative} does not exist")
    text = path.read_text(encoding="utf-8")[:MAX_PLAN_CHARS]
    if not plan_items(text):
        raise PlanFileError(f"the plan file {relative} has no steps ('- [ ] step' lines)")
    return text


def approved_request(relative: str, text: str) -> str:
    """The user message that runs an approved plan."""
    return (
        f"Carry out this approved plan ({relative}). Keep it as your `todo` list, in this order, marking "
        f"each step in_progress and done as you go:\n\n{text.strip()}"
    )
