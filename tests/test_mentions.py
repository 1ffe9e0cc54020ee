"""``@`` mentions: the composer's file suggestions (no secrets, .gitignore respected) and what the system
prompt
says about mentioned files, cells and variables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.agent.prompts import build_system_prompt, context_paths
from hdsp_agent.web import mentions
from hdsp_agent.web.mentions import rank


def test_file_names_starting_with_the_query_come_first() -> None:
    files = ["src/deep/loader_data.py", "data.csv", "notes/data/readme.md", "other.txt"]
    assert rank(files, "data") == ["data.csv", "notes/data/readme.md", "src/deep/loader_data.py"]
    assert rank(files, "DATA.C") == ["data.csv"]
    assert rank(files, "zzz") == []


def test_checkpoints_hidden_folders_and_secrets_are_never_suggested(tmp_path: Path) -> None:
    files = [
        "analysis.ipynb",
        ".ipynb_checkpoints/analysis-checkpoint.ipynb",
        "sub/.ipynb_checkpoints/analysis-checkpoint.ipynb",
        ".venv/lib/analysis.py",
        "keys/analysis.pem",
        ".analysis_notes.md",  # a hidden file (not folder) in the project is the user's own
    ]
    assert rank(files, "analysis", tmp_path) == ["analysis.ipynb", ".analysis_notes.md"]


async def test_a_lookup_answers_from_the_kept_listing_while_it_refreshes(tmp_path: Path) -> None:
    (tmp_path / "first.csv").write_text("x\n")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "first-checkpoint.csv").write_text("x\n")
    assert await mentions.project_files(tmp_path) == ["first.csv"]  # the walk skips hidden folders
    (tmp_path / "second.csv").write_text("y\n")
    stamp, files = mentions._listing[tmp_path]
    mentions._listing[tmp_path] = (stamp - mentions.LISTING_SECONDS, files)
    assert await mentions.project_files(tmp_path) == ["first.csv"]  # old listing at once, a walk started
    await mentions._refreshing[tmp_path]
    assert sorted(await mentions.project_files(tmp_path)) == ["first.csv", "second.csv"]


def test_the_prompt_names_what_was_mentioned_and_rules_see_mentioned_files(tmp_path: Path) -> None:
    context = {
        "mentions": [
            {"kind": "file", "path": "data/sales.csv"},
            {"kind": "cell", "cell_id": "c1", "index": 2, "source": "df.groupby('region').sum()"},
            {"kind": "variable", "name": "df"},
            {"kind": "cell"},  # malformed entries are skipped, not fatal
            "junk",
        ]
    }
    prompt = build_system_prompt(tmp_path, context, None)
    assert "- file data/sales.csv" in prompt
    assert "- cell c1 (index 2):\ndf.groupby('region').sum()" in prompt
    assert "- kernel variable df" in prompt
    assert context_paths(context) == ["data/sales.csv"]
    assert "mentioned" not in build_system_prompt(tmp_path, {}, None)


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return {"ServerApp": {**jp_server_config["ServerApp"], "allow_unauthenticated_access": False}}


async def test_suggested_files_skip_secrets_and_ignored_files(jp_fetch: Any, jp_root_dir: Path) -> None:
    (jp_root_dir / "data").mkdir()
    (jp_root_dir / "data" / "sales.csv").write_text("a,b\n")
    (jp_root_dir / "data" / ".env").write_text("TOKEN=FAKE\n")
    (jp_root_dir / "data" / "server.PEM").write_text("FAKE KEY\n")
    (jp_root_dir / ".gitignore").write_text("build/\n")
    (jp_root_dir / "build").mkdir()
    (jp_root_dir / "build" / "data_out.csv").write_text("x\n")
    response = await jp_fetch("hdsp-agent", "mentions", params={"q": "data"})
    files = json.loads(response.body)["files"]
    assert "data/sales.csv" in files
    assert not any(name.endswith((".env", ".PEM")) or name.startswith("build/") for name in files)


async def test_hidden_folders_and_checkpoints_are_not_suggested_by_the_route(
    jp_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "report.ipynb").write_text("{}")
    (jp_root_dir / ".ipynb_checkpoints").mkdir()
    (jp_root_dir / ".ipynb_checkpoints" / "report-checkpoint.ipynb").write_text("{}")
    (jp_root_dir / ".cache").mkdir()
    (jp_root_dir / ".cache" / "report.json").write_text("{}")
    response = await jp_fetch("hdsp-agent", "mentions", params={"q": "report"})
    assert json.loads(response.body)["files"] == ["report.ipynb"]
