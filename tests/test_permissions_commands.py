"""The shell analyser against a corpus of commands (``command_corpus.py``): parse only, nothing is ever run.

SAFETY: the corpus holds destructive commands. They go to ``analyze_command`` and nowhere else.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from command_corpus import ALLOW, ASK, DENY
from hypothesis import given, settings
from hypothesis import strategies as st

from hdsp_agent.permissions.shell.analyser import analyze_command

CASES = (
    [(command, "deny") for command in DENY]
    + [(command, "ask") for command in ASK]
    + [(command, "allow") for command in ALLOW]
)


def make_project(root: Path) -> Path:
    """The project the corpus's expectations assume."""
    for name, text in {
        "README.md": "# demo\n",
        "notes.txt": "notes\n",
        "a.txt": "a\n",
        "b.txt": "b\n",
        "data.csv": "x,y\n",
        "log.txt": "log\n",
        "run.sh": "echo hi\n",
        "script.py": "print(1)\n",
        "src/app.py": "# TODO\n",
        ".env": "API_KEY=secret\n",
        ".git/config": "[core]\n",
        "notebooks/explore.ipynb": "{}\n",
        "envs/conda1/conda-meta/history": "\n",
    }.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # A second name of the secret file, which no check by name sees (issue 24: hard links).
    os.link(root / ".env", root / "report.dat")
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("project"))


def _case_id(case: tuple[str, str]) -> str:
    command, expected = case
    shown = command.replace("\n", "\\n")
    return f"{expected}:{shown[:60]}"


def test_corpus_has_at_least_250_commands_of_every_kind() -> None:
    assert len(CASES) >= 250
    assert len(DENY) >= 100 and len(ASK) >= 100 and len(ALLOW) >= 80
    assert len({command for command, _ in CASES}) == len(CASES), "a command is listed twice"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(case) for case in CASES])
def test_corpus_command_gets_its_expected_decision(project: Path, case: tuple[str, str]) -> None:
    command, expected = case
    analysis = analyze_command(command, project)
    assert analysis.decision == expected, f"{command!r}: {analysis.decision}; reasons: {analysis.reasons}"
    assert analysis.reasons, "every decision comes with reasons"


@pytest.mark.parametrize("command", ALLOW[:40])
def test_appending_a_destructive_part_to_an_allowed_command_denies_it(project: Path, command: str) -> None:
    for joiner in ("; ", " && ", " || ", " | ", " & ", "\n"):
        chained = f"{command}{joiner}rm -rf ~"
        assert analyze_command(chained, project).decision == "deny", chained


def test_reasons_name_each_part_and_what_was_found(project: Path) -> None:
    analysis = analyze_command("git status; rm -rf ~", project)
    assert [part.text for part in analysis.parts] == ["git status", "rm -rf ~"]
    assert [part.decision for part in analysis.parts] == ["allow", "deny"]
    assert analysis.reasons[0] == "rm -rf ~: deletes the home directory recursively"


def test_substitutions_and_nested_scripts_are_parts_of_their_own(project: Path) -> None:
    analysis = analyze_command("echo $(cat README.md) && bash -c 'pip install x'", project)
    texts = [part.text for part in analysis.parts]
    assert "cat README.md" in texts
    assert "pip install x" in texts
    assert analysis.decision == "ask"


def test_find_exec_and_xargs_commands_are_analysed(project: Path) -> None:
    found = analyze_command("find . -exec rm -rf / \\;", project)
    assert any(part.argv[:3] == ("rm", "-rf", "/") and part.decision == "deny" for part in found.parts)
    piped = analyze_command("ls | xargs rm -rf", project)
    assert any(part.argv[:1] == ("rm",) for part in piped.parts)


def test_unparseable_input_asks_and_says_why(project: Path) -> None:
    analysis = analyze_command("case $x in a) ls;; esac", project)
    assert analysis.decision == "ask"
    assert not analysis.parsed
    assert "cannot be checked" in analysis.reasons[0]


def test_unparseable_input_with_a_destructive_part_is_denied(project: Path) -> None:
    analysis = analyze_command("case $x in a) rm -rf ~;; esac", project)
    assert analysis.decision == "deny"
    assert not analysis.parsed
    assert any("cannot be parsed" in reason and "home directory" in reason for reason in analysis.reasons)


def test_symlink_in_the_project_pointing_at_a_secret_is_a_secret(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    (root / "innocent.txt").symlink_to(root / ".env")
    assert analyze_command("cat innocent.txt", root).decision == "ask"


def test_redirect_through_a_symlink_leaving_the_project_asks(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "out").symlink_to(outside)
    assert analyze_command("echo hi > out/file.txt", root).decision == "ask"
    assert analyze_command("echo hi > src/file.txt", root).decision == "allow"


def test_working_directory_changes_what_relative_paths_mean(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    assert analyze_command("cat ../.env", root, cwd=root / "src").decision == "ask"
    assert analyze_command("cat app.py", root, cwd=root / "src").decision == "allow"


def test_a_very_long_command_is_denied_with_the_reason(project: Path) -> None:
    analysis = analyze_command("echo " + "a" * 30_000, project)
    assert analysis.decision == "deny"
    assert "too long to analyse" in analysis.reasons[0]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii"), max_size=60))
def test_any_text_gets_a_decision_and_never_crashes(text: str) -> None:
    root = Path(__file__).parent
    analysis = analyze_command(text, root)
    assert analysis.decision in ("allow", "ask", "deny")


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(ALLOW), st.sampled_from(["'", '"', "(", "$((", "`", "[[ "]))
def test_a_command_broken_by_a_stray_token_is_never_allowed(command: str, token: str) -> None:
    root = Path(__file__).parent
    analysis = analyze_command(f"{command} {token}", root)
    assert analysis.decision != "allow" or analysis.parsed


def test_a_repository_config_that_runs_programs_makes_git_ask(tmp_path: Path) -> None:
    """A project that arrives with its own .git (an unpacked archive): its config is what git obeys."""
    root = make_project(tmp_path / "project")
    assert analyze_command("git status", root).decision == "allow"
    (root / ".git" / "config").write_text('[core]\n\tbare = false\n[core]\n\tfsmonitor = "touch marker"\n')
    analysis = analyze_command("git status", root)
    assert analysis.decision == "ask"
    assert "core.fsmonitor" in analysis.reasons[0]
    (root / ".git" / "config").write_text('[diff "x"]\n\ttextconv = ./run.sh\n')
    assert analyze_command("git log -p", root).decision == "ask"
    (root / ".git" / "config").write_text('[remote "origin"]\n\turl = https://example.com/x\n')
    assert analyze_command("git log -p", root).decision == "allow"


def test_a_git_file_pointing_at_a_worktree_is_followed(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    main_git = tmp_path / "main.git"
    (main_git / "worktrees" / "w").mkdir(parents=True)
    (main_git / "config").write_text("[core]\n\tbare = false\n")
    (main_git / "worktrees" / "w" / "commondir").write_text("../..\n")
    (root / ".git" / "config").unlink()
    (root / ".git").rmdir()
    (root / ".git").write_text(f"gitdir: {main_git / 'worktrees' / 'w'}\n")
    assert analyze_command("git status", root).decision == "allow"
    (main_git / "config").write_text("[core]\n\tpager = ./run.sh\n")
    assert analyze_command("git log", root).decision == "ask"


def test_cd_through_a_symlink_leaving_the_project_judges_paths_from_there(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    (root / "link").symlink_to("/")
    assert analyze_command("cd link && rm -rf usr", root).decision == "deny"
    assert analyze_command("cd link && cat etc/hostname", root).decision == "ask"


def test_cd_base_is_kept_for_every_possible_directory(project: Path) -> None:
    """``cd a || cd b``: later paths are judged from every directory the command may be in."""
    analysis = analyze_command("cd src || cd /; rm -rf *", project)
    assert analysis.decision == "deny"
    assert analyze_command("cd src && cat app.py", project).decision == "allow"


def test_many_cds_end_in_an_unknown_directory_and_relative_paths_ask(project: Path) -> None:
    command = "; ".join(f"cd d{index}" for index in range(12)) + "; cat notes.txt"
    analysis = analyze_command(command, project)
    assert analysis.decision == "ask"
    assert any("known only at run time" in reason for reason in analysis.reasons)


_LOADERS = [
    "GIT_CONFIG_COUNT=1",
    "BASH_ENV=x",
    "LD_PRELOAD=x",
    "PYTHONPATH=.",
    "XDG_CONFIG_HOME=.",
    "PAGER=x",
]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(ALLOW), st.sampled_from(_LOADERS), st.sampled_from(["", "env ", "export "]))
def test_an_env_prefix_that_loads_code_is_never_allowed(command: str, assignment: str, how: str) -> None:
    root = Path(__file__).parent
    text = f"{how}{assignment}; {command}" if how == "export " else f"{how}{assignment} {command}"
    assert analyze_command(text, root).decision != "allow", text


_WRAPPERS = [
    "time ",
    "command ",
    "exec ",
    "nohup ",
    "nice ",
    "timeout 5 ",
    "env ",
    "env -C . ",
    "stdbuf -oL ",
]
_DISASTERS = ["rm -rf /", "rm -rf ~", "chmod -R 777 /", "rm -rf /{etc,usr}"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(_WRAPPERS), min_size=1, max_size=3), st.sampled_from(_DISASTERS))
def test_a_disaster_under_any_wrappers_is_denied(wrappers: list[str], disaster: str) -> None:
    root = Path(__file__).parent
    text = "".join(wrappers) + disaster
    assert analyze_command(text, root).decision == "deny", text


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["$(touch m)", "`touch m`", "${a[$(touch m)]}", "${x:-$(touch m)}"]), st.text(max_size=20)
)
def test_a_substitution_in_an_unquoted_here_document_is_never_allowed(payload: str, filler: str) -> None:
    root = Path(__file__).parent
    body = filler.replace("EOF", "").replace("\\", "") + payload
    text = f"cat <<EOF\n{body}\nEOF"
    assert analyze_command(text, root).decision != "allow", text


@pytest.mark.parametrize(
    "command",
    [
        "cat <<EOF\n" + "${x:-" * 3000 + "}" * 3000 + "\nEOF",
        "cat <<EOF\n" + "$(" * 3000 + ")" * 3000 + "\nEOF",
        "cat <<EOF\n" + "`ls` " * 3000 + "$(touch marker)\nEOF",
        "echo " + " ".join(["${a[x]}"] * 2000),
    ],
    ids=["nested-parameters", "nested-substitutions", "many-substitutions", "many-subscripts"],
)
def test_pathological_expansions_are_not_allowed_and_do_not_crash(project: Path, command: str) -> None:
    assert analyze_command(command, project).decision == "ask"


def test_a_secret_past_the_glob_limit_is_still_found(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    for index in range(600):
        (root / f"f{index:04}.txt").write_text("x")
    (root / "zz.pem").write_text("fake secret")
    assert analyze_command("cat *", root).decision == "ask"
    assert analyze_command("cat f*", root).decision == "allow"
