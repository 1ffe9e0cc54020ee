"""History titles: a few words of what was asked and the notebook's name, not the first message verbatim."""

from __future__ import annotations

from hdsp_agent.agent.titles import conversation_title

IN_ANALYSIS = {"active_document": {"path": "work/analysis.ipynb"}}


def test_a_title_is_a_short_summary_with_the_notebooks_name() -> None:
    assert conversation_title("load data.csv and give me an overview", IN_ANALYSIS) == (
        "Load data.csv and give me an overview — analysis.ipynb"
    )
    assert conversation_title(
        "Can you please plot sales by region as a bar chart with labels", IN_ANALYSIS
    ) == ("Plot sales by region as a bar chart… — analysis.ipynb")
    assert conversation_title("hi, fix the KeyError in cell 3. It fails on region", IN_ANALYSIS) == (
        "Fix the KeyError in cell 3 — analysis.ipynb"
    )


def test_the_same_request_in_two_notebooks_reads_apart_and_no_notebook_leaves_the_summary() -> None:
    other = {"active_document": {"path": "sales.ipynb"}}
    asked = "load data.csv and give me an overview"
    assert conversation_title(asked, IN_ANALYSIS) != conversation_title(asked, other)
    assert conversation_title("what files are here?") == "What files are here"
