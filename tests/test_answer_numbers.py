"""Numbers tied to outputs: the matching rules one by one, the corpus of faithful and fabricated answers,
and the event a real turn sends after its final answer (scripted model, real executor)."""

from __future__ import annotations

import pytest

from hdsp_agent.agent.answer_numbers import SourceText, check_numbers
from tests.answer_corpus import answer_cases


def _marks(answer: str, *outputs: str) -> dict[str, bool]:
    sources = [SourceText(text, f"call-{i}", "run_cell") for i, text in enumerate(outputs)]
    return {mark.text: mark.found for mark in check_numbers(answer, sources)}


@pytest.mark.parametrize(
    ("answer", "output"),
    [
        ("Accuracy is 87.3%.", "accuracy: 0.8734"),
        ("Accuracy is 0.87.", "accuracy: 87.34%"),
        ("There are 12,345 rows.", "RangeIndex: 12345 entries"),
        ("Revenue totals 1.2M.", "total 1234567.89"),
        ("Revenue totals 1.2 million.", "total 1234567.89"),
        ("The mean is 3.14.", "mean    3.14159"),
        ("The mean is 3.141.", "mean    3.14159"),  # truncated rather than rounded
        ("Sales fell by 5.2%.", "change: -0.052"),
        ("It took 45.3k steps", "steps=45310"),
    ],
)
def test_a_restated_number_is_linked_to_its_output(answer: str, output: str) -> None:
    assert all(_marks(answer, output).values()), _marks(answer, output)


def test_a_number_in_no_output_is_marked_and_small_counts_are_not_checked() -> None:
    marks = _marks("The 3 columns have a mean of 41.7 and the top 5 rows sum to 990.", "mean 42.13\nsum 990")
    assert marks == {"41.7": False, "990": True}


def test_numbers_in_code_blocks_and_list_markers_are_not_claims() -> None:
    answer = "Steps:\n1. load\n2. fit\n```python\nmodel.fit(X, epochs=250)\n```\nDone with 250 epochs."
    assert _marks(answer, "epochs: 250") == {"250": True}


def test_the_link_names_the_call_and_the_output_line() -> None:
    sources = [
        SourceText("what is the median?", None, None),
        SourceText("rows: 500\nmedian: 17.25", "call-a", "run_cell"),
    ]
    (mark,) = check_numbers("The median is 17.25 over the rows.", sources)
    assert mark.found and mark.source is not None
    assert (mark.source.call_id, mark.source.tool, mark.source.line, mark.source.line_number) == (
        "call-a", "run_cell", "median: 17.25", 2,
    )


def test_the_corpus_fabricated_numbers_are_marked_and_faithful_ones_are_not() -> None:
    cases = answer_cases()
    fabricated = [c for c in cases if c.fabricated]
    faithful = [c for c in cases if not c.fabricated]
    assert len(fabricated) >= 50 and len(faithful) >= 50
    marked = 0
    for case in fabricated:
        marks = {m.text.strip(): m.found for m in check_numbers(case.answer, case.sources)}
        marked += marks.get(case.fabricated.strip(), True) is False
    faithful_numbers = [m for c in faithful for m in check_numbers(c.answer, c.sources)]
    wrongly = [m.text for m in faithful_numbers if not m.found]
    assert marked >= 48, marked
    assert len(faithful_numbers) >= 150
    assert len(wrongly) <= 0.02 * len(faithful_numbers), wrongly
