"""The edit matcher's case table (tests/edit_cases.py): every case through ``apply_edit``, the marked ones
through the edit tools on real files as well; no edit leaves a block mixing tabs and spaces, and every
Python file still compiles."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import nbformat
import pytest
from edit_cases import CASES, EditCase
from file_tools_harness import Harness, error_code

from hdsp_agent.tools.base import ToolError
from hdsp_agent.tools.builtin.edit.fuzzy import PASS_NOTES, PASSES, apply_edit


def indentation_kinds(text: str) -> set[str]:
    """How the indented lines of ``text`` start: 'tab', 'space'; 'mixed' for an indentation holding both."""
    kinds = set()
    for line in text.replace("\r", "\n").split("\n"):
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if not line.strip() or not indent:
            continue
        if " " in indent and "\t" in indent:
            kinds.add("mixed")
        kinds.add("tab" if indent[0] == "\t" else "space")
    return kinds


def assert_indentation_kept(before: str, after: str) -> None:
    kinds_before, kinds_after = indentation_kinds(before), indentation_kinds(after)
    assert "mixed" not in kinds_after - kinds_before, "a line's indentation mixes tabs and spaces"
    if len(kinds_before) == 1:
        assert kinds_after <= kinds_before, (
            f"the file indented with {kinds_before}, the edit with {kinds_after}"
        )


def assert_compiles(case: EditCase, text: str) -> None:
    if case.filename.endswith(".py"):
        compile(case.file, case.filename, "exec")  # the table's own file must be valid to prove anything
        compile(text, case.filename, "exec")  # raises TabError / IndentationError on a bad re-indent


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_matcher_case(case: EditCase) -> None:
    if case.expect is None:
        with pytest.raises(ToolError) as caught:
            apply_edit(case.file, case.old, case.new, replace_all=case.replace_all, filename=case.filename)
        error = caught.value
        assert error.code == case.error, error.message
        said = f"{error.message}\n{error.suggestion}"
        for expected in case.mentions:
            assert expected in said
        return
    outcome = apply_edit(case.file, case.old, case.new, replace_all=case.replace_all, filename=case.filename)
    assert outcome.text == case.expect
    assert outcome.pass_name == case.pass_name
    assert_indentation_kept(case.file, outcome.text)
    assert_compiles(case, outcome.text)


def test_the_table_is_large_enough_and_names_real_passes() -> None:
    assert len(CASES) >= 120
    assert len({case.id for case in CASES}) == len(CASES)
    assert {case.pass_name for case in CASES} <= set(PASS_NOTES)


@pytest.mark.parametrize("pass_name", [name for name, _ in PASSES])
def test_every_pass_has_a_must_match_case_and_a_must_refuse_case(pass_name: str) -> None:
    cases = [case for case in CASES if case.pass_name == pass_name]
    assert any(case.expect is not None for case in cases)
    assert any(case.expect is None for case in cases)
    if pass_name != "exact":  # a loose pass is refused on more than one match
        assert any(case.error == "E_EDIT_AMBIGUOUS" for case in cases)


# -- through the tools ---------------------------------------------------------------------------------------


def _arguments(tool: str, case: EditCase) -> tuple[str, dict[str, object]]:
    if tool == "single":
        return "single_find_and_replace", {
            "filepath": case.filename,
            "old_string": case.old,
            "new_string": case.new,
            "replace_all": case.replace_all,
        }
    if tool == "multi":
        edit = {"old_string": case.old, "new_string": case.new, "replace_all": case.replace_all}
        return "multi_edit", {"filepath": case.filename, "edits": [edit]}
    block = f"------- SEARCH\n{case.old}\n=======\n{case.new}\n+++++++ REPLACE"
    return "search_and_replace_in_file", {"filepath": case.filename, "diffs": [block]}


TOOL_RUNS = [(tool, case) for case in CASES for tool in case.tools]


@pytest.mark.asyncio
@pytest.mark.parametrize(("tool", "case"), TOOL_RUNS, ids=[f"{tool}-{case.id}" for tool, case in TOOL_RUNS])
async def test_tool_case(tmp_path: Path, tool: str, case: EditCase) -> None:
    target = tmp_path / case.filename
    target.write_bytes(case.file.encode("utf-8"))
    harness = Harness(tmp_path)
    name, arguments = _arguments(tool, case)
    result = await harness.call(name, arguments)
    if case.expect is None:
        assert error_code(result) == case.error
        assert target.read_bytes() == case.file.encode("utf-8")
        assert harness.approver.requests == []  # a refused edit never reaches the user
        return
    assert result.status == "ok", result.error
    assert target.read_bytes() == case.expect.encode("utf-8")
    # What the user approved is exactly what was written.
    assert [request.preview for request in harness.approver.requests] == [result.details["diff"]]
    assert PASS_NOTES[case.pass_name] in result.content
    assert_compiles(case, case.expect)


# -- bytes on disk, and notebook cells -----------------------------------------------------------------------

CRLF_BOM_TABS = "def f(x):\r\n\tif x:\r\n\t\treturn 1\r\n\treturn 0\r\n"


@pytest.mark.asyncio
@pytest.mark.parametrize("tool", ["single", "multi", "blocks"])
async def test_a_loose_match_in_a_crlf_bom_tab_file_keeps_its_line_endings_bom_and_tabs(
    tmp_path: Path, tool: str
) -> None:
    target = tmp_path / "f.py"
    target.write_bytes(b"\xef\xbb\xbf" + CRLF_BOM_TABS.encode("utf-8"))
    # The model's copy: spaces for tabs, LF for CRLF, no BOM.
    case = EditCase("crlf", "line_whitespace", "", "if x:\n    return 1", "if x:\n    log(x)\n    return 1")
    name, arguments = _arguments(tool, case)
    arguments["filepath"] = "f.py"
    result = await Harness(tmp_path).call(name, arguments)
    assert result.status == "ok", result.error
    expected = "def f(x):\r\n\tif x:\r\n\t\tlog(x)\r\n\t\treturn 1\r\n\treturn 0\r\n"
    assert target.read_bytes() == b"\xef\xbb\xbf" + expected.encode("utf-8")
    compile(expected, "f.py", "exec")


async def test_edit_cell_re_bases_a_loose_match_onto_the_cells_tabs(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    from test_notebook_tools import Agent, RecordingApprover, ok, write_notebook

    path = write_notebook(jp_root_dir, "nb.ipynb", "def f():\n\tx = 1\n\treturn x")
    approver = RecordingApprover()
    agent = Agent(jp_serverapp, jp_root_dir, approver=approver)
    try:
        cell_id = nbformat.read(path, as_version=4).cells[0].id
        ok(await agent.call("read_notebook", path="nb.ipynb"))
        edited = ok(
            await agent.call(
                "edit_cell",
                path="nb.ipynb",
                cell_id=cell_id,
                old_string="  x = 1",
                new_string="  x = 1\n  y = 2",
            )
        )
        source = nbformat.read(path, as_version=4).cells[0].source
        assert source == "def f():\n\tx = 1\n\ty = 2\n\treturn x"
        compile(source, "cell", "exec")
        assert PASS_NOTES["trimmed"] in edited.content
        # The user saw what was written: the same hunks; the card's header names the cell as they know it
        # ("cell 1 (def f():)"), the model's keeps the id it works with.
        shown, written = approver.requests[-1].preview.splitlines(), edited.details["diff"].splitlines()
        assert shown[2:] == written[2:]
        assert shown[0] == "--- nb.ipynb cell 1 (def f():)" and written[0] == f"--- nb.ipynb cell {cell_id}"

        spaced = await agent.call(
            "edit_cell", path="nb.ipynb", cell_id=cell_id, old_string="\treturn  x", new_string="\treturn y"
        )
        assert spaced.status == "ok"  # collapsed runs of whitespace: one place, so it lands
        assert nbformat.read(path, as_version=4).cells[0].source.endswith("\n\treturn y")
    finally:
        await agent.close()


async def test_edit_cell_keeps_a_markdown_heading_out_of_the_comment_pass(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    from test_notebook_tools import Agent, write_notebook

    path = write_notebook(jp_root_dir, "md.ipynb", "# Results\nThe model scores 0.91 on the test set.")
    agent = Agent(jp_serverapp, jp_root_dir)
    try:
        cell_id = nbformat.read(path, as_version=4).cells[0].id
        # In a markdown cell "#" is a heading, not a comment: a different heading is a different text.
        refused = await agent.call(
            "edit_cell",
            path="md.ipynb",
            cell_id=cell_id,
            old_string="# Scores\nThe model scores 0.91 on the test set.",
            new_string="# Scores\nThe model scores 0.93 on the test set.",
        )
        assert refused.status == "error" and refused.error and refused.error.code == "E_EDIT_NO_MATCH"
        assert nbformat.read(path, as_version=4).cells[0].source.startswith("# Results\n")
    finally:
        await agent.close()


# -- generated Python files: every loose match leaves a file that compiles ----------------------------------


def _python_block(rng: random.Random, depth: int, unit: str, counter: list[int]) -> list[str]:
    lines = []
    for _ in range(rng.randint(1, 3)):
        counter[0] += 1
        number = counter[0]
        if depth < 4 and rng.random() < 0.35:
            lines.append(f"{unit * depth}if v > {number}:")
            lines += _python_block(rng, depth + 1, unit, counter)
        else:
            lines.append(f"{unit * depth}v = v + {number}")
    return lines


def _restyled(lines: list[str], unit: str, model_unit: str, dedent: bool) -> list[str]:
    """Lines as a model might copy them: another indentation unit, maybe dedented to the first line."""
    depths = [(len(line) - len(line.lstrip(" \t"))) // len(unit) for line in lines]
    base = depths[0] if dedent else 0
    return [
        model_unit * max(0, depth - base) + line.strip() for depth, line in zip(depths, lines, strict=True)
    ]


def test_generated_python_edits_compile_and_never_mix_indentation() -> None:
    """200 functions indented with tabs, 4 or 2 spaces; old_string copied in another unit (sometimes
    dedented), new_string adding a nested line in the model's unit. An exact match is literal (the model said
    precisely what to write), so only the loose matches are judged here: all of them."""
    rng = random.Random(16)
    loose = 0
    passes: set[str] = set()
    for _ in range(200):
        unit = rng.choice(["\t", "    ", "  "])
        model_unit = rng.choice([candidate for candidate in ["\t", "    ", "  "] if candidate != unit])
        body = ["def f(v):", *_python_block(rng, 1, unit, [0]), f"{unit}return v"]
        first = rng.randint(1, len(body) - 2)
        window = body[first : first + rng.randint(1, 3)]
        old_lines = _restyled(window, unit, model_unit, dedent=rng.random() < 0.5)
        mangle = rng.random()
        if mangle < 0.3:  # the model's spacing differs inside lines
            old_lines = [line.replace(" = ", "  =  ") for line in old_lines]
        elif mangle < 0.6 and len(window) > 1:  # the file has a comment the model did not copy
            indent = window[1][: len(window[1]) - len(window[1].lstrip(" \t"))]
            body.insert(first + 1, f"{indent}# checked")
        text = "\n".join(body) + "\n"
        last_indent = old_lines[-1][: len(old_lines[-1]) - len(old_lines[-1].lstrip(" \t"))]
        added = (
            [f"{last_indent}{model_unit}v = v * 2"]
            if old_lines[-1].endswith(":")
            else [f"{last_indent}if v:", f"{last_indent}{model_unit}v = v - 1"]
        )
        old, new = "\n".join(old_lines), "\n".join(old_lines + added)
        try:
            outcome = apply_edit(text, old, new, filename="gen.py")
        except ToolError as error:
            assert error.code == "E_EDIT_AMBIGUOUS", (error.message, text, old)  # repeated lines only
            continue
        if outcome.pass_name == "exact":
            continue
        loose += 1
        passes.add(outcome.pass_name)
        compile(outcome.text, "gen.py", "exec")
        assert_indentation_kept(text, outcome.text)
        assert "v = v * 2" in outcome.text or "v = v - 1" in outcome.text
    assert loose >= 100
    assert len(passes) >= 4, passes


def test_generated_block_anchor_edits_compile_and_never_mix_indentation() -> None:
    """200 more: a 3-4 line window copied in another unit with one middle line misremembered (a number
    changed), so only the block-anchor pass can match it."""
    rng = random.Random(1616)
    matched = 0
    while matched < 200:
        unit = rng.choice(["\t", "    ", "  "])
        model_unit = rng.choice([candidate for candidate in ["\t", "    ", "  "] if candidate != unit])
        body = ["def f(v):", *_python_block(rng, 1, unit, [0]), f"{unit}return v"]
        if len(body) < 5:
            continue
        first = rng.randint(1, len(body) - 4)
        window = body[first : first + rng.randint(3, 4)]
        old_lines = _restyled(window, unit, model_unit, dedent=rng.random() < 0.5)
        middle = rng.randint(1, len(old_lines) - 2)
        old_lines[middle] = old_lines[middle].rstrip(":") + ("0:" if old_lines[middle].endswith(":") else "0")
        last_indent = old_lines[-1][: len(old_lines[-1]) - len(old_lines[-1].lstrip(" \t"))]
        added = (
            [f"{last_indent}{model_unit}v = v * 2"]
            if old_lines[-1].endswith(":")
            else [f"{last_indent}if v:", f"{last_indent}{model_unit}v = v - 1"]
        )
        text = "\n".join(body) + "\n"
        outcome = apply_edit(text, "\n".join(old_lines), "\n".join(old_lines + added), filename="gen.py")
        assert outcome.pass_name == "block_anchor_fuzzy"
        matched += 1
        compile(outcome.text, "gen.py", "exec")
        assert_indentation_kept(text, outcome.text)
