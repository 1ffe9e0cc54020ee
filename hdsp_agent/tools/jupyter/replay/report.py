"""A replay's verdict per cell and its findings, as the card and the model read them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .causes import CAUSE_TITLES, attribute
from .cell_facts import notebook_facts
from .compare import OutputDifference, compare_outputs
from .runner import ReplayRun

CellVerdict = Literal["same", "different", "not_run_before", "not_replayed"]


@dataclass
class Finding:
    """One cell whose replay differs, and why."""

    index: int
    cell_id: str
    cause: str
    cause_title: str
    explanation: str
    what: str
    saved: str
    replayed: str
    related_index: int | None = None
    related_cell_id: str | None = None


@dataclass
class ReplayReport:
    path: str
    kernel_name: str
    seconds: float
    cells_compared: int
    cells_same: int
    stopped: str | None
    findings: list[Finding] = field(default_factory=list)
    verdicts: dict[int, CellVerdict] = field(default_factory=dict)

    @property
    def reproducible(self) -> bool:
        return not self.findings and self.stopped is None

    def as_dict(self) -> dict[str, Any]:
        described = asdict(self)
        described["verdicts"] = {str(index): verdict for index, verdict in self.verdicts.items()}
        described["reproducible"] = self.reproducible
        return described

    def compact_text(self) -> str:
        """What the model reads: one line per finding, the cell by index and id."""
        head = (
            f"Replayed {self.path} in a fresh {self.kernel_name} kernel ({self.seconds:.1f} s): "
            f"{self.cells_same} of {self.cells_compared} run cells reproduce their saved outputs."
        )
        lines = [head]
        if self.stopped:
            lines.append(f"The replay stopped early ({self.stopped}); later cells were not compared.")
        if not self.findings:
            lines.append("No differences." if not self.stopped else "No differences before it stopped.")
        for finding in self.findings:
            lines.append(
                f"- cell index {finding.index} (id {finding.cell_id}): {finding.cause_title} — "
                f"{finding.explanation}. {finding.what}: saved {finding.saved!r}, replay {finding.replayed!r}"
            )
        return "\n".join(lines)


def _ran_before(cell: Any) -> bool:
    return cell.get("execution_count") is not None or bool(cell.get("outputs"))


def build_report(path: str, notebook: Any, run: ReplayRun) -> ReplayReport:
    """Compare each run cell's saved outputs with its replay and name the cause of each difference."""
    cells = list(notebook.get("cells", []))
    facts = notebook_facts(cells)
    facts_by_index = {f.index: f for f in facts}
    report = ReplayReport(path, run.kernel_name, round(run.seconds, 2), 0, 0, run.stopped)
    differing: set[int] = set()
    for fact in facts:
        cell = cells[fact.index]
        replayed = run.cells.get(fact.index)
        if not _ran_before(cell):
            report.verdicts[fact.index] = "not_run_before"
            continue
        if replayed is None:
            report.verdicts[fact.index] = "not_replayed"
            continue
        report.cells_compared += 1
        difference: OutputDifference | None = compare_outputs(list(cell.get("outputs", [])), replayed.outputs)
        if difference is None:
            report.cells_same += 1
            report.verdicts[fact.index] = "same"
            continue
        report.verdicts[fact.index] = "different"
        attribution = attribute(fact, facts, replayed.error, differing)
        differing.add(fact.index)
        related = (
            facts_by_index.get(attribution.related_index) if attribution.related_index is not None else None
        )
        report.findings.append(
            Finding(
                index=fact.index,
                cell_id=fact.cell_id,
                cause=attribution.cause,
                cause_title=CAUSE_TITLES[attribution.cause],
                explanation=attribution.explanation,
                what=difference.what if replayed.error is None else "error",
                saved=difference.saved,
                replayed=replayed.error or difference.replayed,
                related_index=attribution.related_index,
                related_cell_id=related.cell_id if related is not None else None,
            )
        )
    return report
