"""Secrets unreachable, not only redacted (issue #24, classes 3, 4 and 7): the model keys and the Jupyter
token are in no environment a command, an MCP server or a tool's program gets; the project's secret files
cannot be read by a command that runs without asking; the system prompt passes redaction and follows no link
to a secret; git's credentials count as secrets; paging tools redact before they cut.

Real parts: real bubblewrap and Landlock, a real MCP server process, real files, a scratch HOME and a tmp
project. SAFETY: every secret is fake (``sk-test-FAKE…``), every command only reads or prints, and command
strings live only in Python data handed to argv lists.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hdsp_agent.mcp.manager import McpManager
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest
from hdsp_agent.permissions.policy import AdminFloor, RulePolicy
from hdsp_agent.permissions.rules import parse_rules
from hdsp_agent.sandbox import Sandbox, SandboxSettings
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin.terminal import RunTerminalCommandTool
from hdsp_agent.tools.executor import ExecutorSettings, ToolExecutor
from hdsp_agent.tools.redaction import SecretRedactor
from hdsp_agent.tools.registry import ToolRegistry

SERVERS = Path(__file__).parent / "mcp_servers"
MODEL_KEY = "sk-test-FAKEmodelkey0123456789abcdef"
JUPYTER_TOKEN = "FAKEjupytertoken0123456789abcdef0123456789ab"
DOTENV_VALUE = "sk-test-FAKEdotenvvalue-not-a-known-secret-42"
LAYERS = ("bubblewrap", "landlock")


def make_sandbox(layer: str) -> Sandbox:
    sandbox = Sandbox(SandboxSettings(layer=layer))  # type: ignore[arg-type]
    if sandbox.status.layer != layer:
        pytest.skip(f"SANDBOX LAYER {layer.upper()} NOT AVAILABLE HERE: {sandbox.status.reason}")
    return sandbox


@pytest.fixture(params=LAYERS)
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    return make_sandbox(request.param)


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The server's environment as an administrator might start it: a model key and the Jupyter token in it,
    and a scratch HOME."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", MODEL_KEY)
    monkeypatch.setenv("JUPYTER_TOKEN", JUPYTER_TOKEN)
    monkeypatch.setenv("HDSP_INNOCENT_LOOKING", MODEL_KEY)  # a key under a name no pattern knows
    # A python3 that both layers can run (a pyenv shim under /root is hidden by the sandbox).
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with secret files in the usual places, and innocent files next to them."""
    root = tmp_path / "project"
    (root / "config").mkdir(parents=True)
    (root / "keys").mkdir()
    (root / ".aws").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".env").write_text(f"API_KEY={DOTENV_VALUE}\n")
    (root / ".env.example").write_text("API_KEY=put-yours-here\n")
    (root / "config" / ".env.local").write_text(f"TOKEN={DOTENV_VALUE}\n")
    (root / "keys" / "server.ppk").write_text(f"PuTTY-User-Key-File-3: {DOTENV_VALUE}\n")
    (root / ".aws" / "credentials").write_text(f"aws_secret_access_key = {DOTENV_VALUE}\n")
    (root / "app.py").write_text("print('hello')\n")
    (root / "out").mkdir()  # where commands write (Landlock lets no command create top-level entries)
    return root


class Approver:
    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self.requests.append(request)
        return ApprovalReply(approved=True)


async def call_terminal(
    sandbox: Sandbox, root: Path, command: str, *, allow: tuple[str, ...] = (), **arguments: Any
) -> tuple[ToolResult, Approver]:
    """``command`` through the real executor and policy; ``allow`` are the administrator's allow rules (what
    makes a command run without asking). No redactor: what a test sees is what the command could read."""
    tool = RunTerminalCommandTool(sandbox=sandbox, startup_seconds=0.5)
    rules, problems = parse_rules(list(allow), "admin")
    assert not problems
    policy = RulePolicy(AdminFloor(allow=tuple(rules)), None, root, sandbox.status)
    approver = Approver()
    executor = ToolExecutor(ToolRegistry([tool]), policy=policy, approver=approver)
    ctx = ToolContext(
        root_dir=root, session_id="s1", client_context={"session_dir": str(root.parent / "logs")}
    )
    call = ToolCall(id="c1", name=tool.name, arguments=json.dumps({"command": command, **arguments}))
    return await executor.execute(call, ctx), approver


# -- 1. keys and the token are in no process environment ----------------------------------------------------


@pytest.mark.asyncio
async def test_sandboxed_and_background_commands_get_no_key_or_token(
    sandbox: Sandbox, project: Path, secret_env: None
) -> None:
    # The environment is written to a file in the project, so no redaction stands between it and the test.
    result, approver = await call_terminal(
        sandbox, project, "env > out/env-now.txt", allow=("run_terminal_command(env*)",)
    )
    assert result.status == "ok" and approver.requests == []
    result, _ = await call_terminal(
        sandbox,
        project,
        "env > out/env-later.txt",
        allow=("run_terminal_command(env*)",),
        waitForCompletion=False,
    )
    assert result.status == "ok"
    for name in ("out/env-now.txt", "out/env-later.txt"):
        for _ in range(50):
            if (project / name).exists() and (project / name).read_text():
                break
            await asyncio.sleep(0.1)
        seen = (project / name).read_text()
        assert "PATH=" in seen
        assert MODEL_KEY not in seen and JUPYTER_TOKEN not in seen, name


@pytest.mark.asyncio
async def test_a_dump_of_the_environment_finds_no_key_because_there_is_none(
    sandbox: Sandbox, project: Path, secret_env: None
) -> None:
    """``od -c``/``xxd`` re-encode what they print past redaction by value; the defence is that the
    sandbox's environment holds no key to re-encode."""
    result, _ = await call_terminal(
        sandbox,
        project,
        "env | od -c > out/dump-od.txt; env | xxd > out/dump-xxd.txt",
        allow=("run_terminal_command(env*)",),
    )
    assert result.status == "ok"
    for name in ("out/dump-od.txt", "out/dump-xxd.txt"):
        dump = (project / name).read_text()
        assert dump  # the command ran
        squeezed = "".join(dump.split())
        assert MODEL_KEY.encode().hex() not in squeezed and "sk-test-FAKEmodel" not in dump.replace(" ", "")


@pytest.mark.asyncio
async def test_an_mcp_server_process_gets_no_key_or_token(tmp_path: Path, secret_env: None) -> None:
    pid_file = tmp_path / "pid"
    manager = McpManager(
        ToolRegistry(),
        root_dir=tmp_path,
        trait_servers={
            "mcpServers": {
                "demo": {
                    "command": sys.executable,
                    "args": [str(SERVERS / "demo_server.py")],
                    "env": {"DEMO_PID_FILE": str(pid_file)},
                }
            }
        },
        config_dir=tmp_path / "config",
    )
    try:
        await manager.refresh()
        pid = int(pid_file.read_text().split()[0])
        environ = Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "replace")
    finally:
        await manager.close()
    assert "DEMO_PID_FILE=" in environ  # the server's own configured variables do arrive
    assert MODEL_KEY not in environ and JUPYTER_TOKEN not in environ


def test_git_and_ripgrep_get_no_key_or_token(secret_env: None) -> None:
    """view_diff's git and the search tools' ripgrep run with short allowlists of the server's environment."""
    from hdsp_agent.tools.builtin.git import _git_environment
    from hdsp_agent.tools.builtin.search.ripgrep import ripgrep_environment

    for environment in (_git_environment(os.environ), ripgrep_environment(os.environ)):
        assert "PATH" in environment
        assert MODEL_KEY not in environment.values() and JUPYTER_TOKEN not in environment.values()


# -- 3. secret files are unreadable inside the sandbox -------------------------------------------------------

# Commands the analysis cannot see reading a secret: the name is computed inside a program.
READERS = {
    "python": "python3 -c \"print('reader-ran'); print(open('.env').read())\"",
    "script": "python3 out/reader.py",
    "every-file": "python3 out/every.py",
}
# Reads every file of the project, whatever its name, going on past the ones it cannot open.
EVERY_FILE_SCRIPT = (
    "import os\nprint('reader-ran')\nfor top, dirs, files in os.walk('.'):\n"
    "    for name in files:\n        try:\n"
    "            print(open(os.path.join(top, name), errors='replace').read())\n"
    "        except OSError:\n            pass\n"
)
READER_SCRIPT = (
    "print('reader-ran')\n"
    "for name in ('.en' + 'v', 'config/.env.lo' + 'cal', '.aws/credentials'):\n"
    "    print(open(name).read())\n"
)


@pytest.mark.asyncio
@pytest.mark.parametrize("reader", sorted(READERS))
async def test_a_command_allowed_without_asking_cannot_read_secret_files(
    sandbox: Sandbox, project: Path, secret_env: None, reader: str
) -> None:
    (project / "out" / "reader.py").write_text(READER_SCRIPT)
    (project / "out" / "every.py").write_text(EVERY_FILE_SCRIPT)
    command = READERS[reader]
    result, approver = await call_terminal(
        sandbox, project, command + "; cat .env.example app.py", allow=("run_terminal_command(python3*)",)
    )
    assert approver.requests == [], "the rule lets it run without asking"
    assert "reader-ran" in result.content, result.content
    assert DOTENV_VALUE not in result.content
    # Not secrets: still readable.
    assert "put-yours-here" in result.content and "print('hello')" in result.content


@pytest.mark.asyncio
async def test_links_to_a_secret_file_do_not_reveal_it(
    sandbox: Sandbox, project: Path, secret_env: None
) -> None:
    os.link(project / ".env", project / "notes.txt")  # a hard link: the same file under an innocent name
    (project / "config" / "settings").symlink_to("../.env")
    script = (
        "print('reader-ran')\nfor name in ('notes.txt', 'config/settings'):\n    print(open(name).read())\n"
    )
    (project / "out" / "links.py").write_text(script)
    result, approver = await call_terminal(
        sandbox, project, "python3 out/links.py", allow=("run_terminal_command(python3*)",)
    )
    assert approver.requests == [] and "reader-ran" in result.content
    assert DOTENV_VALUE not in result.content


@pytest.mark.asyncio
async def test_a_command_the_user_approved_reads_the_secret_file_it_named(
    sandbox: Sandbox, project: Path, secret_env: None
) -> None:
    """The approval card said "reads .env, which may hold secrets": the user chose to show it."""
    result, approver = await call_terminal(sandbox, project, "cat .env")
    assert len(approver.requests) == 1 and ".env" in " ".join(approver.requests[0].reasons)
    assert DOTENV_VALUE in result.content


@pytest.mark.asyncio
async def test_git_still_works_in_the_sandbox_with_secret_files_masked(
    sandbox: Sandbox, project: Path, secret_env: None
) -> None:
    result, _ = await call_terminal(sandbox, project, "git status --short")
    assert result.status == "ok" and "app.py" in result.content


def test_finding_the_secret_files_of_a_20000_file_project_is_fast(tmp_path: Path) -> None:
    import time

    from hdsp_agent.sandbox.secret_files import secret_files

    root = tmp_path / "big"
    for package in range(200):
        (root / f"pkg{package}").mkdir(parents=True)
        for module in range(100):
            (root / f"pkg{package}" / f"m{module}.py").write_text("x = 1\n")
    (root / "pkg7" / ".env").write_text("A=1\n")
    secret_files(root)  # warm the page cache
    started = time.monotonic()
    found = secret_files(root)
    elapsed = time.monotonic() - started
    assert [Path(item.path).relative_to(root).as_posix() for item in found] == ["pkg7/.env"]
    assert elapsed < 1.5, f"{elapsed:.2f} s"


# -- 7. re-encodings of a known value ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "program",
    [
        ["od", "-c"],
        ["xxd"],
        ["xxd", "-p"],
        ["hexdump", "-C"],
        ["base64"],
        ["rev"],
        ["tr", "A-Za-z", "N-ZA-Mn-za-m"],
    ],
)
def test_simple_re_encodings_of_a_known_secret_are_redacted(program: list[str]) -> None:
    redactor = SecretRedactor(lambda: [MODEL_KEY])
    for prefix in ("", "x", "xy"):  # base64 depends on where the value sits
        printed = subprocess.run(
            program, input=f"{prefix}KEY={MODEL_KEY}\n".encode(), capture_output=True, check=True
        ).stdout.decode()
        redacted = redactor.redact(printed)
        assert "[redacted secret]" in redacted, (program, printed)
        plain = "".join(redacted.split())
        for piece in (MODEL_KEY[i : i + 10] for i in range(0, len(MODEL_KEY) - 10, 5)):
            assert piece not in plain and piece.encode().hex() not in plain


def test_pieces_of_a_known_secret_are_redacted() -> None:
    redactor = SecretRedactor(lambda: [MODEL_KEY])
    text = f"first: {MODEL_KEY[:17]}\nsecond: {MODEL_KEY[17:]}\n"
    redacted = redactor.redact(text)
    assert MODEL_KEY[3:15] not in redacted and MODEL_KEY[20:32] not in redacted


# -- 4. the system prompt: redacted, and no instruction file that is a link to a secret ----------------------

GIT_CONFIG = (
    "[core]\n\trepositoryformatversion = 0\n"
    '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46RkFLRXRva2Vu\n'
    '[remote "origin"]\n\turl = https://x-access-token:ghs_FAKEgitconfigtoken0123456789@github.com/o/r.git\n'
)


async def prompt_sent(root: Path, secrets: list[str] | None = None) -> str:
    """The system prompt the model receives in a real turn (scripted model on 127.0.0.1)."""
    from agent_harness import make_manager, make_runtime, run_turn
    from scripted_model import ScriptedModel, text

    with ScriptedModel([text("ok")]) as model:
        settings = ExecutorSettings(redactor=SecretRedactor(lambda: secrets or []))
        runtime = make_runtime(root, model, [], executor_settings=settings)
        session = make_manager(root.parent / "store", runtime).create()
        await run_turn(session, "hello")
        messages = model.requests[-1]["messages"]
    assert messages[0]["role"] == "system"
    return str(messages[0]["content"])


@pytest.fixture
def repo_with_credentials(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".git" / "config").write_text(GIT_CONFIG)
    (root / "AGENTS.md").write_text("Use tabs.\n")
    return root


@pytest.mark.asyncio
@pytest.mark.parametrize("link", ["symlink", "hardlink"])
async def test_an_instruction_file_linked_to_git_config_puts_nothing_of_it_into_the_prompt(
    repo_with_credentials: Path, link: str
) -> None:
    root = repo_with_credentials
    if link == "symlink":
        (root / "CLAUDE.md").symlink_to(".git/config")
    else:
        os.link(root / ".git" / "config", root / "CLAUDE.md")
    prompt = await prompt_sent(root)
    assert "Use tabs." in prompt  # the ordinary instruction file is read
    assert "extraheader" not in prompt and "eC1hY2Nlc3MtdG9rZW46RkFLRXRva2Vu" not in prompt
    assert "ghs_FAKEgitconfigtoken" not in prompt and "repositoryformatversion" not in prompt


@pytest.mark.asyncio
async def test_an_instruction_file_linked_to_a_notebook_or_a_secret_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".hdsp" / "rules").mkdir(parents=True)
    (root / "analysis.ipynb").write_text(
        json.dumps({"cells": [{"cell_type": "code", "source": "x", "outputs": [{"text": DOTENV_VALUE}]}]})
    )
    (root / ".env").write_text(f"KEY={DOTENV_VALUE}\n")
    (root / "AGENTS.md").symlink_to("analysis.ipynb")
    (root / ".cursorrules").symlink_to(".env")
    (root / ".hdsp" / "rules" / "style.md").symlink_to("../../analysis.ipynb")
    os.link(root / ".env", root / ".hdsp" / "rules" / "more.md")
    prompt = await prompt_sent(root)
    assert DOTENV_VALUE not in prompt and "outputs" not in prompt


@pytest.mark.asyncio
async def test_two_instruction_files_that_are_one_file_are_still_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "AGENTS.md").write_text("Prefer pathlib.\n")
    os.link(root / "AGENTS.md", root / "CLAUDE.md")  # a common way to share one file between agents
    assert "Prefer pathlib." in await prompt_sent(root)


@pytest.mark.asyncio
async def test_the_system_prompt_passes_the_same_redaction_as_tool_results(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "AGENTS.md").write_text(
        f"Deploy with key {MODEL_KEY}.\nMirror: https://ghp_FAKEtoken0123456789abcdef@github.com/o/r.git\n"
    )
    prompt = await prompt_sent(root, secrets=[MODEL_KEY])
    assert "Deploy with key [redacted secret]." in prompt
    assert MODEL_KEY not in prompt and "ghp_FAKEtoken0123456789abcdef" not in prompt


# -- 5. git's credentials count as secrets -------------------------------------------------------------------


def policy_check(root: Path, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hdsp_agent.cli",
            "policy",
            "check",
            tool,
            json.dumps(arguments),
            "--root",
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("run_terminal_command", {"command": "cat .git/config"}),
        ("run_terminal_command", {"command": "git config --get http.https://github.com/.extraheader"}),
        ("run_terminal_command", {"command": "git config --list"}),
        ("read_file", {"filepath": ".git/config"}),
        ("read_file", {"filepath": "keys/server.ppk"}),
    ],
)
def test_reading_git_credentials_or_a_putty_key_asks(
    repo_with_credentials: Path, tool: str, arguments: dict[str, Any]
) -> None:
    assert policy_check(repo_with_credentials, tool, arguments)["decision"] == "ask"


@pytest.mark.asyncio
async def test_what_git_prints_of_its_credentials_is_redacted(
    repo_with_credentials: Path, secret_env: None
) -> None:
    """``git remote -v`` runs without asking (it is how one sees the remotes); its tokens are redacted, and
    so is a header git config prints once the user approves it."""
    sandbox = make_sandbox("bubblewrap")
    tool = RunTerminalCommandTool(sandbox=sandbox, startup_seconds=0.5)
    policy = RulePolicy(AdminFloor(), None, repo_with_credentials, sandbox.status)
    approver = Approver()
    executor = ToolExecutor(
        ToolRegistry([tool]),
        policy=policy,
        approver=approver,
        settings=ExecutorSettings(redactor=SecretRedactor(lambda: [])),
    )
    ctx = ToolContext(root_dir=repo_with_credentials, session_id="s1")
    command = "git remote -v; git config --get-all http.https://github.com/.extraheader"
    result = await executor.execute(
        ToolCall(id="c1", name=tool.name, arguments=json.dumps({"command": command})), ctx
    )
    assert result.status == "ok" and "github.com/o/r.git" in result.content
    assert "ghs_FAKEgitconfigtoken" not in result.content
    assert (
        "eC1hY2Nlc3MtdG9rZW46RkFLRXRva2Vu" not in result.content and "AUTHORIZATION: basic" in result.content
    )


# -- 6. paging tools redact before they cut ------------------------------------------------------------------


def test_redaction_recognises_git_credentials_in_every_spelling() -> None:
    redactor = SecretRedactor()
    text = (
        "extraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46RkFLRQ==\n"
        "extraheader = Authorization: Bearer FAKEbearer0123456789abcdef\n"
        "origin ghp_FAKEtokenFAKEtoken0123456@github.com:org/repo.git (fetch)\n"
        "mirror analyst:FAKEpassw0rd@gitlab.example.com/org/repo.git\n"
        "url = https://x-access-token:ghs_FAKEinurl0123456789@github.com/o/r.git\n"
        "keep git@github.com:x/y.git and ssh://git@github.com/x/y.git and user@example.com\n"
    )
    redacted = redactor.redact(text)
    for fake in ("eC1hY2Nl", "FAKEbearer", "ghp_FAKEtoken", "FAKEpassw0rd", "ghs_FAKEinurl"):
        assert fake not in redacted, fake
    assert "git@github.com:x/y.git and ssh://git@github.com/x/y.git and user@example.com" in redacted


# A known secret placed so that a page (or a line, or the head of a long output) ends six characters into it:
# too short a piece for redaction by value to recognise on its own, so only redacting before the cut helps.
SPLIT = 6


def redacting_executor(*tools: Any, policy: Any = None) -> ToolExecutor:
    settings = ExecutorSettings(redactor=SecretRedactor(lambda: [MODEL_KEY]))
    return ToolExecutor(ToolRegistry(list(tools)), policy=policy, approver=Approver(), settings=settings)


@pytest.mark.asyncio
async def test_get_cell_output_redacts_before_it_pages(tmp_path: Path) -> None:
    import nbformat
    from jupyter_server.services.contents.filemanager import FileContentsManager

    from hdsp_agent.tools.jupyter import notebook_tools

    cell = nbformat.v4.new_code_cell("print(key)", id="c1")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a" * 200 + MODEL_KEY + "b" * 200)]
    (tmp_path / "nb.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook(cells=[cell])))
    executor = redacting_executor(*notebook_tools())
    ctx = ToolContext(root_dir=tmp_path, contents_manager=FileContentsManager(root_dir=str(tmp_path)))
    pages = []
    for offset in (0, 200 + SPLIT):
        arguments = {"path": "nb.ipynb", "cell_id": "c1", "offset": offset, "limit": 200 + SPLIT}
        result = await executor.execute(
            ToolCall(id="c", name="get_cell_output", arguments=json.dumps(arguments)), ctx
        )
        assert result.status == "ok", result.content
        pages.append(result.content)
    assert MODEL_KEY[:SPLIT] not in pages[0] and MODEL_KEY[SPLIT:] not in pages[1]
    assert not any(MODEL_KEY[i : i + 8] in page for page in pages for i in range(len(MODEL_KEY) - 8))


@pytest.mark.asyncio
async def test_read_notebook_redacts_before_it_shortens_a_cell(tmp_path: Path) -> None:
    import nbformat
    from jupyter_server.services.contents.filemanager import FileContentsManager

    from hdsp_agent.tools.jupyter import notebook_tools

    cell = nbformat.v4.new_code_cell("key = '" + "a" * (100 - 7 - SPLIT) + MODEL_KEY + "'", id="c1")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="b" * (100 - SPLIT) + MODEL_KEY)]
    (tmp_path / "nb.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook(cells=[cell])))
    executor = redacting_executor(*notebook_tools())
    ctx = ToolContext(root_dir=tmp_path, contents_manager=FileContentsManager(root_dir=str(tmp_path)))
    arguments = json.dumps({"path": "nb.ipynb"})
    result = await executor.execute(ToolCall(id="c", name="read_notebook", arguments=arguments), ctx)
    assert result.status == "ok" and "c1" in result.content
    assert MODEL_KEY[:SPLIT] not in result.content


@pytest.mark.asyncio
async def test_read_file_redacts_a_long_line_before_it_cuts_it(tmp_path: Path) -> None:
    from hdsp_agent.tools.builtin.files import ReadFileTool

    (tmp_path / "log.txt").write_text("a" * (2000 - SPLIT) + MODEL_KEY + "\n")
    result = await redacting_executor(ReadFileTool()).execute(
        ToolCall(id="c", name="read_file", arguments=json.dumps({"filepath": "log.txt"})),
        ToolContext(root_dir=tmp_path),
    )
    assert result.status == "ok" and "line cut" in result.content
    assert MODEL_KEY[:SPLIT] not in result.content


@pytest.mark.asyncio
async def test_a_long_command_output_is_redacted_before_its_head_and_tail_are_cut(
    project: Path, secret_env: None
) -> None:
    from hdsp_agent.tools.builtin.processes import OutputCapture

    sandbox = make_sandbox("bubblewrap")
    capture = OutputCapture(Path("unused"), 30_000)
    # The head ends SPLIT characters into one key, the tail begins SPLIT characters before the end of another.
    (project / "out" / "big.txt").write_text(
        "a" * (capture.head_chars - SPLIT)
        + MODEL_KEY
        + "b" * 60_000
        + MODEL_KEY
        + "c" * (capture.tail_chars - SPLIT)
    )
    tool = RunTerminalCommandTool(sandbox=sandbox, startup_seconds=0.5)
    policy = RulePolicy(AdminFloor(), None, project, sandbox.status)
    ctx = ToolContext(
        root_dir=project, session_id="s1", client_context={"session_dir": str(project.parent / "logs")}
    )
    result = await redacting_executor(tool, policy=policy).execute(
        ToolCall(id="c", name=tool.name, arguments=json.dumps({"command": "cat out/big.txt"})), ctx
    )
    assert result.status == "ok" and "characters cut from the middle" in result.content
    assert MODEL_KEY[:SPLIT] not in result.content and MODEL_KEY[-SPLIT:] not in result.content


def test_values_that_are_not_key_like_are_redacted_whole_only() -> None:
    """A secret-named variable may hold a path or a word: its pieces are everywhere and stay."""
    redactor = SecretRedactor(lambda: ["/var/run/secrets/kubernetes.io/token", MODEL_KEY])
    text = "see /var/run/secrets/other and /var/run/secrets/kubernetes.io/token"
    assert redactor.redact(text) == "see /var/run/secrets/other and [redacted secret]"
