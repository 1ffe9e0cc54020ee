"""Numbers tied to outputs: each number in the agent's final answer is linked to the line of a tool result
(or the user's own message) of the same turn that shows it; a number no source shows is marked.

Matching allows what a faithful writer does to a number: rounding or truncating to fewer decimals, thousands
separators, units (12.3k, 1.2 million), a fraction written as a percent and back, a sign dropped ("fell by
5%"). Small whole numbers (0-12) written without decimals, a percent or a unit are not checked: they are
counting words ("3 columns", "top 5") far more often than results, and would match everything. Fenced code
blocks are skipped: they are code, not claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..events import AnswerNumbersEvent, NumberMark, NumberSourceRef

SMALL_COUNT = 12
SOURCE_LINE_CHARS = 200
_MULTIPLIERS = {
    "k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9,
    "t": 1e12, "trillion": 1e12,
}  # fmt: skip
# A number as prose writes it: optional sign, thousands groups or plain digits, decimals, exponent; then an
# optional percent sign or multiplier word. Not part of an identifier (x2, cell_3, v1.2.3).
_ANSWER_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+−])?(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<exponent>[eE][-+]?\d+)?"
    r"(?:\s?(?P<percent>%|percent\b)|\s?(?P<unit>thousand|million|billion|trillion|bn|mn|[kKmMbBtT])\b)?"
    r"(?![\w.]\d|\.\d)"
)
_SOURCE_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?")
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)


@dataclass(frozen=True)
class AnswerNumber:
    text: str
    start: int
    end: int
    value: float
    decimals: int
    multiplier: float
    percent: bool


@dataclass(frozen=True)
class SourceNumber:
    value: float
    text: str
    percent: bool


@dataclass
class SourceText:
    """One place a number may come from: a tool result of the turn, or the user's message."""

    text: str
    call_id: str | None = None
    tool: str | None = None


def answer_numbers(answer: str) -> list[AnswerNumber]:
    """The numbers of the answer that are claims worth checking, with their positions."""
    skipped = [(m.start(), m.end()) for m in _FENCE.finditer(answer)]
    skipped += [(m.start(), m.end()) for m in _LIST_MARKER.finditer(answer)]
    found: list[AnswerNumber] = []
    for match in _ANSWER_NUMBER.finditer(answer):
        if any(start <= match.start() < end for start, end in skipped):
            continue
        digits = match.group("number").replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        exponent = match.group("exponent") or ""
        unit = (match.group("unit") or "").lower()
        percent = match.group("percent") is not None
        value = float(digits + exponent)
        if not decimals and not exponent and not unit and not percent and value <= SMALL_COUNT:
            continue
        found.append(
            AnswerNumber(
                text=match.group(0),
                start=match.start(),
                end=match.end(),
                value=value,
                decimals=decimals - int(exponent[1:]) if exponent else decimals,
                multiplier=_MULTIPLIERS.get(unit, 1.0),
                percent=percent,
            )
        )
    return found


def source_numbers(line: str) -> list[SourceNumber]:
    numbers = []
    for match in _SOURCE_NUMBER.finditer(line):
        text = match.group(0)
        if not any(c.isdigit() for c in text):
            continue
        try:
            value = float(text.replace(",", ""))
        except ValueError:
            continue
        numbers.append(SourceNumber(abs(value), text, line[match.end() : match.end() + 1] == "%"))
    return numbers


def _shows(claim: AnswerNumber, source: SourceNumber) -> bool:
    """Whether ``source`` written with the claim's precision (rounded or cut) and unit reads as the claim."""
    unit = 10.0 ** (-claim.decimals) * claim.multiplier
    wanted = claim.value * claim.multiplier
    candidates = [source.value]
    if claim.percent and not source.percent:
        candidates.append(source.value * 100)  # 0.873 → "87.3%"
    if source.percent and not claim.percent:
        candidates.append(source.value / 100)  # "87.3%" → 0.873
    slack = 1e-9 * max(1.0, wanted)
    for value in candidates:
        if wanted - unit / 2 - slack <= value < wanted + unit + slack:  # rounded, or truncated
            # A claim must carry the source's leading digits: "0" does not show 0.4 merely by rounding.
            if value == 0 or wanted != 0 or claim.decimals > 0:
                return True
    return False


def _exact_first(claim: AnswerNumber, line: str) -> int:
    return 0 if claim.text.strip("%").strip() in line else 1


def check_numbers(answer: str, sources: list[SourceText]) -> list[NumberMark]:
    """A mark for each checked number of ``answer``: its source line, or found=False."""
    lines: list[tuple[SourceText, int, str, list[SourceNumber]]] = []
    # The latest result first: a number the agent recomputed is linked to its last computation.
    for source in reversed(sources):
        for number, line in enumerate(source.text.splitlines(), start=1):
            numbers = source_numbers(line)
            if numbers:
                lines.append((source, number, line, numbers))
    marks: list[NumberMark] = []
    for claim in answer_numbers(answer):
        matching = [entry for entry in lines if any(_shows(claim, n) for n in entry[3])]
        matching.sort(key=lambda entry: _exact_first(claim, entry[2]))  # stable: latest first within a kind
        reference = None
        if matching:
            source, number, line, _ = matching[0]
            reference = NumberSourceRef(
                call_id=source.call_id,
                tool=source.tool,
                line=line.strip()[:SOURCE_LINE_CHARS],
                line_number=number,
            )
        marks.append(
            NumberMark(
                text=claim.text,
                start=claim.start,
                end=claim.end,
                found=reference is not None,
                source=reference,
            )
        )
    return marks


def turn_sources(
    events: list[dict[str, Any]], turn_id: str
) -> tuple[list[SourceText], dict[str, Any] | None]:
    """The turn's sources (its user message, each finished tool call's result) and its final answer
    (the last assistant message without tool calls), from the conversation's event log."""
    sources: list[SourceText] = []
    answer: dict[str, Any] | None = None
    in_turn = False
    for event in events:
        kind = event.get("type")
        if kind == "message.user":
            in_turn = event.get("turn_id") == turn_id
            if in_turn:
                sources = [SourceText(str(event.get("content", "")))]
                answer = None
        elif not in_turn:
            continue
        elif kind == "tool.status" and event.get("status") == "done" and event.get("content"):
            sources.append(SourceText(str(event["content"]), event.get("call_id"), event.get("name")))
        elif kind == "assistant.message" and event.get("content") and not event.get("tool_calls"):
            answer = event
    return sources, answer


def turn_number_marks(events: list[dict[str, Any]], turn_id: str) -> AnswerNumbersEvent | None:
    """The event that ties the final answer's numbers to the turn's outputs; None when nothing to check."""
    sources, answer = turn_sources(events, turn_id)
    if answer is None:
        return None
    marks = check_numbers(str(answer["content"]), sources)
    if not marks:
        return None
    return AnswerNumbersEvent(turn_id=turn_id, message_id=str(answer.get("message_id", "")), marks=marks)
