"""Programs the tools start without asking cannot be made to run code: ``view_diff`` in a repository whose
config names programs everywhere git would run one, and ripgrep with a config that adds ``--pre``.

Every hostile program is a harmless marker writer (``touch`` into a scratch dir); each test asserts the
marker stays absent, and first proves that plain git does run it (so the check can fail).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hdsp_agent.sandbox import Sandbox, SandboxSettings
from hdsp_agent.tools.base import ToolContext
from hdsp_agent.tools.builtin.git import ViewDiffArgs, ViewDiffTool
from hdsp_agent.tools.builtin.search.ripgrep import ripgrep_environment
from hdsp_agent.tools.builtin.search.tools import GrepSearchArgs, GrepSearchTool

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.org",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    )


def hostile_repository(root: Path, markers: Path) -> None:
    """A repository whose config and attributes name a marker-writing program for every hook git offers."""
    git(root, "init", "-q")
    (root / "data.txt").write_text("one\n")
    (root / ".gitattributes").write_text("data.txt filter=evil diff=evil\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    (root / "data.txt").write_text("one\ntwo\n")
    script = markers / "external.sh"
    script.write_text(f"#!/bin/sh\ntouch {markers}/external\n")
    script.chmod(0o755)
    settings = {
        "core.fsmonitor": f"touch {markers}/fsmonitor; false",
        "core.pager": f"touch {markers}/pager; cat",
        "diff.external": str(script),
        "diff.evil.textconv": f"touch {markers}/textconv; cat",
        "diff.evil.command": f"touch {markers}/command; true",
        "filter.evil.clean": f"touch {markers}/clean; cat",
        "filter.evil.smudge": "cat",
    }
    for key, value in settings.items():
        git(root, "config", key, value)


@pytest.mark.asyncio
@pytest.mark.parametrize("layer", ["none", "bubblewrap", "landlock"])
async def test_view_diff_runs_no_program_a_hostile_repository_names(tmp_path: Path, layer: str) -> None:
    root, markers = tmp_path / "repo", tmp_path / "markers"
    root.mkdir()
    markers.mkdir()
    hostile_repository(root, markers)
    git(root, "diff")  # plain git: the markers appear, so their absence below means something
    assert {"clean", "command"} <= {marker.name for marker in markers.iterdir()}
    for marker in list(markers.iterdir()):
        if marker.name != "external.sh":
            marker.unlink()
    sandbox = None
    if layer != "none":
        sandbox = Sandbox(SandboxSettings(layer=layer))  # type: ignore[arg-type]
        if sandbox.status.layer != layer:
            pytest.skip(f"SANDBOX LAYER {layer.upper()} NOT AVAILABLE HERE: {sandbox.status.reason}")
    output = await ViewDiffTool(sandbox=sandbox).run(ViewDiffArgs(), ToolContext(root))
    assert "+two" in output.content
    assert sorted(marker.name for marker in markers.iterdir()) == ["external.sh"]


@pytest.mark.asyncio
async def test_ripgrep_ignores_a_config_that_adds_a_preprocessor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, markers = tmp_path / "project", tmp_path / "markers"
    root.mkdir()
    markers.mkdir()
    (root / "notes.txt").write_text("needle\n")
    pre = markers / "pre.sh"
    pre.write_text(f'#!/bin/sh\ntouch {markers}/pre\ncat "$1"\n')
    pre.chmod(0o755)
    config = tmp_path / "ripgreprc"
    config.write_text(f"--pre={pre}\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    output = await GrepSearchTool().run(GrepSearchArgs(query="needle"), ToolContext(root))
    text = output if isinstance(output, str) else output.content
    assert "needle" in text
    assert not (markers / "pre").exists()


def test_ripgrep_gets_no_secrets_and_no_config_path() -> None:
    environ = {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "OPENAI_API_KEY": "sk-fake",
        "JUPYTER_TOKEN": "fake",
        "RIPGREP_CONFIG_PATH": "/tmp/x",
    }
    assert ripgrep_environment(environ) == {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C"}
