"""Whether a cell's replayed outputs say the same as its saved ones.

Outputs are reduced to what a reader compares: stdout text, each result's plain text or HTML table, each
picture, the error's name. Memory addresses, timestamps and durations are masked before comparing; numbers
are compared with a relative tolerance, so float noise in the last digits is not a difference.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from .image_hash import same_picture

RELATIVE_TOLERANCE = 1e-6
ABSOLUTE_TOLERANCE = 1e-9
_MASKS = [
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0x…"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?"), "<timestamp>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b"), "<time>"),
    (re.compile(r"\b(CPU times|Wall time|Elapsed|took)\b[^\n]*", re.IGNORECASE), "<duration>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|µs|us|ns)\b"), "<duration>"),
    (re.compile(r"\bat 0x…"), "at 0x…"),
]
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_PICTURE_TYPES = ("image/png",)


@dataclass(frozen=True)
class OutputDifference:
    """The first thing that differs, in words, with both sides shortened for the report."""

    what: str
    saved: str
    replayed: str


def mask(text: str) -> str:
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def comparable(outputs: list[Any]) -> list[tuple[str, str]]:
    """The outputs as (kind, value) pairs: stdout text joined, results by their richest comparable form."""
    parts: list[tuple[str, str]] = []
    stdout = "".join(
        _text(o.get("text"))
        for o in outputs
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
    )
    if stdout.strip():
        parts.append(("text", stdout))
    for output in outputs:
        kind = output.get("output_type")
        if kind in ("execute_result", "display_data"):
            bundle = output.get("data", {})
            picture = next((t for t in _PICTURE_TYPES if t in bundle), None)
            if picture is not None:
                parts.append(("image", _text(bundle[picture])))
            elif "text/html" in bundle:
                parts.append(("table", _text(bundle["text/html"])))
            elif "text/plain" in bundle:
                parts.append(("text", _text(bundle["text/plain"])))
        elif kind == "error":
            parts.append(("error", str(output.get("ename", ""))))
    return parts


def _numbers_close(saved: str, replayed: str) -> bool:
    saved_numbers, replayed_numbers = _NUMBER.findall(saved), _NUMBER.findall(replayed)
    if _NUMBER.sub("#", saved) != _NUMBER.sub("#", replayed) or len(saved_numbers) != len(replayed_numbers):
        return False
    return all(
        math.isclose(float(a), float(b), rel_tol=RELATIVE_TOLERANCE, abs_tol=ABSOLUTE_TOLERANCE)
        for a, b in zip(saved_numbers, replayed_numbers, strict=True)
    )


def same_text(saved: str, replayed: str) -> bool:
    saved, replayed = mask(saved).strip(), mask(replayed).strip()
    return saved == replayed or _numbers_close(saved, replayed)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compare_outputs(saved: list[Any], replayed: list[Any]) -> OutputDifference | None:
    """None when the outputs agree; else the first difference."""
    saved_parts, replayed_parts = comparable(saved), comparable(replayed)
    # The shorter list's length first; a missing or extra output is reported after.
    for (saved_kind, saved_value), (replayed_kind, replayed_value) in zip(  # noqa: B905
        saved_parts, replayed_parts
    ):
        if saved_kind != replayed_kind:
            return OutputDifference(
                f"{saved_kind} became {replayed_kind}", _short(saved_value), _short(replayed_value)
            )
        if saved_kind == "image":
            if not same_picture(saved_value, replayed_value):
                return OutputDifference("picture", "(saved picture)", "(a different picture)")
        elif not same_text(saved_value, replayed_value):
            return OutputDifference(saved_kind, _short(saved_value), _short(replayed_value))
    if len(saved_parts) != len(replayed_parts):
        longer = saved_parts if len(saved_parts) > len(replayed_parts) else replayed_parts
        extra = longer[min(len(saved_parts), len(replayed_parts))]
        if len(saved_parts) > len(replayed_parts):
            return OutputDifference(f"missing {extra[0]}", _short(extra[1]), "(nothing)")
        return OutputDifference(f"extra {extra[0]}", "(nothing)", _short(extra[1]))
    return None
