"""Numbers tied to outputs: the matching rules one by one, the corpus of faithful and fabricated answers,
and the event a real turn sends after its final answer (scripted model, real executor)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted_model import ScriptedModel, text, tool_calls
from test_cli_run import run_cli

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
        "call-a",
        "run_cell",
        "median: 17.25",
        2,
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


def test_run_json_sends_the_marks_after_the_final_answer(tmp_path: Path) -> None:
    (tmp_path / "summary.txt").write_text("rows: 48213\nmean_price: 312.774\nshare_returned: 0.0712\n")
    answer = "The file has 48,213 rows, a mean price of 312.8 and 7.1% returns; the median is 290.5."
    script = [tool_calls(("read_file", '{"filepath": "summary.txt"}')), text(answer)]
    with ScriptedModel(script * 2) as model:
        done = run_cli(
            "-p", "summarize", "--root", str(tmp_path), "--json", "--model", "m", "--base-url", model.base_url
        )
        text_run = run_cli(
            "-p", "again", "--root", str(tmp_path), "--model", "m", "--base-url", model.base_url
        )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.index("answer.numbers") == kinds.index("turn.end") - 1
    (numbers,) = [e for e in events if e["type"] == "answer.numbers"]
    (final,) = [e for e in events if e["type"] == "assistant.message" and not e["tool_calls"]]
    assert numbers["message_id"] == final["message_id"]
    read_call = next(e["call_id"] for e in events if e["type"] == "tool.status" and e["name"] == "read_file")
    marks = {m["text"]: m for m in numbers["marks"]}
    assert {text: m["found"] for text, m in marks.items()} == {
        "48,213": True,
        "312.8": True,
        "7.1%": True,
        "290.5": False,
    }
    source = marks["312.8"]["source"]
    assert (source["call_id"], source["tool"]) == (read_call, "read_file")
    assert source["line"].endswith("mean_price: 312.774"), "the line as the tool result shows it"
    assert answer[marks["290.5"]["start"] : marks["290.5"]["end"]] == "290.5"
    assert "[not found in any output: 290.5]" in text_run.stderr
