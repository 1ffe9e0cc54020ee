"""Paths the model gives, judged by the policy: escapes, symlinks, secrets, ``.git/``, devices, critical
dirs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hdsp_agent.permissions.decision import PolicyDecision
from hdsp_agent.permissions.paths import (
    critical_path_reason,
    device_write_problem,
    inspect_path,
    is_sensitive,
    read_action,
    resolve_in_root,
    write_action,
)
from hdsp_agent.permissions.policy import AdminFloor, RulePolicy
from hdsp_agent.tools.base import PermissionKind, ToolError


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(project root, a directory outside it) with secrets, links and a .git directory."""
    base = tmp_path_factory.mktemp("paths")
    root, outside = base / "project", base / "outside"
    for name in (
        "README.md",
        "src/app.py",
        ".env",
        ".env.example",
        "config/.env.local",
        "keys/server.pem",
        ".git/config",
        "notes.txt",
        "config/credentials.json",
        ".ssh/config",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (root / "link_out").symlink_to(outside)
    (root / "link_env").symlink_to(root / ".env")
    (root / "link_file_out").symlink_to(outside / "secret.txt")
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    (root / "src" / "up").symlink_to(root)
    return root, outside


def _policy(mode: str = "default") -> RulePolicy:
    return RulePolicy(AdminFloor(mode=mode))  # type: ignore[arg-type]


def _read(root: Path, path: str) -> PolicyDecision:
    return _policy().check("read_file", {"filepath": path}, read_action(root, path), root, read_only=True)


def _write(root: Path, path: str, mode: str = "default", *, delete: bool = False) -> PolicyDecision:
    tool = "delete_file" if delete else "create_new_file"
    action = write_action(root, path, "preview", delete=delete)
    return _policy(mode).check(tool, {"filepath": path}, action, root)


READ_CASES = [
    ("README.md", "allow"),
    ("src/app.py", "allow"),
    ("./src/app.py", "allow"),
    ("src/../README.md", "allow"),
    ("src//app.py", "allow"),
    ("src/./app.py", "allow"),
    ("does/not/exist.txt", "allow"),
    (".git/config", "ask"),  # credentials: http.extraheader, tokens in remote URLs
    (".git/description", "allow"),
    (".env.example", "allow"),
    ("src/up/README.md", "allow"),
    (".env", "ask"),
    (".env.local", "ask"),
    (".env.production", "ask"),
    ("config/.env.local", "ask"),
    ("keys/server.pem", "ask"),
    ("server.key", "ask"),
    ("id_rsa", "ask"),
    ("id_ed25519.pub", "ask"),
    (".ssh/config", "ask"),
    (".aws/credentials", "ask"),
    ("config/credentials.json", "ask"),
    (".netrc", "ask"),
    (".npmrc", "ask"),
    ("link_env", "ask"),
    ("src/../.env", "ask"),
    ("../outside/secret.txt", "ask"),
    ("..", "ask"),
    ("/etc/passwd", "ask"),
    ("/", "ask"),
    ("~", "ask"),
    ("~/.bashrc", "ask"),
    ("src/../../outside", "ask"),
    ("link_out/secret.txt", "ask"),
    ("link_file_out", "ask"),
    ("notes.txt\x00.env", "deny"),
    ("loop_a", "deny"),
]

WRITE_CASES = [
    ("src/new.py", "default", "ask"),
    ("new.txt", "default", "ask"),
    ("a/b/c/deep.txt", "default", "ask"),
    ("./src/./x.py", "default", "ask"),
    (".git/config", "default", "ask"),
    (".git/hooks/pre-commit", "default", "ask"),
    (".env", "default", "ask"),
    ("keys/new.pem", "default", "ask"),
    ("link_env", "default", "ask"),
    ("src/..", "default", "ask"),
    ("../x.py", "default", "deny"),
    ("/tmp/x.py", "default", "deny"),
    ("~/x.py", "default", "deny"),
    ("/etc/passwd", "default", "deny"),
    ("src/../../x", "default", "deny"),
    ("link_out/x.py", "default", "deny"),
    ("link_file_out", "default", "deny"),
    ("x\x00y", "default", "deny"),
    ("src/new.py", "accept-edits", "allow"),
    ("notes.txt", "accept-edits", "allow"),
    (".git/config", "accept-edits", "ask"),
    (".env", "accept-edits", "ask"),
    ("../x.py", "accept-edits", "deny"),
    ("src/new.py", "read-only", "deny"),
]


@pytest.mark.parametrize(("path", "expected"), READ_CASES, ids=[repr(p) for p, _ in READ_CASES])
def test_read_of_a_path_gets_its_decision(layout: tuple[Path, Path], path: str, expected: str) -> None:
    root, _ = layout
    decision = _read(root, path)
    assert decision.decision == expected, decision.reasons
    assert decision.reasons


@pytest.mark.parametrize(
    ("path", "mode", "expected"), WRITE_CASES, ids=[f"{m}:{p!r}" for p, m, _ in WRITE_CASES]
)
def test_write_of_a_path_gets_its_decision(
    layout: tuple[Path, Path], path: str, mode: str, expected: str
) -> None:
    root, _ = layout
    decision = _write(root, path, mode)
    assert decision.decision == expected, decision.reasons


def test_absolute_paths_inside_the_root_count_as_inside(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    assert _read(root, str(root / "README.md")).decision == "allow"
    assert _read(root, str(root / ".env")).decision == "ask"
    assert _write(root, str(root / "src" / "x.py"), "accept-edits").decision == "allow"


def test_deletes_ask_inside_and_are_denied_outside(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    assert _write(root, "notes.txt", delete=True).decision == "ask"
    assert _write(root, "notes.txt", "accept-edits", delete=True).decision == "ask"  # deletes are not edits
    assert _write(root, str(outside / "secret.txt"), delete=True).decision == "deny"


def test_reasons_say_what_is_wrong_with_the_path(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    assert _read(root, ".env").reasons == ["reads .env, which may hold secrets"]
    assert _write(root, "../x.py").reasons == ["writes ../x.py, outside the project"]
    assert _write(root, ".git/description").reasons == [
        "writes .git/description, inside the repository's .git directory",
        "It changes files in your project",
    ]
    # git's config is a protected path (test_protected_paths.py): its own reason, and nothing else to lift
    assert _write(root, ".git/config").reasons == [
        "writes .git/config: git configuration or hooks (they run commands on the next git call)"
    ]


def test_inspect_path_resolves_links_and_classifies(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    facts = inspect_path(root, "link_out/secret.txt")
    assert facts.resolved == (outside / "secret.txt").resolve() and not facts.inside
    linked = inspect_path(root, "link_env")
    assert linked.inside and linked.sensitive and linked.resolved == (root / ".env").resolve()
    git = inspect_path(root, ".git/config")
    assert git.inside and git.git_internal and git.sensitive  # it holds credentials
    assert not inspect_path(root, ".git/description").sensitive
    assert inspect_path(root, "a\x00b").problem == "the path contains a NUL byte"
    assert inspect_path(root, "loop_a").problem is not None
    assert inspect_path(root, "app.py", cwd=root / "src").resolved == (root / "src" / "app.py").resolve()


def test_read_action_reports_outside_and_sensitive_reads(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    assert read_action(root, "README.md") is None
    outside = read_action(root, "../outside/secret.txt")
    assert outside is not None and outside.kind == PermissionKind.FILE_READ
    secret = read_action(root, "link_env")
    assert secret is not None and secret.kind == PermissionKind.FILE_READ_SENSITIVE
    assert read_action(root, "loop_a") is None  # the tool reports the unusable path itself


def test_resolve_in_root_refuses_escapes_nul_bytes_and_loops(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    for bad in ("../x", "/etc/passwd", "link_out/secret.txt", "a\x00b", "loop_a"):
        with pytest.raises(ToolError):
            resolve_in_root(root, bad)
    assert resolve_in_root(root, "src/up/README.md") == (root / "README.md").resolve()


def test_write_action_reports_the_path_as_given() -> None:
    action = write_action(Path("/x"), "src/a.py", "--- diff")
    assert (action.kind, action.target, action.detail) == (PermissionKind.FILE_WRITE, "src/a.py", "--- diff")
    assert write_action(Path("/x"), "a", delete=True).kind == PermissionKind.FILE_DELETE


@pytest.mark.parametrize(
    ("name", "sensitive"),
    [
        (".env", True),
        (".env.test", True),
        (".env.example", False),
        ("id_dsa", True),
        ("cert.p12", True),
        (".pypirc", True),
        ("notes.env", False),
        ("README.md", False),
        (".docker/config.json", True),
        ("app.keystore", True),
    ],
)
def test_sensitive_names(name: str, sensitive: bool) -> None:
    assert is_sensitive(Path(name)) is sensitive


def test_critical_paths_are_the_root_home_system_dirs_and_the_projects_parents(
    layout: tuple[Path, Path],
) -> None:
    root, _ = layout
    home = Path(os.path.expanduser("~")).resolve()
    assert critical_path_reason(Path("/"), root) == "the filesystem root"
    assert critical_path_reason(home, root) == "the home directory"
    assert critical_path_reason(Path("/usr"), root) is not None
    assert critical_path_reason(Path("/usr/lib"), root) is not None
    assert critical_path_reason(root.parent, root) is not None
    assert critical_path_reason(root.resolve(), root) is None
    assert critical_path_reason((root / "src").resolve(), root) is None
    assert critical_path_reason(Path("/usr/local/lib/python3/site-packages"), root) is None


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/dev/null", None),
        ("/dev/stderr", None),
        ("/dev/fd/3", None),
        ("/dev/sda", True),
        ("/dev/nvme0n1", True),
        ("/dev/mapper/root", True),
        ("/dev/mem", True),
        ("/dev/ttyS0", False),
        ("/tmp/x", None),
    ],
)
def test_device_writes(target: str, expected: bool | None) -> None:
    problem = device_write_problem(target)
    assert (problem[1] if problem else None) == expected


def test_reading_a_second_hard_link_of_a_file_asks(tmp_path: Path) -> None:
    """Issue 24: a hard link inside the project may be another name of a secret file or one outside it
    (here a fake key beside the project); no check by name or place sees that, so reading it asks, through
    the read tools' action and the policy's own check. A file with one name stays a plain read."""
    from hdsp_agent.config import HdspAgentConfig
    from hdsp_agent.permissions.paths import read_action
    from hdsp_agent.permissions.policy import build_policy

    root = tmp_path / "project"
    root.mkdir()
    outside = tmp_path / "id_deploy"
    outside.write_text("sk-test-FAKE0000000000000000\n")
    os.link(outside, root / "notes.md")
    (root / "plain.md").write_text("plain\n")
    policy = build_policy(HdspAgentConfig(), root, permissions_file=tmp_path / "permissions.json")
    action = read_action(root, "notes.md")
    assert action is not None and "hard links" in action.detail
    decision = policy.check("read_file", {"filepath": "notes.md"}, action, root)
    assert decision.decision == "ask" and "hard links" in " ".join(decision.reasons)
    assert read_action(root, "plain.md") is None
    assert policy.check("read_file", {"filepath": "plain.md"}, None, root).decision == "allow"
