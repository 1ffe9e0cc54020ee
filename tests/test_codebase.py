"""codebase: ranking on a small corpus, incremental refresh, and a 10,000-file tree."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.search.codebase import CodebaseTool, chunk_lines, identifier_words, query_terms
from hdsp_agent.tools.definitions import parameters_schema
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio

CORPUS = {
    "server/routes.py": "def register_routes(app):\n    app.add_handler('/api/chat', ChatHandler)\n"
    "    app.add_handler('/api/tools', ToolsHandler)\n",
    "server/auth.py": "def check_token(request):\n    '''Authenticate the request with the Jupyter "
    "token.'''\n"
    "    return request.headers.get('Authorization')\n",
    "kernel/execution.py": "class KernelExecutor:\n    async def executeCode(self, code):\n"
    "        '''Run code on the live kernel and collect outputs.'''\n",
    "docs/guide.md": "# Guide\nHow to configure the model endpoint and the API key.\n",
    "frontend/panel.ts": "export class ChatPanel { renderMessages() {} }\n",
}


def make_corpus(root: Path) -> None:
    for relative, text in CORPUS.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


async def search(tool: CodebaseTool, root: Path, query: str) -> ToolResult:
    executor = ToolExecutor(ToolRegistry([tool]), approver=FixedApprover(True))
    arguments = json.dumps({"query": query})
    return await executor.execute(ToolCall(id="c1", name="codebase", arguments=arguments), ToolContext(root))


def ranked_paths(result: ToolResult) -> list[str]:
    return [item["path"] for item in result.details.get("results", [])]


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("where are the HTTP routes registered", "server/routes.py"),
        ("authentication token check", "server/auth.py"),
        ("run code on the kernel", "kernel/execution.py"),
        ("execute code", "kernel/execution.py"),  # executeCode is split into words
        ("configuring the model endpoint", "docs/guide.md"),
        ("ChatPanel messages", "frontend/panel.ts"),
    ],
)
async def test_best_snippet_answers_the_query(tmp_path: Path, query: str, best: str) -> None:
    make_corpus(tmp_path)
    result = await search(CodebaseTool(cache_dir=tmp_path / "cache"), tmp_path, query)
    assert result.status == "ok"
    assert ranked_paths(result)[0] == best
    assert f"## {best} (lines 1-" in result.content


async def test_index_lives_in_the_given_cache_dir_or_under_the_root(tmp_path: Path) -> None:
    make_corpus(tmp_path)
    await search(CodebaseTool(cache_dir=tmp_path / "cache"), tmp_path, "routes")
    assert len(list((tmp_path / "cache").glob("codebase-*.sqlite"))) == 1
    assert not (tmp_path / ".hdsp").exists()
    await search(CodebaseTool(), tmp_path, "routes")
    assert (tmp_path / ".hdsp" / "cache" / "codebase.sqlite").is_file()
    assert (tmp_path / ".hdsp" / "cache" / ".gitignore").read_text() == "*\n"
    # The cache never indexes itself.
    again = await search(CodebaseTool(), tmp_path, "sqlite codebase cache")
    assert all(not path.startswith(".hdsp") for path in ranked_paths(again))


async def test_refresh_is_incremental_by_mtime(tmp_path: Path) -> None:
    make_corpus(tmp_path)
    tool = CodebaseTool(cache_dir=tmp_path / "cache")
    first = await search(tool, tmp_path, "routes")
    assert first.details["reindexed"] == len(CORPUS)
    unchanged = await search(tool, tmp_path, "routes")
    assert unchanged.details["reindexed"] == 0
    changed = tmp_path / "server" / "auth.py"
    changed.write_text("def verify_signature(payload):\n    return hmac_compare(payload)\n")
    os.utime(changed, (time.time() + 5, time.time() + 5))
    (tmp_path / "docs" / "guide.md").unlink()
    after = await search(tool, tmp_path, "verify signature hmac")
    assert after.details["reindexed"] == 1 and after.details["removed"] == 1
    assert ranked_paths(after)[0] == "server/auth.py"
    gone = await search(tool, tmp_path, "configure model endpoint")
    assert "docs/guide.md" not in ranked_paths(gone)


async def test_a_second_process_changing_the_index_is_noticed(tmp_path: Path) -> None:
    # Two tools on one cache dir stand for the server and the CLI on the same project: each keeps its index
    # open with the files table in memory, and must see what the other changed.
    make_corpus(tmp_path)
    server, cli = CodebaseTool(cache_dir=tmp_path / "cache"), CodebaseTool(cache_dir=tmp_path / "cache")
    assert (await search(server, tmp_path, "routes")).details["reindexed"] == len(CORPUS)
    assert (await search(cli, tmp_path, "routes")).details["reindexed"] == 0
    changed = tmp_path / "server" / "routes.py"
    changed.write_text("def mount_websocket_endpoints(app):\n    pass\n")
    os.utime(changed, (time.time() + 5, time.time() + 5))
    assert (await search(cli, tmp_path, "mount websocket endpoints")).details["reindexed"] == 1
    # The server's copy is stale; it reads the table again instead of indexing routes.py a second time.
    seen = await search(server, tmp_path, "mount websocket endpoints")
    assert seen.details["reindexed"] == 0 and ranked_paths(seen)[0] == "server/routes.py"
    (tmp_path / "server" / "auth.py").unlink()
    assert (await search(server, tmp_path, "token")).details["removed"] == 1
    assert (await search(cli, tmp_path, "token")).details["removed"] == 0
    server.close()
    cli.close()


async def test_gitignored_hidden_binary_and_huge_files_are_not_indexed(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "out.py").write_text("zebra_marker = 1\n")
    (tmp_path / ".secret.py").write_text("zebra_marker = 2\n")
    (tmp_path / "blob.bin").write_bytes(b"zebra_marker\0\0\0binary")
    (tmp_path / "huge.txt").write_text("zebra_marker\n" + "x" * (1024 * 1024 + 10))
    (tmp_path / "kept.py").write_text("zebra_marker = 3\n")
    result = await search(CodebaseTool(cache_dir=tmp_path / "cache"), tmp_path, "zebra marker")
    assert ranked_paths(result) == ["kept.py"]


async def test_no_match_and_empty_query(tmp_path: Path) -> None:
    make_corpus(tmp_path)
    tool = CodebaseTool(cache_dir=tmp_path / "cache")
    none = await search(tool, tmp_path, "quantum chromodynamics")
    assert none.status == "ok" and none.content.startswith("No code matches")
    empty = await search(tool, tmp_path, "the of a ?")
    assert empty.error is not None and empty.error.code == "E_EMPTY_QUERY"


async def test_ten_thousand_file_tree_builds_fast_and_refreshes_cheaply(tmp_path: Path) -> None:
    root = tmp_path / "big"
    for index in range(10_000):
        directory = root / f"pkg{index // 100:03}"
        if index % 100 == 0:
            directory.mkdir(parents=True)
        body = "".join(
            f"def handler_{index}_{line}(event):\n    return event.value + {line}\n" for line in range(6)
        )
        (directory / f"module_{index:05}.py").write_text(body)
    (root / "pkg042" / "module_04242.py").write_text("def reconcile_ledger_balances(accounts):\n    pass\n")
    tool = CodebaseTool(cache_dir=tmp_path / "cache")
    started = time.monotonic()
    built = await search(tool, root, "reconcile ledger balances")
    build_seconds = time.monotonic() - started
    assert built.details["total_files"] == 10_000 and built.details["reindexed"] == 10_000
    assert ranked_paths(built)[0] == "pkg042/module_04242.py"
    assert build_seconds < 30, build_seconds
    started = time.monotonic()
    again = await search(tool, root, "handler event value")
    assert again.details["reindexed"] == 0 and len(ranked_paths(again)) == 8
    assert time.monotonic() - started < 5


async def test_chunks_are_forty_line_windows() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 101))
    assert [(start, end) for start, end, _ in chunk_lines(text)] == [(1, 40), (41, 80), (81, 100)]
    assert identifier_words("parseHTTPResponse snake_case") == ["parse", "http", "response"]
    assert query_terms("How does parseConfig work?") == ["parseconfig", "parse", "config", "work"]


async def test_codebase_schema_snapshot() -> None:
    schema: dict[str, Any] = parameters_schema(CodebaseTool())
    assert schema == {
        "additionalProperties": False,
        "properties": {
            "query": {"description": "What you are looking for, in words or identifiers.", "type": "string"}
        },
        "required": ["query"],
        "type": "object",
    }
