"""iopub messages → nbformat outputs → what the model reads (``hdsp_agent.tools.jupyter.outputs``)."""

from __future__ import annotations

import base64
from typing import Any

import nbformat
from images import png_bytes

from hdsp_agent.tools.jupyter.outputs import (
    OutputCollector,
    collapse_overwrites,
    image_dimensions,
    output_summary,
    render_outputs,
)
from hdsp_agent.tools.redaction import REDACTED, SecretRedactor


def message(msg_type: str, **content: Any) -> dict[str, Any]:
    """An iopub message as jupyter_client delivers it."""
    return {
        "header": {"msg_type": msg_type, "msg_id": "m"},
        "msg_type": msg_type,
        "parent_header": {"msg_id": "request"},
        "metadata": {},
        "content": content,
    }


def collect(*messages: dict[str, Any]) -> OutputCollector:
    collector = OutputCollector()
    for msg in messages:
        collector.handle(msg)
    return collector


def test_consecutive_streams_of_one_name_merge_and_names_stay_apart() -> None:
    collector = collect(
        message("stream", name="stdout", text="a\n"),
        message("stream", name="stdout", text="b\n"),
        message("stream", name="stderr", text="warn\n"),
        message("stream", name="stdout", text="c\n"),
    )
    assert [(o.name, o.text) for o in collector.outputs] == [
        ("stdout", "a\nb\n"),
        ("stderr", "warn\n"),
        ("stdout", "c\n"),
    ]
    for output in collector.outputs:
        nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[output])]))


def test_carriage_returns_keep_the_last_state_of_a_progress_line_across_chunks() -> None:
    collector = collect(
        message("stream", name="stdout", text="progress 10%\r"),
        message("stream", name="stdout", text="progress 50%\r"),
        message("stream", name="stdout", text="progress 100%\ndone\n"),
    )
    assert collector.outputs[0].text == "progress 100%\ndone\n"
    assert collapse_overwrites("abcdef\rXY\n") == "XYcdef\n"
    assert collapse_overwrites("line\r\n") == "line\n"


def test_execution_count_comes_from_execute_input_and_results_are_kept() -> None:
    collector = collect(
        message("status", execution_state="busy"),
        message("execute_input", code="1+1", execution_count=7),
        message("execute_result", data={"text/plain": "2"}, metadata={}, execution_count=7),
    )
    assert collector.started
    assert collector.execution_count == 7
    assert collector.outputs[0].output_type == "execute_result"
    assert collector.outputs[0].data == {"text/plain": "2"}


def test_update_display_data_rewrites_the_output_with_that_display_id() -> None:
    collector = collect(
        message("display_data", data={"text/plain": "step 1"}, metadata={}, transient={"display_id": "bar"}),
        message("stream", name="stdout", text="between\n"),
        message(
            "update_display_data", data={"text/plain": "step 2"}, metadata={}, transient={"display_id": "bar"}
        ),
        message(
            "update_display_data", data={"text/plain": "other"}, metadata={}, transient={"display_id": "nope"}
        ),
    )
    assert [o.output_type for o in collector.outputs] == ["display_data", "stream"]
    assert collector.outputs[0].data == {"text/plain": "step 2"}
    assert "transient" not in collector.outputs[0]


def test_clear_output_clears_now_or_with_wait_when_the_next_output_arrives() -> None:
    collector = collect(message("stream", name="stdout", text="old\n"), message("clear_output", wait=False))
    assert collector.outputs == []
    waiting = collect(message("stream", name="stdout", text="frame 1\n"), message("clear_output", wait=True))
    assert [o.text for o in waiting.outputs] == ["frame 1\n"]
    waiting.handle(message("stream", name="stdout", text="frame 2\n"))
    assert [o.text for o in waiting.outputs] == ["frame 2\n"]


def test_model_text_strips_ansi_and_shows_errors_as_name_value_and_traceback() -> None:
    error = nbformat.v4.new_output(
        "error",
        ename="ZeroDivisionError",
        evalue="division by zero",
        traceback=[
            "\x1b[31m---------\x1b[0m",
            "Cell \x1b[32mIn[3]\x1b[0m, line 1",
            "\x1b[31mZeroDivisionError\x1b[0m: division by zero",
        ],
    )
    stream = nbformat.v4.new_output("stream", name="stdout", text="\x1b[1;32mgreen\x1b[0m text\n")
    text = render_outputs([stream, error], vision=False, paging_hint="page").text
    assert "\x1b" not in text
    assert text.splitlines() == [
        "green text",
        "ZeroDivisionError: division by zero",
        "---------",
        "Cell In[3], line 1",
        "ZeroDivisionError: division by zero",
    ]


def test_html_is_reduced_to_text_unless_a_real_text_plain_exists() -> None:
    html_only = nbformat.v4.new_output(
        "display_data",
        data={
            "text/html": "<h2>Report</h2><p>rows: <b>3</b></p>",
            "text/plain": "<IPython.core.display.HTML object>",
        },
    )
    frame = nbformat.v4.new_output(
        "execute_result",
        data={"text/html": "<table><tr><td>1</td></tr></table>", "text/plain": "   a\n0  1"},
        execution_count=1,
    )
    text = render_outputs([html_only, frame], vision=False, paging_hint="page").text
    assert "## Report" in text and "rows: **3**" in text
    assert "<" not in text.replace("<IPython", "")
    assert "   a\n0  1" in text


def test_png_is_a_placeholder_with_size_without_vision_and_an_image_part_with_it() -> None:
    """Either way the image is kept for the tool card; only a vision model is sent it (agent/loop.py)."""
    png = png_bytes(3, 2)
    encoded = base64.b64encode(png).decode()
    figure = nbformat.v4.new_output(
        "display_data", data={"image/png": encoded, "text/plain": "<Figure size 3x2 with 1 Axes>"}
    )
    assert image_dimensions(png) == (3, 2)
    blind = render_outputs([figure], vision=False, paging_hint="page")
    assert [(image.mime_type, image.data, image.width, image.height) for image in blind.images] == [
        ("image/png", encoded, 3, 2)
    ]
    assert blind.text == (
        "<Figure size 3x2 with 1 Axes>\n"
        f"[image/png 3×2 px, {len(png)} B: not shown, this model does not read images]"
    )
    seeing = render_outputs([figure], vision=True, paging_hint="page")
    assert seeing.text.endswith("attached as image 1]")
    assert [(image.mime_type, image.data, image.width, image.height) for image in seeing.images] == [
        ("image/png", encoded, 3, 2)
    ]


def test_long_outputs_keep_head_and_tail_within_per_output_and_per_call_budgets() -> None:
    long_text = "".join(f"line {n}\n" for n in range(5000))
    stream = nbformat.v4.new_output("stream", name="stdout", text=long_text)
    one = render_outputs([stream], vision=False, paging_hint="use get_cell_output", per_output_chars=2000)
    assert len(one.text) <= 2000
    assert one.text.startswith("line 0\n") and one.text.rstrip().endswith("line 4999")
    assert "use get_cell_output" in one.text
    assert one.total_chars == len(one.text)
    many = render_outputs(
        [stream] * 5, vision=False, paging_hint="page", per_output_chars=2000, total_chars=5000
    )
    assert len(many.text) <= 5000
    assert many.total_chars > 5000
    unlimited = render_outputs(
        [stream], vision=False, paging_hint="", per_output_chars=None, total_chars=None
    )
    assert unlimited.text == long_text.rstrip("\n")


def test_summary_prefers_the_error_and_counts_further_outputs() -> None:
    printed = nbformat.v4.new_output("stream", name="stdout", text="first line\nsecond\n")
    result = nbformat.v4.new_output("execute_result", data={"text/plain": "42"}, execution_count=1)
    error = nbformat.v4.new_output("error", ename="KeyError", evalue="'x'", traceback=[])
    assert output_summary([printed, result]) == "first line (+1 more)"
    assert output_summary([printed, error]) == "error: KeyError: 'x'"
    assert output_summary([]) == ""


def test_an_overview_line_redacts_a_secret_its_cut_splits_and_reads_only_a_bound_of_a_huge_output() -> None:
    secret = "sk-proj-Zq8vW3nR5tY7uI9oP1aS4dF6gH8jK0lM"
    redactor = SecretRedactor(lambda: [secret])
    seen: list[int] = []

    def redact(text: str) -> str:
        seen.append(len(text))
        return redactor.redact(text)

    # The secret starts before the 100th character and ends after it: what is kept holds none of it.
    line = "k" * 90 + secret + " tail"
    log = nbformat.v4.new_output("stream", name="stdout", text=line + "\n" + "more output\n" * 1_000_000)
    summary = output_summary([log], redact=redact)
    assert summary == "k" * 90 + REDACTED[:10]
    # A piece of the secret shorter than the redactor's pieces would be left if the cut came first.
    assert secret[:10] not in summary and "sk-proj" not in summary
    # The 12 MB log is not redacted whole: only a window a little wider than the line kept.
    assert seen and max(seen) <= 400

    # The same for an error's message, and for a credential in a URL.
    error = nbformat.v4.new_output("error", ename="ValueError", evalue="x" * 80 + secret, traceback=[])
    assert "sk-proj" not in output_summary([error], redact=redact)
    url = nbformat.v4.new_output(
        "stream", name="stdout", text="y" * 70 + "https://me:hunter2hunter2@example.com/x\n"
    )
    assert "hunter" not in output_summary([url], redact=redact)
