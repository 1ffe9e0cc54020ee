"""What a shell command leaves behind (tools/builtin/shell_changes.py, sandbox/overlay.py): real bubblewrap
(and the Landlock layer for the fallback), real files in a tmp project, a scratch HOME.

A sandboxed command writes into an overlay; afterwards the server applies its changes to the project, drops
the ones that would run or instruct later (and names them), and records the rest in the turn's change set,
so the review, per-hunk undo, turn undo and redo treat them like an edit tool's.

SAFETY: every "payload" is a harmless marker text written by ``python3 -c`` from Python data; nothing runs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.agent.hunks import Hunk
from hdsp_agent.permissions.approval import ApprovalReply, ApprovalRequest
from hdsp_agent.permissions.decision import PolicyDecision, ReadOnlyPolicy
from hdsp_agent.permissions.policy import AdminFloor, RulePolicy
from hdsp_agent.permissions.protected import write_protection
from hdsp_agent.permissions.rules import Rule
from hdsp_agent.sandbox import Sandbox, SandboxSettings, overlay_setup, runner
from hdsp_agent.tools.base import ToolCall, ToolContext, ToolResult
from hdsp_agent.tools.builtin import shell_changes
from hdsp_agent.tools.builtin.edit.filestate import FileStateStore
from hdsp_agent.tools.builtin.processes import ProcessTracker
from hdsp_agent.tools.builtin.terminal import RunTerminalCommandTool
from hdsp_agent.tools.executor import ToolExecutor
from hdsp_agent.tools.registry import ToolRegistry
from hdsp_agent.tools.state import ToolState

# The system's Python: a user's (pyenv, a venv under the home) is hidden by the sandbox.
PYTHON = "/usr/bin/python3"
MARKER = "hdsp-test-marker: this text would have run or instructed later\n"


def make_sandbox(layer: str) -> Sandbox:
    sandbox = Sandbox(SandboxSettings(layer=layer))  # type: ignore[arg-type]
    if sandbox.status.layer != layer:
        pytest.skip(f"SANDBOX LAYER {layer.upper()} NOT AVAILABLE HERE: {sandbox.status.reason}")
    return sandbox


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scratch_home = tmp_path / "home"
    scratch_home.mkdir()
    monkeypatch.setenv("HOME", str(scratch_home))
    return scratch_home


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n")
    (root / "old.txt").write_text("to be deleted\n")
    (root / "tree" / "inner").mkdir(parents=True)
    (root / "tree" / "a.txt").write_text("a\n")
    (root / "tree" / "inner" / "b.bin").write_bytes(bytes(range(256)))
    (root / "analysis.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    # A virtualenv of the project, as `python -m venv .venv` leaves it (the parts that matter here).
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.0\n")
    (root / ".venv" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def python_writes(files: dict[str, str]) -> str:
    """A command that writes ``files`` from Python (no redirect the command analyser could read)."""
    script = "import os\n"
    for name, content in files.items():
        script += f"os.makedirs(os.path.dirname({name!r}) or '.', exist_ok=True)\n"
        script += f"open({name!r}, 'w').write({content!r})\n"
    return f"{PYTHON} -c {shlex.quote(script)}"


class RecordingApprover:
    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self.requests.append(request)
        return ApprovalReply(approved=False)


async def run_allowed(sandbox: Sandbox, root: Path, command: str, store: FileStateStore) -> ToolResult:
    """``command`` through the executor under a rule that allows ``PYTHON`` commands: it runs sandboxed,
    without asking anyone."""
    tool = RunTerminalCommandTool(sandbox=sandbox, file_state=store)
    admin = AdminFloor(allow=(Rule.parse(f"run_terminal_command({PYTHON} *)", "admin"),))
    approver = RecordingApprover()
    executor = ToolExecutor(
        ToolRegistry([tool]), policy=RulePolicy(admin, None, root, sandbox.status), approver=approver
    )
    ctx = ToolContext(
        root_dir=root, session_id="s1", client_context={"session_dir": str(root.parent / "logs")}
    )
    result = await executor.execute(
        ToolCall(id="c1", name=tool.name, arguments=json.dumps({"command": command})), ctx
    )
    assert approver.requests == [], "the command was to run without asking"
    assert result.details.get("run_mode") == "sandboxed", result.content
    return result


def tree(root: Path) -> dict[str, bytes | str]:
    """Every file below ``root`` (but .git) with its bytes, every link with its target."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/") and not rel.startswith((".git/hooks/", ".git/config")):
            continue
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found


# -- what runs later is never written unasked ----------------------------------------------------------------

# Checked on main: sitecustomize.py, usercustomize.py and the .pth hook were left in the project (main's
# sandbox only mounts the protected places that already exist read-only); .git/hooks and .hdsp/rules were
# already read-only there and stay covered.
RUNS_LATER_TODAY = [
    ".git/hooks/post-checkout",
    ".hdsp/rules/always.md",
    "sitecustomize.py",
    "src/usercustomize.py",
    ".venv/lib/python3.11/site-packages/hook.pth",
]
# What runs later (permissions/runs_later.py, protected.py): instruction files, virtualenvs, kernel start
# modules, Jupyter/IPython dirs.
RUNS_LATER_AFTER_MERGE = [
    "AGENTS.md",
    "CLAUDE.md",
    ".cursorrules",
    ".venv/bin/python",
    ".venv/lib/python3.11/site-packages/requests.py",
    "ipykernel_launcher.py",
    ".jupyter/jupyter_server_config.d/x.json",
    ".ipython/profile_default/startup/00-start.py",
]


@pytest.mark.asyncio
@pytest.mark.parametrize("name", RUNS_LATER_TODAY + RUNS_LATER_AFTER_MERGE)
async def test_a_command_run_without_asking_leaves_nothing_that_runs_or_instructs_later(
    project: Path, name: str
) -> None:
    sandbox = make_sandbox("bubblewrap")
    assert write_protection(project / name, project, name) is not None, name
    store = FileStateStore()
    before = tree(project)
    command = python_writes({"ordinary.txt": "kept\n", name: MARKER})  # the protected write may fail inside
    result = await run_allowed(sandbox, project, command, store)
    assert not (project / name).exists(), result.content
    assert tree(project) == {**before, "ordinary.txt": b"kept\n"}  # nothing else either
    dropped = [item["path"] for item in result.details.get("not_written", [])]
    if dropped:  # written into the overlay, then dropped: named (the file, or the protected folder it is in)
        assert len(dropped) == 1 and (name + "/").startswith(dropped[0] + "/"), dropped
        assert "Not written: " + dropped[0] in result.content
    else:  # or it was read-only inside the sandbox already (.git/hooks, .hdsp/, a missing instruction file
        # covered by /dev/null), and the write failed there
        assert "Read-only file system" in result.content or "Permission denied" in result.content, (
            result.content
        )
    assert [item["path"] for item in result.details["changed_files"]] == ["ordinary.txt"]


@pytest.mark.asyncio
async def test_a_link_that_points_at_a_protected_file_is_not_left_behind(project: Path) -> None:
    sandbox = make_sandbox("bubblewrap")
    script = (
        "import os; os.symlink('.git/hooks/pre-commit', 'notes.md'); os.symlink('src/app.py', 'app-link.py')"
    )
    result = await run_allowed(sandbox, project, f"{PYTHON} -c {shlex.quote(script)}", FileStateStore())
    assert not (project / "notes.md").is_symlink(), result.content
    assert os.readlink(project / "app-link.py") == "src/app.py"  # an ordinary link is applied
    assert "notes.md" in result.content and "Not written" in result.content


# -- every change is reviewable and undoable -----------------------------------------------------------------

CHANGES = (
    "printf 'new\\x00bytes\\xff' > created.bin && "
    "sed -i 's/line 2/LINE TWO/; s/line 6/LINE SIX/' src/app.py && "
    "rm old.txt && rm -r tree/inner && "
    "mkdir -p fresh/deep && echo deep > fresh/deep/file.txt && chmod +x fresh/deep/file.txt"
)
EXPECTED = {
    "created.bin": "created",
    "src/app.py": "changed",
    "old.txt": "deleted",
    "tree/inner/b.bin": "deleted",
    "fresh/deep/file.txt": "created",
}


class _AllowAll(ReadOnlyPolicy):
    def decide(self, tool: Any, args: Any, action: Any, ctx: Any) -> Any:
        return PolicyDecision("allow", ["test"])


def _shell(command: str) -> tuple[str, str]:
    return ("run_terminal_command", json.dumps({"command": command}))


@pytest.mark.asyncio
async def test_a_commands_changes_join_the_change_set_and_undo_and_redo_exactly(
    project: Path, tmp_path: Path
) -> None:
    sandbox = make_sandbox("bubblewrap")
    before = tree(project)
    script = [tool_calls(_shell(CHANGES)), text("Done.")]
    with ScriptedModel(script) as model:
        state = ToolState()
        tool = RunTerminalCommandTool(sandbox=sandbox, file_state=state.files)
        runtime = make_runtime(project, model, [tool], policy=_AllowAll(), state=state)
        manager = make_manager(project, runtime, tmp_path / "store" / "sessions.sqlite3")
        session = manager.create()
        events = await run_turn(session, "change things")
        done = [e for e in of_type(events, "tool.status") if e["status"] == "done"][0]
        listed = {item["path"]: item["change"] for item in done["details"]["changed_files"]}
        assert listed == EXPECTED, done["content"]
        assert all(item["undo_id"] for item in done["details"]["changed_files"])
        after = tree(project)
        assert after["created.bin"] == b"new\x00bytes\xff" and "old.txt" not in after
        assert os.stat(project / "fresh/deep/file.txt").st_mode & stat.S_IXUSR  # applied with its mode

        await session.undo_last_turn()
        assert tree(project) == before  # byte for byte, the deleted tree included
        undone = of_type(session.events, "turn.undone")[-1]
        assert set(EXPECTED) <= set(undone["paths"])

        await session.redo()
        assert tree(project) == after
        await manager.shutdown()


@pytest.mark.asyncio
async def test_one_hunk_of_a_shell_change_is_undone_and_the_rest_stays(project: Path, tmp_path: Path) -> None:
    sandbox = make_sandbox("bubblewrap")
    script = [tool_calls(_shell("sed -i 's/line 2/LINE TWO/; s/line 6/LINE SIX/' src/app.py")), text("Done.")]
    with ScriptedModel(script) as model:
        state = ToolState()
        tool = RunTerminalCommandTool(sandbox=sandbox, file_state=state.files)
        runtime = make_runtime(project, model, [tool], policy=_AllowAll(), state=state)
        manager = make_manager(project, runtime, tmp_path / "store" / "sessions.sqlite3")
        session = manager.create()
        await run_turn(session, "change app.py")
        hunks = await session.file_hunks("src/app.py")
        assert [hunk.new_lines for hunk in hunks] == [("LINE TWO",), ("LINE SIX",)]
        await session.undo_hunk("src/app.py", Hunk.model_validate(hunks[1].model_dump()))
        assert (
            project / "src/app.py"
        ).read_text() == "line 1\nLINE TWO\nline 3\nline 4\nline 5\nline 6\nline 7\n"
        await session.undo_last_turn()  # the rest of the turn still undoes
        assert (project / "src/app.py").read_text().startswith("line 1\nline 2\n")
        await manager.shutdown()


@pytest.mark.asyncio
async def test_a_file_too_large_to_keep_is_applied_and_said_to_have_no_undo(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = make_sandbox("bubblewrap")
    monkeypatch.setattr(shell_changes, "PRIOR_FILE_MAX_BYTES", 10)
    result = await run_allowed(
        sandbox, project, python_writes({"src/app.py": "replaced\n"}), FileStateStore()
    )
    assert (project / "src/app.py").read_text() == "replaced\n"
    assert "Undo is not available for: src/app.py" in result.content
    assert result.details["changed_files"][0]["undo_id"] is None


@pytest.mark.asyncio
async def test_a_background_commands_changes_are_applied_and_recorded_when_it_exits(project: Path) -> None:
    sandbox = make_sandbox("bubblewrap")
    store, tracker = FileStateStore(), ProcessTracker()
    tool = RunTerminalCommandTool(tracker=tracker, sandbox=sandbox, file_state=store, startup_seconds=0.2)
    ctx = ToolContext(
        root_dir=project, session_id="s1", client_context={"session_dir": str(project.parent / "logs")}
    )
    command = "sleep 1; echo later > later.txt; python3 -c \"open('sitecustomize.py','w').write('x')\""
    output = await tool.run(tool.args_model(command=command, waitForCompletion=False), ctx)
    assert "overlay" in output.content and not (project / "later.txt").exists()
    entry = tracker.list("s1")[0]
    assert entry.pump is not None
    await asyncio.wait_for(entry.pump, 20)
    assert (project / "later.txt").read_text() == "later\n"
    assert not (project / "sitecustomize.py").exists()
    assert [record.shown_as for record in store.records("s1")] == ["later.txt"]
    assert entry.changes is not None and entry.changes["not_written"][0]["path"] == "sitecustomize.py"


# -- the fallback: no overlay ------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_without_an_overlay_the_changes_are_listed_and_created_files_can_be_undone(
    project: Path,
) -> None:
    sandbox = make_sandbox("landlock")  # Landlock has no overlay: the project is compared before and after
    store = FileStateStore()
    # Landlock lets a command write inside the project's existing folders (not at its top level).
    command = python_writes(
        {"src/new.py": "x = 1\n", "src/app.py": "rewritten\n", "src/sitecustomize.py": MARKER}
    )
    result = await run_allowed(sandbox, project, command, store)
    listed = {
        item["path"]: (item["change"], item["undo_id"] is not None)
        for item in result.details["changed_files"]
    }
    assert listed == {"src/new.py": ("created", True), "src/app.py": ("changed", False)}, result.content
    assert "Undo is not available for: src/app.py" in result.content
    # A created file that would run later is removed again, and named.
    assert not (project / "src" / "sitecustomize.py").exists()
    assert "Not written: src/sitecustomize.py" in result.content
    assert [record.prior for record in store.records("s1")] == [None]  # undo deletes the created file


@pytest.mark.asyncio
async def test_an_unsandboxed_command_is_compared_before_and_after_and_nothing_is_dropped(
    project: Path,
) -> None:
    store = FileStateStore()
    tool = RunTerminalCommandTool(file_state=store)  # no sandbox: runs as approved, unsandboxed
    ctx = ToolContext(
        root_dir=project, session_id="s1", client_context={"session_dir": str(project.parent / "logs")}
    )
    command = "echo n > made.txt && rm old.txt && echo x >> src/app.py && echo approved > sitecustomize.py"
    output = await tool.run(tool.args_model(command=command), ctx)
    listed = {item["path"]: item["change"] for item in output.details["changed_files"]}
    assert listed == {
        "made.txt": "created",
        "sitecustomize.py": "created",
        "src/app.py": "changed",
        "old.txt": "deleted",
    }, output.content
    assert (project / "sitecustomize.py").exists()  # the user approved running it outside the sandbox
    assert "not_written" not in output.details


@pytest.mark.asyncio
async def test_an_opaque_mark_the_command_sets_itself_deletes_nothing(project: Path) -> None:
    sandbox = make_sandbox("bubblewrap")
    # Under root, user.overlay.opaque is an ordinary xattr the command can set through the overlay; read as
    # overlayfs's own mark it would make tree/ look replaced, and tree/a.txt deleted.
    script = (
        "import os; os.setxattr('tree', 'user.overlay.opaque', b'y'); open('tree/new.txt', 'w').write('n')"
    )
    result = await run_allowed(sandbox, project, f"{PYTHON} -c {shlex.quote(script)}", FileStateStore())
    assert (project / "tree" / "a.txt").read_text() == "a\n", result.content
    assert (project / "tree" / "inner" / "b.bin").exists()
    assert [item["path"] for item in result.details["changed_files"]] == ["tree/new.txt"]


@pytest.mark.asyncio
async def test_when_the_overlay_cannot_be_mounted_the_command_runs_once_with_the_fallback(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = make_sandbox("bubblewrap")
    # A scratch place the probe is told works, whose name overlayfs options cannot carry: the supervisor's
    # mount fails, the command does not run there, and the server runs it again with the stat walk.
    odd = tmp_path / "scratch:odd"
    odd.mkdir()
    monkeypatch.setattr(overlay_setup, "_broken", {})
    monkeypatch.setattr(runner, "scratch_base", lambda root: str(odd))
    monkeypatch.setattr(runner, "overlay_works", lambda root, base: overlay_setup._broken.get((root, base)))
    store = FileStateStore()
    result = await run_allowed(sandbox, project, python_writes({"src/made.txt": "once\n"}), store)
    assert (project / "src" / "made.txt").read_text() == "once\n", result.content
    assert [item["path"] for item in result.details["changed_files"]] == ["src/made.txt"]
    assert "did not run" not in result.content  # the failed attempt is not the result
    assert overlay_setup._broken  # later commands go straight to the fallback


@pytest.mark.asyncio
async def test_a_set_user_id_bit_the_command_sets_is_not_applied(project: Path) -> None:
    sandbox = make_sandbox("bubblewrap")
    script = "import os; open('tool.sh', 'w').write('echo hi'); os.chmod('tool.sh', 0o6755)"
    result = await run_allowed(sandbox, project, f"{PYTHON} -c {shlex.quote(script)}", FileStateStore())
    mode = (project / "tool.sh").stat().st_mode
    assert stat.S_IMODE(mode) == 0o755, (oct(mode), result.content)


@pytest.mark.asyncio
async def test_a_renamed_folder_arrives_whole(project: Path) -> None:
    # Without redirects, renaming a folder from below the overlay fails with EXDEV and mv (shutil.move) copies
    # it: the upper dir then holds all of it, and the old name a whiteout.
    sandbox = make_sandbox("bubblewrap")
    result = await run_allowed(
        sandbox, project, f"{PYTHON} -c \"import shutil; shutil.move('tree', 'moved')\"", FileStateStore()
    )
    assert not (project / "tree").exists(), result.content
    assert (project / "moved" / "a.txt").read_text() == "a\n"
    assert (project / "moved" / "inner" / "b.bin").read_bytes() == bytes(range(256))
    listed = {item["path"]: item["change"] for item in result.details["changed_files"]}
    assert listed == {
        "moved/a.txt": "created",
        "moved/inner/b.bin": "created",
        "tree/a.txt": "deleted",
        "tree/inner/b.bin": "deleted",
    }


@pytest.mark.asyncio
async def test_a_stopped_commands_changes_are_applied_and_recorded(project: Path) -> None:
    sandbox = make_sandbox("bubblewrap")
    store = FileStateStore()
    tool = RunTerminalCommandTool(sandbox=sandbox, file_state=store)
    ctx = ToolContext(
        root_dir=project, session_id="s1", client_context={"session_dir": str(project.parent / "logs")}
    )
    running = asyncio.ensure_future(
        tool.run(tool.args_model(command="echo partial > partial.txt; sleep 60"), ctx)
    )
    await asyncio.sleep(2.0)  # the file is written (into the overlay) and the command sleeps
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert (project / "partial.txt").read_text() == "partial\n"
    assert [record.shown_as for record in store.records("s1")] == ["partial.txt"]
