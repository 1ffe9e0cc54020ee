"""Prompt tokens (issue 17): the first request per tool profile against the Continue CLI's, the same with an
MCP server configured, and a scripted 21-step notebook task before and after, all counted with tiktoken's
o200k_base (offline: see tests/o200k.py). The time to first token on a 4k model is figures_ttft.py (group
``ttft``, printed after these).

Every request is captured at the scripted model server, as a real server would receive it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from harness import Figure  # noqa: E402
from notebook_task import PROMPT, answering, notebook_project, task  # noqa: E402
from o200k import prompt_tokens  # noqa: E402
from scripted_model import ScriptedModel, text  # noqa: E402

CN = REPO / "tests" / "continue_cli" / "node_modules" / ".bin" / "cn"
EVERYTHING = REPO / "tests/mcp_servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
# The last commit before issue 17's work: "before" runs the code as it was then (git archive).
BEFORE_COMMIT = "af93904"
HELLO = "hi"


def _config_dir(workdir: Path, name: str, settings: dict[str, Any]) -> Path:
    directory = workdir / f"config-{name}"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "jupyter_server_config.json").write_text(json.dumps({"HdspAgentApp": settings}))
    return directory


def _first_request_ours(workdir: Path, profile: str, mcp: bool = False) -> dict[str, Any]:
    """``mcp``: with the reference MCP server ``server-everything`` configured (its schemas are large)."""
    root = workdir / "hello"
    root.mkdir(exist_ok=True)
    settings: dict[str, Any] = {"profile": profile, "context_window": 32_768}
    if mcp:
        settings["mcp_servers"] = {
            "mcpServers": {"everything": {"command": "node", "args": [str(EVERYTHING)]}}
        }
    config = _config_dir(workdir, f"{profile}{'-mcp' if mcp else ''}", settings)
    with ScriptedModel([text("Hello!")]) as model:
        done = subprocess.run(
            [sys.executable, "-m", "hdsp_agent.cli", "run", "-p", HELLO, "--root", str(root), "--model", "m"]
            + ["--base-url", model.base_url],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
            env={**os.environ, "JUPYTER_CONFIG_DIR": str(config), "HOME": str(workdir)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return model.requests[0]


def _first_request_cn(workdir: Path) -> dict[str, Any]:
    project = workdir / "cn-project"
    project.mkdir(exist_ok=True)
    home = workdir / "cn-home"
    home.mkdir(exist_ok=True)
    with ScriptedModel([text("Hello!")]) as model:
        config = workdir / "cn-config.yaml"
        config.write_text(
            "name: bench\nversion: 0.0.1\nschema: v1\nmodels:\n"
            "  - name: scripted\n    provider: openai\n    model: m\n"
            f"    apiBase: {model.base_url}\n    apiKey: none\n"
            "    roles: [chat, edit, apply]\n    capabilities: [tool_use]\n"
        )
        done = subprocess.run(
            [str(CN), "-p", HELLO, "--config", str(config), "--auto"],
            cwd=project, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
            env={**os.environ, "HOME": str(home), "CONTINUE_CLI_ENABLE_TELEMETRY": "0",
                 "CONTINUE_METRICS_ENABLED": "0"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return model.requests[0]


def _code_before(workdir: Path) -> Path:
    """This repository's hdsp_agent as of BEFORE_COMMIT, unpacked next to the bench's scratch files."""
    target = workdir / "before"
    target.mkdir(exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", BEFORE_COMMIT, "hdsp_agent"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def _task_tokens(workdir: Path, name: str, code: Path, window: int, limit: int | None) -> dict[str, Any]:
    root = workdir / f"task-{name}"
    root.mkdir()
    notebook_project(root)
    with ScriptedModel(factory=answering(task(21)), max_prompt_tokens=limit) as model:
        done = subprocess.run(
            [sys.executable, str(REPO / "bench" / "lean_driver.py"), "--base-url", model.base_url]
            + ["--root", str(root), "--prompt", PROMPT, "--window", str(window)],
            capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(code), "JUPYTER_CONFIG_DIR": str(workdir / "no-config"),
                 "HOME": str(workdir)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        sizes = [prompt_tokens(request) for request in model.requests]
        return {
            "total": sum(sizes),
            "requests": len(sizes),
            "largest": max(sizes),
            "refused": len(model.refused),
        }


def _summary(request: dict[str, Any]) -> str:
    tools = request.get("tools") or []
    schema_chars = len(json.dumps(tools))
    message_chars = sum(len(json.dumps(m)) for m in request["messages"])
    tokens = prompt_tokens(request)
    return f"{tokens:,} tokens: {len(tools)} tools ({schema_chars:,} chars), messages {message_chars:,} chars"


async def lean_figures(workdir: Path) -> list[Figure]:
    cn = _first_request_cn(workdir)
    cn_tokens = prompt_tokens(cn)
    ours = {profile: _first_request_ours(workdir, profile) for profile in ("compact", "standard", "full")}
    figures = [
        Figure(
            name=f"prompt_{profile}",
            ours=f"hdsp-agent run -p hi, profile {profile}",
            baseline="Continue CLI 1.5.47 (cn -p hi)",
            ours_median=float(prompt_tokens(ours[profile])),
            baseline_median=float(cn_tokens),
            target=target,
            unit="tok",
            extra={"ours": _summary(ours[profile]), "cn": _summary(cn)},
        )
        for profile, target in (("compact", 1.0), ("standard", 1.5), ("full", 3.0))
    ]
    # With an MCP server configured: compact and standard send the mcp_tools index, full every schema.
    eager = prompt_tokens(_first_request_ours(workdir, "full", mcp=True)) - prompt_tokens(ours["full"])
    for profile in ("compact", "standard"):
        with_mcp = _first_request_ours(workdir, profile, mcp=True)
        figures.append(
            Figure(
                name=f"prompt_{profile}_mcp",
                ours=f"profile {profile}, server-everything configured (tools on demand)",
                baseline=f"profile {profile}, no MCP server",
                ours_median=float(prompt_tokens(with_mcp)),
                baseline_median=float(prompt_tokens(ours[profile])),
                target=1.1,
                unit="tok",
                extra={
                    "ours": _summary(with_mcp),
                    "the same server's schemas sent eagerly (full profile)": f"+{eager:,} tokens",
                },
            )
        )
    before = _task_tokens(workdir, "before", _code_before(workdir), 32_768, None)
    after = _task_tokens(workdir, "after", REPO, 32_768, None)
    small = _task_tokens(workdir, "after-4k", REPO, 0, 4_096)  # window read from the server's /props
    figures.append(
        Figure(
            name="task_21_steps",
            ours="after: standard profile, 32k window",
            baseline=f"before ({BEFORE_COMMIT}): every tool, 32k window",
            ours_median=float(after["total"]),
            baseline_median=float(before["total"]),
            target=1.0,
            unit="tok",
            extra={"before": before, "after": after, "after on a 4k model (compact, compaction)": small},
        )
    )
    return figures
