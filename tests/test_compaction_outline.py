"""The compaction's notebook outline is a ``read_notebook`` call through the tool pipeline, like the model's
own: a secret in the notebook does not reach the outline, the read is in the audit log, and the compaction
note holds the cells inside the untrusted-data envelope. Real notebook tools, contents manager and file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from agent_harness import make_manager, make_runtime
from jupyter_server.services.contents.filemanager import FileContentsManager
from scripted_model import ScriptedModel, text

from hdsp_agent.agent.compaction import compact
from hdsp_agent.agent.llm import ModelClient, ModelSettings
from hdsp_agent.permissions.decision import ReadOnlyPolicy
from hdsp_agent.tools.base import ToolContext
from hdsp_agent.tools.executor import ExecutorSettings
from hdsp_agent.tools.jupyter import notebook_tools
from hdsp_agent.tools.output import ENVELOPE_TAG
from hdsp_agent.tools.redaction import SecretRedactor

MODEL_KEY = "sk-outline-Zq81mXv4Lp0Rk27w"


async def test_the_compaction_outline_is_redacted_enveloped_and_audited(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Measurements"),
        nbformat.v4.new_code_cell(f'API_KEY = "{MODEL_KEY}"'),
        nbformat.v4.new_code_cell('DB = "https://alice:pw-9f83kd02@db.example.com/x"'),
    ]
    nbformat.write(notebook, tmp_path / "analysis.ipynb")
    contents = FileContentsManager(root_dir=str(tmp_path))
    audited: list[dict[str, Any]] = []
    runtime = make_runtime(
        tmp_path,
        None,
        notebook_tools(),
        policy=ReadOnlyPolicy(),
        executor_settings=ExecutorSettings(redactor=SecretRedactor(lambda: [MODEL_KEY])),
        audit=audited.append,
    )
    runtime.context_factory = lambda **overrides: ToolContext(
        root_dir=tmp_path, contents_manager=contents, **overrides
    )
    session = make_manager(tmp_path, runtime).create()
    shown: list[dict[str, Any]] = []
    session.subscribe(shown.append)
    ctx = runtime.tool_context(
        session_id=session.id, client_context={"active_document": {"path": "analysis.ipynb"}}
    )

    outline = await session.turns.notebook_outline(ctx)

    assert outline is not None and "# Measurements" in outline
    assert MODEL_KEY not in outline and "pw-9f83kd02" not in outline, outline
    assert "[redacted secret]" in outline
    reads = [record for record in audited if record.get("tool") == "read_notebook"]
    assert len(reads) == 1 and reads[0]["session"] == session.id and reads[0]["status"] == "ok", audited
    assert shown == [], "the outline shows no tool card in the chat"

    messages = [
        {"role": "user", "content": "x " * 6_000},
        {"role": "assistant", "content": "y " * 6_000},
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": "z"},
    ]
    with ScriptedModel() as model:
        model.add(text("Done: measured."))
        client = ModelClient(ModelSettings(model="scripted", base_url=model.base_url, max_retries=0))
        try:
            assert await compact(client, messages, "system", [], 8_192, live_state=outline) is not None
        finally:
            await client.close()
    note = str(messages[0]["content"])
    state = note[note.index("The active notebook now") :]
    assert f'<{ENVELOPE_TAG} tool="read_notebook" trust="untrusted">' in state and "# Measurements" in state
