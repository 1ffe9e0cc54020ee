"""Answers for the numbers check: tool outputs as a data session prints them, faithful answers that restate
their numbers the way people do (rounded, as a percent, with separators or units), and the same answers with
one number fabricated."""

from __future__ import annotations

import random
from dataclasses import dataclass

from hdsp_agent.agent.answer_numbers import SourceText


@dataclass
class AnswerCase:
    sources: list[SourceText]
    answer: str
    # The fabricated number's text in the answer (None: a faithful answer).
    fabricated: str | None


def _describe(rng: random.Random, column: str) -> tuple[str, dict[str, float]]:
    count = rng.randint(200, 90_000)
    mean = rng.uniform(10, 5000)
    std = mean * rng.uniform(0.05, 0.6)
    low, high = mean - 2.1 * std, mean + 2.7 * std
    values = {"count": count, "mean": mean, "std": std, "min": low, "max": high}
    lines = [f"       {column}"] + [f"{name:<6} {value:12.6f}" for name, value in values.items()]
    return "\n".join(lines), values


def _metrics(rng: random.Random) -> tuple[str, dict[str, float]]:
    values = {
        "accuracy": rng.uniform(0.6, 0.99),
        "precision": rng.uniform(0.5, 0.99),
        "recall": rng.uniform(0.4, 0.99),
        "auc": rng.uniform(0.6, 0.99),
    }
    return "\n".join(f"{name}: {value:.4f}" for name, value in values.items()), values


def _far(value: float, others: list[float], rng: random.Random) -> float:
    """A plausible wrong value: 8-35% off the true one and at least 3% away from every number shown."""
    while True:
        candidate = value * (1 + rng.choice([-1, 1]) * rng.uniform(0.08, 0.35))
        if all(abs(candidate - other) > 0.03 * max(abs(other), 1e-9) for other in others):
            return candidate


def _restate(rng: random.Random, name: str, value: float, kind: str) -> str:
    """How a writer would put ``value`` in a sentence."""
    if kind == "fraction":
        style = rng.choice(["percent1", "percent0", "fraction2", "fraction3"])
        if style == "percent1":
            return f"{value * 100:.1f}%"
        if style == "percent0":
            return f"{value * 100:.0f}%"
        return f"{value:.{2 if style == 'fraction2' else 3}f}"
    if kind == "count":
        style = rng.choice(["comma", "plain", "k"])
        if style == "comma":
            return f"{int(value):,}"
        if style == "k" and value >= 10_000:
            return f"{value / 1000:.1f}k"
        return f"{int(value)}"
    style = rng.choice(["1", "2", "0"])
    return f"{value:,.{style}f}" if value >= 1000 else f"{value:.{style}f}"


def answer_cases(count: int = 60, seed: int = 27) -> list[AnswerCase]:
    """``count`` pairs: a faithful answer and, for the same outputs, one with a fabricated number."""
    rng = random.Random(seed)
    cases: list[AnswerCase] = []
    columns = ["revenue", "age", "latency_ms", "price", "duration", "income", "weight", "score"]
    for k in range(count):
        column = columns[k % len(columns)]
        described, stats = _describe(rng, column)
        metrics, scores = _metrics(rng)
        sources = [
            SourceText("Let's look at the data.", None, None),
            SourceText(
                f"Cell c{k} finished, execution count {k + 2} (0.4 s).\n--- output ---\n{described}",
                f"call-{k}-1",
                "run_cell",
            ),
            SourceText(
                f"The code finished (1.2 s).\n--- output ---\n{metrics}", f"call-{k}-2", "execute_code"
            ),
        ]
        shown = [*stats.values(), *scores.values(), *(v * 100 for v in scores.values())]
        chosen = rng.sample(["count", "mean", "std", "max"], 2)
        metric = rng.choice(list(scores))
        kinds = {"count": "count", "mean": "value", "std": "value", "max": "value"}
        parts = {name: _restate(rng, name, stats[name], kinds[name]) for name in chosen}
        metric_text = _restate(rng, metric, scores[metric], "fraction")

        def sentence(
            parts: dict[str, str],
            metric_text: str,
            chosen: list[str] = chosen,
            column: str = column,
            metric: str = metric,
        ) -> str:
            first, second = chosen
            return (
                f"The `{column}` column has a {first} of {parts[first]} and a {second} of {parts[second]}. "
                f"The model's {metric} on the held-out set is {metric_text}, which is solid for 3 features."
            )

        cases.append(AnswerCase(sources, sentence(parts, metric_text), None))
        fabricate = rng.choice([*chosen, "metric"])
        if fabricate == "metric":
            wrong = _restate(rng, metric, min(_far(scores[metric], shown, rng), 0.999), "fraction")
            cases.append(AnswerCase(sources, sentence(parts, wrong), wrong))
        else:
            wrong = _restate(rng, fabricate, _far(stats[fabricate], shown, rng), kinds[fabricate])
            cases.append(AnswerCase(sources, sentence({**parts, fabricate: wrong}, metric_text), wrong))
    return cases
