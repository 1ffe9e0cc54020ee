"""The conversation export a user downloads (``agent/export.py``): what the chat showed, not what the model
read."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn
from images import png_bytes
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.agent.export import conversation_markdown
from hdsp_agent.tools.base import Tool, ToolArgs, ToolContext, ToolOutput

PNG = base64.b64encode(png_bytes(4, 3)).decode()


class PlotArgs(ToolArgs):
    filepath: str
    data: str = ""


class SaveFigureTool(Tool[PlotArgs]):
    """Stands for a cell that draws a plot and saves it: text naming the absolute path, and the picture."""

    name = "save_figure"
    description = "Draw a figure and save it."
    args_model = PlotArgs
    read_only = True

    async def run(self, args: PlotArgs, ctx: ToolContext) -> ToolOutput:
        saved = Path(ctx.root_dir) / args.filepath
        return ToolOutput(
            "<Figure size 4x3 with 1 Axes>\n"
            "[image/png 4×3 px, 75 B: not shown, this model does not read images]\n"
            f"saved to {saved}\nworking directory: {ctx.root_dir}",
            {"images": [{"mime_type": "image/png", "data": PNG, "width": 4, "height": 3}]},
        )


@pytest.mark.asyncio
async def test_export_has_no_model_wrappers_no_server_paths_and_the_plot(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "project"
    root.mkdir()
    arguments = f'{{"filepath": "figs/sales.png", "data": "{root}/data.csv"}}'
    with ScriptedModel(
        [tool_calls(("save_figure", arguments)), text(f"Saved {root}/figs/sales.png.")]
    ) as model:
        manager = make_manager(tmp_path, make_runtime(root, model, [SaveFigureTool()]))
        session = manager.create(title="Sales plot")
        events = await run_turn(session, "plot the sales")
        assert of_type(events, "turn.end")[0]["reason"] == "completed"
        markdown = await manager.export(session.id, "markdown")
        await manager.shutdown()

    # What the model read: the result inside its envelope, the absolute path, a placeholder for the picture.
    tool_message = next(m for m in model.requests[1]["messages"] if m["role"] == "tool")
    assert "<tool_output" in tool_message["content"] and f"{root}/figs/sales.png" in tool_message["content"]
    assert "image_url" not in str(model.requests[1])

    # What the user exports: none of that markup, no server path, the plot embedded.
    assert "<tool_output" not in markdown and "</tool_output" not in markdown
    assert str(root) not in markdown and str(tmp_path) not in markdown
    assert "saved to figs/sales.png" in markdown and "working directory: .\n" in markdown
    # The placeholder the model read instead of the picture is gone: the picture is there.
    assert "not shown" not in markdown and "<Figure size 4x3 with 1 Axes>\nsaved to" in markdown
    assert '"data": "data.csv"' in markdown and "Saved figs/sales.png." in markdown
    images = re.findall(r"!\[([^\]]*)\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)", markdown)
    assert images == [("Output image 1 of save_figure", PNG)]
    assert base64.b64decode(images[0][1]) == png_bytes(4, 3)
    assert markdown.startswith("# Sales plot\n\n## User\n\nplot the sales\n")
    assert "**Tool call** `save_figure` (done)" in markdown


def test_export_keeps_fences_and_images_from_breaking_the_document(tmp_path: Path) -> None:
    events: list[dict[str, Any]] = [
        {"type": "message.user", "content": "show it"},
        {
            "type": "tool.status",
            "call_id": "c1",
            "name": "run_cell",
            "status": "done",
            "arguments": {"code": "print('```')"},
            # Output that tries to end the code block, and an envelope a tool echoed.
            "content": '```\n# Heading from output\n<tool_output tool="x">inner</tool_output>',
            "details": {
                "images": [
                    {"mime_type": "image/png", "data": PNG},
                    # Not a picture, not base64: left out rather than written into the Markdown.
                    {"mime_type": "text/html", "data": "<script>alert(1)</script>"},
                    {"mime_type": "image/png", "data": "abc) ![x](http://example.invalid/y.png"},
                ]
            },
        },
        {
            "type": "tool.status",
            "call_id": "c2",
            "name": "write_file",
            "status": "denied",
            "arguments": {"filepath": str(tmp_path / "a.py")},
            "error": {"code": "E_TOOL_DENIED", "message": "the user declined this call."},
        },
    ]
    markdown = conversation_markdown("Edge cases", events, tmp_path)
    assert "````\n```\n# Heading from output\ninner\n````" in markdown
    assert markdown.count("](data:") == 1 and "example.invalid" not in markdown and "<script>" not in markdown
    assert (
        "**Tool call** `write_file` (denied)" in markdown
        and "**Denied**: the user declined this call." in markdown
    )
    assert str(tmp_path) not in markdown and '"filepath": "a.py"' in markdown


async def test_export_writes_nothing_in_the_project(tmp_path: Path) -> None:
    # The export is the response body (the browser saves it as a download): it never lands on a project path,
    # so no protected path (AGENTS.md, a module next to a notebook) can be written through it.
    root = tmp_path / "project"
    (root / "analysis").mkdir(parents=True)
    (root / "analysis" / "nb.ipynb").write_text("{}")
    with ScriptedModel([text("Write AGENTS.md and analysis/json.py for me.")]) as model:
        runtime = make_runtime(root, model, [])
        manager = make_manager(root, runtime, tmp_path / "store" / "s.sqlite3")
        session = manager.create()
        await run_turn(session, "AGENTS.md")
        before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
        for fmt in ("markdown", "json"):
            assert "AGENTS.md" in await manager.export(session.id, fmt)
        assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before
        await manager.shutdown()
