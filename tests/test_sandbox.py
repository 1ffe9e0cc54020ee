"""The sandbox's pure parts and the policy's run modes: the bwrap command line, the Landlock allowlist,
guarded paths, the environment, inert commands, and what the policy decides with and without a sandbox.

Nothing here runs a sandboxed command (``test_sandbox_exec.py`` does). SAFETY: command strings are only
analysed, never run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.permissions.decision import PolicyDecision
from hdsp_agent.permissions.policy import AdminFloor, RulePolicy, build_policy
from hdsp_agent.permissions.rules import parse_rules
from hdsp_agent.permissions.shell.analyser import analyze_command
from hdsp_agent.permissions.shell.inert import is_inert
from hdsp_agent.sandbox import SandboxSettings, SandboxStatus, settings_from_config
from hdsp_agent.sandbox.bwrap import SCRATCH_HOME, BwrapPlan, bwrap_argv
from hdsp_agent.sandbox.detect import detect
from hdsp_agent.sandbox.environment import sandbox_environment
from hdsp_agent.sandbox.landlock import ALL_RIGHTS, FS_READ_DIR, READ_RIGHTS
from hdsp_agent.sandbox.landlock_rules import landlock_rules
from hdsp_agent.sandbox.protect import GuardedPath, masked_paths, protected_paths
from hdsp_agent.tools.base import PermissionAction, PermissionKind

ACTIVE = SandboxStatus("bubblewrap", "test: bubblewrap works")
NONE = SandboxStatus("none", "test: no sandbox here")
REQUIRED_NONE = SandboxStatus("none", "test: no sandbox here", required=True)


def pairs(argv: list[str], option: str) -> list[tuple[str, str]]:
    """The (a, b) after each ``option a b`` in argv."""
    return [(argv[i + 1], argv[i + 2]) for i, word in enumerate(argv) if word == option]


def singles(argv: list[str], option: str) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv) if word == option]


# -- the bwrap command line ----------------------------------------------------------------------------------


def plan(**overrides: object) -> BwrapPlan:
    values: dict[str, object] = {
        "root": "/work/project",
        "cwd": "/work/project/src",
        "command": "ls -la",
        "env": {"PATH": "/usr/bin:/bin", "HOME": SCRATCH_HOME},
        "real_home": "/home/ada",
    }
    values.update(overrides)
    return BwrapPlan(**values)  # type: ignore[arg-type]


def test_bwrap_argv_isolates_everything_and_ends_with_the_command() -> None:
    argv = bwrap_argv(plan())
    for flag in ("--die-with-parent", "--new-session", "--unshare-all", "--clearenv", "--disable-userns"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert "--share-net" not in argv
    assert argv[-3:] == ["bash", "-c", "ls -la"]
    assert ("/", "/") in pairs(argv, "--ro-bind")
    assert ("/work/project", "/work/project") in pairs(argv, "--bind")
    assert singles(argv, "--proc") == ["/proc"] and singles(argv, "--dev") == ["/dev"]
    assert {"/tmp", "/home", "/root", "/run"} <= set(singles(argv, "--tmpfs"))
    assert singles(argv, "--chdir") == ["/work/project/src"]
    assert pairs(argv, "--setenv") == [("HOME", SCRATCH_HOME), ("PATH", "/usr/bin:/bin")]


def test_bwrap_argv_network_mode_shares_the_network_only() -> None:
    without, with_network = bwrap_argv(plan()), bwrap_argv(plan(network=True))
    assert [word for word in with_network if word != "--share-net"] == without


def test_the_project_is_bound_after_the_homes_are_hidden_and_guards_after_the_project() -> None:
    guarded = (
        GuardedPath("/home/ada/project/.git/hooks", True, True),
        GuardedPath("/home/ada/project/.hdsp", True, False),
        GuardedPath("/home/ada/project/.git/config", False, False),
    )
    argv = bwrap_argv(plan(root="/home/ada/project", cwd="/home/ada/project", guarded=guarded))
    home_hidden = argv.index("/home", argv.index("--tmpfs"))
    project = argv.index("--bind")
    assert home_hidden < project
    existing = argv.index("/home/ada/project/.git/hooks")
    assert argv[existing - 1] == "--ro-bind" and existing > project
    # A guarded directory that does not exist: an empty read-only tmpfs stands in, so it cannot be created.
    missing = argv.index("/home/ada/project/.hdsp")
    assert argv[missing - 1] == "--tmpfs" and argv[missing + 1 : missing + 3] == [
        "--remount-ro",
        argv[missing],
    ]
    assert ("/dev/null", "/home/ada/project/.git/config") in pairs(argv, "--ro-bind")


def test_masked_paths_are_covered_but_not_twice_nor_beneath_a_hidden_home() -> None:
    masked = (
        GuardedPath("/etc/jupyter", True, True),
        GuardedPath("/etc/jupyter/nbconfig", True, True),
        GuardedPath("/home/ada/.jupyter", True, True),
        GuardedPath("/etc/shadow", False, True),
    )
    argv = bwrap_argv(plan(masked=masked))
    assert "/etc/jupyter" in singles(argv, "--tmpfs")
    assert "/etc/jupyter/nbconfig" not in argv  # inside a masked (read-only) tmpfs already
    assert "/home/ada/.jupyter" not in argv  # the home is an empty tmpfs already
    assert ("/dev/null", "/etc/shadow") in pairs(argv, "--ro-bind")


def test_home_paths_are_shown_read_only_in_the_scratch_home() -> None:
    argv = bwrap_argv(plan(home_paths=(("/home/ada/.gitconfig", f"{SCRATCH_HOME}/.gitconfig"),)))
    assert ("/home/ada/.gitconfig", f"{SCRATCH_HOME}/.gitconfig") in pairs(argv, "--ro-bind-try")
    assert argv.index("--dir") < argv.index("/home/ada/.gitconfig")


# -- guarded and masked paths, the Landlock allowlist --------------------------------------------------------


def test_guarded_paths_include_missing_ones_that_would_change_the_agent(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "config").write_text("[core]\n")
    guarded = {Path(item.path).relative_to(tmp_path).as_posix(): item for item in protected_paths(tmp_path)}
    assert guarded[".git/hooks"].exists and guarded[".git/hooks"].is_dir
    assert guarded[".git/config"].exists and not guarded[".git/config"].is_dir
    assert not guarded[".hdsp"].exists and guarded[".hdsp"].is_dir
    assert not guarded[".continue"].exists
    assert ".git" not in guarded  # it exists: its config and hooks are guarded instead


def test_instruction_files_jupyter_config_and_the_projects_envs_are_guarded(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Be careful.\n")
    (tmp_path / "env-a" / "conda-meta").mkdir(parents=True)
    (tmp_path / "envs" / "b").mkdir(parents=True)
    (tmp_path / "envs" / "b" / "pyvenv.cfg").write_text("")
    (tmp_path / "deep" / "er" / "c").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "c" / "pyvenv.cfg").write_text("")  # below two levels: the policy's
    guarded = {Path(item.path).relative_to(tmp_path).as_posix(): item for item in protected_paths(tmp_path)}
    assert guarded["AGENTS.md"].exists and not guarded["AGENTS.md"].is_dir
    for missing in ("CLAUDE.md", ".cursorrules"):  # a missing one is held by an empty file: none is created
        assert not guarded[missing].exists and not guarded[missing].is_dir, missing
    for missing in (".jupyter", ".ipython"):
        assert not guarded[missing].exists and guarded[missing].is_dir, missing
    assert guarded["env-a"].exists and guarded["envs/b"].exists
    assert "deep/er/c" not in guarded


def test_a_project_without_git_cannot_get_one(tmp_path: Path) -> None:
    guarded = {Path(item.path).name: item for item in protected_paths(tmp_path)}
    assert guarded[".git"].is_dir and not guarded[".git"].exists


def test_admin_read_only_paths_inside_the_project_are_guarded(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    paths = {item.path for item in protected_paths(tmp_path, ["data", "/elsewhere/x"])}
    assert str(tmp_path / "data") in paths
    assert "/elsewhere/x" not in paths  # outside the project everything is read-only already


def test_jupyter_dirs_and_admin_paths_are_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_dir = tmp_path / "jupyter-config"
    config_dir.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(config_dir))
    secret_dir = tmp_path / "team-secrets"
    secret_dir.mkdir()
    masked = {item.path for item in masked_paths(tmp_path, [str(secret_dir), str(tmp_path / "missing")])}
    assert str(config_dir) in masked and str(secret_dir) in masked
    assert str(tmp_path / "missing") not in masked  # only what exists can be mounted over


def test_landlock_rules_carve_guarded_and_masked_paths_out(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("hi")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "objects").mkdir()
    guarded = protected_paths(root)
    rules = dict(landlock_rules(root, ["/scratch/home"], guarded, []))
    assert rules[str(root / "src")] == ALL_RIGHTS
    assert rules[str(root / "README.md")] == ALL_RIGHTS
    assert rules[str(root / ".git" / "objects")] == ALL_RIGHTS
    assert str(root / ".git" / "hooks") not in rules and str(root / ".git") not in rules
    assert rules[str(root)] == READ_RIGHTS  # the root itself: read, never create at its top level
    assert rules["/scratch/home"] == ALL_RIGHTS
    assert "/proc" not in rules and not any(path.startswith("/home") for path in rules)
    hidden = dict(landlock_rules(root, [], guarded, [GuardedPath(str(root / "src"), True, True)]))
    assert str(root / "src") not in hidden and hidden[str(root)] == FS_READ_DIR


# -- environment ---------------------------------------------------------------------------------------------


def test_the_environment_is_an_allowlist_with_the_project_venv_first(tmp_path: Path) -> None:
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    base = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "OPENAI_API_KEY": "sk-fake",
        "JUPYTER_TOKEN": "fake",
        "AWS_ACCESS_KEY_ID": "fake",
        "PYTHONPATH": "/evil",
        "HOME": "/home/ada",
    }
    env = sandbox_environment(base, tmp_path, "/scratch/home", "/scratch/tmp")
    assert env["PATH"] == f"{tmp_path / '.venv' / 'bin'}:/usr/bin:/bin"
    assert env["VIRTUAL_ENV"] == str(tmp_path / ".venv")
    assert env["HOME"] == "/scratch/home" and env["TMPDIR"] == "/scratch/tmp"
    assert env["LANG"] == "C.UTF-8" and env["LC_ALL"] == "C"
    assert not {"OPENAI_API_KEY", "JUPYTER_TOKEN", "AWS_ACCESS_KEY_ID", "PYTHONPATH"} & set(env)


# -- detection and settings ----------------------------------------------------------------------------------


def test_forcing_no_sandbox_says_so() -> None:
    status = detect("none")
    assert status.public() == {
        "layer": "none",
        "active": False,
        "reason": "the sandbox is turned off (HdspAgentApp.sandbox = 'none')",
        "required": False,
        # How the sidebar translates the reason (hdsp_agent/user_text.py).
        "texts": {
            "the sandbox is turned off (HdspAgentApp.sandbox = 'none')": {
                "id": "the sandbox is turned off (HdspAgentApp.sandbox = 'none')",
                "params": [],
            }
        },
    }


def test_detection_finds_a_working_layer_or_says_why() -> None:
    status = detect("auto")
    assert status.reason
    if os.path.exists("/usr/bin/bwrap"):
        assert status.layer == "bubblewrap", status.reason


def test_traits_become_sandbox_settings() -> None:
    config = HdspAgentConfig(
        sandbox="landlock",
        sandbox_required=True,
        sandbox_read_only_paths=["data"],
        sandbox_masked_paths=["/srv/secrets"],
        sandbox_home_paths=["~/.gitconfig"],
        sandbox_max_processes=32,
    )
    settings = settings_from_config(config)
    assert settings == SandboxSettings(
        layer="landlock",
        required=True,
        read_only_paths=("data",),
        masked_paths=("/srv/secrets",),
        home_paths=("~/.gitconfig",),
        limits=settings.limits,
    )
    assert settings.limits.max_processes == 32


# -- inert commands ------------------------------------------------------------------------------------------

INERT = [
    "ls -la",
    "ls -la src | head -n 5",
    "cat README.md && wc -l README.md",
    "echo 'a b'",
    "pwd",
    "head -20 x",
]
# Each one fails one condition of inert.py's docstring (data only: never run).
NOT_INERT = [
    "echo $HOME",
    "ls *",
    "ls ~",
    "ls {a,b}",
    'ls "a"',
    "ls > out",
    "FOO=1 ls",
    "ls &",
    "(ls)",
    "ls; touch x",
    "date -f list",
    "grep -f patterns file",
    "sort -o out in",
    "tail -f log",
    "wc --files0-from=list",
    "echo '$(id)'",
    "printf -v x y",
    "/bin/ls",
    "cat <<EOF\n$(id)\nEOF",
    "test -v 'a[$(id)]'",
]


@pytest.mark.parametrize("command", INERT)
def test_inert_commands(command: str) -> None:
    assert is_inert(command)


@pytest.mark.parametrize("command", NOT_INERT)
def test_commands_that_are_not_inert(command: str) -> None:
    assert not is_inert(command)


def test_inert_needs_the_analyser_to_allow_too(tmp_path: Path) -> None:
    assert analyze_command("ls -la", tmp_path).inert
    assert is_inert("cat /etc/passwd") and not analyze_command("cat /etc/passwd", tmp_path).inert


# -- the policy's run modes ----------------------------------------------------------------------------------


def decide(
    command: str, root: Path, sandbox: SandboxStatus | None, admin: AdminFloor | None = None
) -> PolicyDecision:
    policy = RulePolicy(admin or AdminFloor(), None, root, sandbox)
    action = PermissionAction(PermissionKind.EXECUTE, target=command)
    return policy.check("run_terminal_command", {"command": command}, action, root)


@pytest.mark.parametrize(
    ("command", "decision", "run_mode"),
    [
        ("ls -la", "allow", "sandboxed"),
        ("git status", "allow", "sandboxed"),
        ("python script.py", "ask", "sandboxed"),
        ("curl https://example.org", "ask", "network"),
        ("git fetch origin", "ask", "network"),
        ("pip install requests", "ask", "unsandboxed"),
        ("npm install", "ask", "unsandboxed"),
        ("rm -rf /", "deny", None),
    ],
)
def test_run_modes_with_a_sandbox(tmp_path: Path, command: str, decision: str, run_mode: str | None) -> None:
    result = decide(command, tmp_path, ACTIVE)
    assert (result.decision, result.run_mode) == (decision, run_mode)


def test_an_allow_rule_runs_sandboxed_even_for_a_network_command(tmp_path: Path) -> None:
    rules, problems = parse_rules(["run_terminal_command(curl*)"], "admin")
    assert not problems
    result = decide("curl https://example.org", tmp_path, ACTIVE, AdminFloor(allow=tuple(rules)))
    assert (result.decision, result.run_mode) == ("allow", "sandboxed")


def test_the_server_policy_knows_the_sandbox(tmp_path: Path) -> None:
    policy = build_policy(HdspAgentConfig(sandbox="none"), tmp_path, tmp_path / "permissions.json")
    assert policy.sandbox is not None and policy.sandbox.layer == "none"
    assert decide("git status", tmp_path, policy.sandbox).decision == "ask"


def test_required_sandbox_offers_no_unsandboxed_mode(tmp_path: Path) -> None:
    required = SandboxStatus("bubblewrap", "test", required=True)
    assert decide("pip install requests", tmp_path, required).run_mode == "network"


def test_without_a_sandbox_only_inert_commands_run_without_asking(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hi")
    inert = decide("cat README.md", tmp_path, NONE)
    assert (inert.decision, inert.run_mode) == ("allow", "unsandboxed")
    for command in ("git status", "ls $HOME", "grep -r x .", "echo hi > out.txt"):
        result = decide(command, tmp_path, NONE)
        assert (result.decision, result.run_mode) == ("ask", "unsandboxed"), command
    assert "no OS sandbox is available" in decide("git status", tmp_path, NONE).reasons[0]
    assert decide("rm -rf /", tmp_path, NONE).decision == "deny"


def test_a_required_sandbox_that_is_missing_refuses_every_command(tmp_path: Path) -> None:
    result = decide("ls", tmp_path, REQUIRED_NONE)
    assert result.decision == "deny" and "requires the OS sandbox" in result.reasons[0]


def test_other_tools_have_no_run_mode(tmp_path: Path) -> None:
    policy = RulePolicy(AdminFloor(), None, tmp_path, NONE)
    assert policy.check("read_file", {"filepath": "a.txt"}, None, tmp_path).run_mode is None
