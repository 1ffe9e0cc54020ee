"""Secrets never reach the model (DESIGN.md §4, layer 4): the sensitive-file list (case-insensitive, trailing
spaces and dots ignored, package-manager and cloud credentials), and every search, glob, map, index and diff
tool skipping those files — on a project of fake secrets, and on a scratch ``$HOME`` used as the project root
with Jupyter's config and runtime files in it.

SAFETY: every secret here is a fake marker string in a file under tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.permissions import protected
from hdsp_agent.permissions.approval import FixedApprover
from hdsp_agent.permissions.paths import is_sensitive
from hdsp_agent.permissions.policy import AdminFloor, RulePolicy
from hdsp_agent.tools.base import Tool, ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.git import ViewDiffTool
from hdsp_agent.tools.builtin.search.codebase import CodebaseTool
from hdsp_agent.tools.builtin.search.repo_map import ViewRepoMapTool, ViewSubdirectoryTool
from hdsp_agent.tools.builtin.search.tools import FileGlobSearchTool, GrepSearchTool
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry

MARKER = "FAKE-TOKEN-123"
# Files that hold the marker and must never be searched (name → content).
SECRETS = {
    ".npmrc": f"//registry/:_authToken={MARKER}\n",
    "server.PEM": f"-----BEGIN KEY----- {MARKER}\n",
    ".ENV": f"API_KEY={MARKER}\n",
    ".env.": f"API_KEY={MARKER}\n",
    ".env.production": f"API_KEY={MARKER}\n",
    ".pypirc": f"password = {MARKER}\n",
    ".htpasswd": f"user:{MARKER}\n",
    "keystore.JKS": f"{MARKER}\n",
    "cfg/.netrc ": f"machine x password {MARKER}\n",
    "deploy/prod.tfvars": f'token = "{MARKER}"\n',
    "deploy/terraform.tfstate": f'{{"secret": "{MARKER}"}}\n',
    "gcp/credentials-prod.json": f'{{"private_key": "{MARKER}"}}\n',
    "app/secrets.yaml": f"token: {MARKER}\n",
    ".aws/credentials": f"aws_secret_access_key = {MARKER}\n",
    ".kube/config": f"token: {MARKER}\n",
    ".docker/config.json": f'{{"auth": "{MARKER}"}}\n',
    ".config/gcloud/application_default_credentials.json": f"{MARKER}\n",
    ".git-credentials": f"https://u:{MARKER}@example.com\n",
    ".pgpass": f"*:*:*:*:{MARKER}\n",
    ".vault-token": f"{MARKER}\n",
    "src/secrets.py": f"TOKEN = '{MARKER}'\ndef helper():\n    pass\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "project"
    for name, content in SECRETS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    (root / "src" / "app.py").write_text("def handler():\n    return 'visible needle'\n")
    (root / ".env.example").write_text("API_KEY=placeholder needle\n")
    yield root
    protected.configure(protected.AdminPaths())


async def call(root: Path, tool: Tool[Any], arguments: dict[str, Any]) -> ToolResult:
    executor = ToolExecutor(ToolRegistry([tool]), approver=FixedApprover(True))
    return await executor.execute(
        ToolCall(id="c1", name=tool.name, arguments=json.dumps(arguments)), ToolContext(root)
    )


# -- the list ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        *SECRETS,
        ".Npmrc",
        ".NPMRC..",
        "_netrc",
        ".my.cnf",
        "id_ed25519",
        "ID_RSA.",
        "x.p12",
        "x.PFX",
        "app.keystore",
        "a.key",
        "credentials",
        ".envrc",
        ".env.local",
        ".local/share/x/jpserver-12.json",
        "kernel-1f0e4a3e-0000-4000-8000-000000000000.json",
        "jupyter_server_config.py",
        ".azure/accessTokens.json",
    ],
)
def test_secret_names_are_recognised_in_any_case_and_with_trailing_dots(name: str) -> None:
    assert is_sensitive(name), name


@pytest.mark.parametrize(
    "name",
    [".env.example", ".ENV.Sample", ".env.template", "README.md", "src/app.py", "id_mapping.py", "keys.py"],
)
def test_ordinary_files_are_not_secrets(name: str) -> None:
    assert not is_sensitive(name), name


def test_the_administrators_extra_patterns(tmp_path: Path) -> None:
    protected.configure(protected.AdminPaths(), ["*.secret", "config/prod/", str(tmp_path / "vault")])
    try:
        assert is_sensitive("a/b/API.SECRET") and is_sensitive("config/prod/db.yaml")
        assert is_sensitive(str(tmp_path / "vault" / "k.txt"))
        assert not is_sensitive("config/dev/db.yaml")
    finally:
        protected.configure(protected.AdminPaths())


def test_reading_a_secret_asks_even_under_an_allow_rule(project: Path) -> None:
    from hdsp_agent.permissions.defaults import derive_action
    from hdsp_agent.permissions.rules import Rule

    policy = RulePolicy(AdminFloor(allow=(Rule.parse("read_file", "admin"),)))
    for name in (".npmrc", "server.PEM", ".ENV", ".env.", "cfg/.netrc "):
        arguments = {"filepath": name}
        action = derive_action("read_file", arguments, project)
        assert policy.check("read_file", arguments, action, project).decision == "ask", name


# -- search tools --------------------------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
async def test_grep_search_never_returns_a_secret_and_says_it_skipped_some(project: Path, mode: str) -> None:
    result = await call(project, GrepSearchTool(), {"query": MARKER, "outputMode": mode})
    assert result.status == "ok"
    assert result.content.count(MARKER) == 1  # the query, echoed; nothing found
    assert result.content.startswith(f"No matches for /{MARKER}/.")
    assert "may hold secrets were not searched" in result.content
    assert result.details["skipped_secret_files"] >= len(SECRETS) - 2  # src/secrets.py, .aws... all counted


@pytest.mark.asyncio
async def test_grep_search_finds_ordinary_files_and_not_secret_ones_by_a_shared_word(project: Path) -> None:
    (project / "src" / "tokens.py").write_text(f"# {MARKER} in an ordinary file\n")
    result = await call(project, GrepSearchTool(), {"query": MARKER, "caseSensitive": False})
    assert result.content.splitlines()[0] == "src/tokens.py"
    assert "[1 matching lines in 1 file]" in result.content
    for name in SECRETS:
        assert name.strip() not in result.content


@pytest.mark.asyncio
async def test_a_secret_path_named_explicitly_is_searched_once_approved(project: Path) -> None:
    result = await call(project, GrepSearchTool(), {"query": "authToken", "path": ".npmrc"})
    assert result.status == "ok" and "authToken" in result.content  # FixedApprover(True): the user said yes


@pytest.mark.asyncio
async def test_file_glob_search_lists_names_but_no_content(project: Path) -> None:
    result = await call(project, FileGlobSearchTool(), {"pattern": "*"})
    assert ".npmrc" in result.content.splitlines() and MARKER not in result.content


@pytest.mark.asyncio
async def test_repo_map_and_view_subdirectory_skip_secret_files(project: Path) -> None:
    whole = await call(project, ViewRepoMapTool(), {})
    assert "src/app.py" in whole.content
    for name in ("secrets.py", ".npmrc", "server.PEM", "credentials-prod.json", "prod.tfvars"):
        assert name not in whole.content, name
    assert MARKER not in whole.content and "TOKEN" not in whole.content
    part = await call(project, ViewSubdirectoryTool(), {"directory_path": "src"})
    assert "src/app.py" in part.content and "secrets.py" not in part.content


@pytest.mark.asyncio
async def test_the_codebase_index_never_holds_a_secret(project: Path, tmp_path: Path) -> None:
    tool = CodebaseTool(cache_dir=tmp_path / "cache")
    result = await call(project, tool, {"query": f"token secret password auth key {MARKER}"})
    assert result.content.count(MARKER) == 1  # the query, echoed
    assert all(not is_sensitive(item["path"]) for item in result.details.get("results", []))
    index_files = list((tmp_path / "cache").rglob("*"))
    assert index_files and all(MARKER.encode() not in f.read_bytes() for f in index_files if f.is_file())


@pytest.mark.asyncio
async def test_view_diff_hides_the_changed_lines_of_secret_files(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for args in (["init", "-q"], ["add", "-A", "-f"]):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)
    result = await call(project, ViewDiffTool(), {})
    assert result.status == "ok", result.error
    assert "src/app.py" in result.content and "visible needle" in result.content
    assert ".npmrc" in result.content and MARKER not in result.content
    assert "[changes not shown: the file may hold secrets" in result.content


# -- the root is $HOME ---------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_with_home_as_root_jupyters_token_and_key_are_never_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    runtime = home / ".local" / "share" / "jupyter" / "runtime"
    runtime.mkdir(parents=True)
    (runtime / "jpserver-77.json").write_text(json.dumps({"token": MARKER}))
    (runtime / "jpserver-77-open.html").write_text(f"<a href='?token={MARKER}'>")
    (runtime / "kernel-abc.json").write_text(json.dumps({"key": MARKER}))
    (home / ".jupyter").mkdir()
    (home / ".jupyter" / "jupyter_server_config.py").write_text(f"c.HdspAgentApp.api_key = '{MARKER}'\n")
    (home / ".jupyter" / "lab").mkdir()
    (home / ".jupyter" / "lab" / "notes.json").write_text(f'"{MARKER}"\n')
    (home / "work.py").write_text("print('hi')\n")
    monkeypatch.setenv("HOME", str(home))
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    grep = await call(home, GrepSearchTool(), {"query": MARKER, "outputMode": "files_with_matches"})
    assert grep.content.startswith("No matches") and grep.content.count(MARKER) == 1
    assert grep.details["skipped_secret_files"] == 5
    mapped = await call(home, ViewRepoMapTool(), {})
    assert "work.py" in mapped.content and "jupyter" not in mapped.content


@pytest.mark.asyncio
async def test_repo_map_does_not_follow_links_to_secrets_or_outside(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("OUTSIDE_NAME = 1\n")
    (project / "src" / "linked_out.py").symlink_to(outside)
    (project / "src" / "linked_secret.py").symlink_to(project / "src" / "secrets.py")
    result = await call(project, ViewRepoMapTool(), {})
    assert "OUTSIDE_NAME" not in result.content and "TOKEN" not in result.content
    assert "linked_out.py" not in result.content and "src/app.py" in result.content
