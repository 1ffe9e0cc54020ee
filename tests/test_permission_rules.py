"""Rule syntax and pattern matching (``permissions/rules.py``)."""

from __future__ import annotations

import pytest

from hdsp_agent.permissions.rules import (
    Rule,
    RuleError,
    Subject,
    glob_escape,
    literal_text,
    parse_rules,
    rule_for_subject,
)


def command(text: str) -> Subject:
    return Subject("command", text, tuple(text.split()))


def path(relative: str) -> Subject:
    return Subject("path", relative, relative=relative, absolute=f"/project/{relative}")


@pytest.mark.parametrize(
    ("text", "tool", "pattern"),
    [
        ("run_terminal_command(git status*)", "run_terminal_command", "git status*"),
        ("read_file(**/.env*)", "read_file", "**/.env*"),
        ("myserver__*", "myserver__*", None),
        ("  ls  ", "ls", None),
        ("ls()", "ls", None),
        ("run_terminal_command(echo $(date))", "run_terminal_command", "echo $(date)"),
    ],
)
def test_rules_parse(text: str, tool: str, pattern: str | None) -> None:
    rule = Rule.parse(text)
    assert (rule.tool, rule.pattern) == (tool, pattern)


@pytest.mark.parametrize("text", ["", "run terminal", "ls(x", "(x)", "tool/name(x)"])
def test_malformed_rules_are_refused_with_an_example(text: str) -> None:
    with pytest.raises(RuleError, match="e.g. run_terminal_command"):
        Rule.parse(text)


def test_parse_rules_keeps_the_good_ones_and_reports_the_rest() -> None:
    rules, problems = parse_rules(["ls", "bad rule", "read_file(x)"], "user")
    assert [rule.text for rule in rules] == ["ls", "read_file(x)"]
    assert len(problems) == 1 and "bad rule" in problems[0]


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("git status*", "git status", True),
        ("git status*", "git status --short", True),
        ("git status", "git status --short", True),
        ("git status", "git stash", False),
        ("git*", "git push origin", True),
        ("git *", "git", True),
        ("npm run *", "npm run build", True),
        ("npm run *", "npm test", False),
        ("ls -la", "ls", False),
        ("pytest tests/*", "pytest tests/unit", True),
    ],
)
def test_command_patterns_match_words_as_a_prefix(pattern: str, text: str, matches: bool) -> None:
    assert (
        Rule.parse(f"run_terminal_command({pattern})").matches("run_terminal_command", command(text))
        is matches
    )


@pytest.mark.parametrize(
    ("pattern", "relative", "matches"),
    [
        ("src/*", "src/a.py", True),
        ("src/*", "src/sub/a.py", False),
        ("src/**", "src/sub/a.py", True),
        ("**/.env*", ".env", True),
        ("**/.env*", "config/deep/.env.local", True),
        ("*.py", "src/a.py", False),
        ("**/*.py", "src/a.py", True),
        ("src/?.py", "src/a.py", True),
        ("src/[ab].py", "src/c.py", False),
        ("/project/**", "src/a.py", True),
        ("./src/a.py", "src/a.py", True),
    ],
)
def test_path_patterns_keep_single_stars_within_a_directory(
    pattern: str, relative: str, matches: bool
) -> None:
    assert Rule.parse(f"read_file({pattern})").matches("read_file", path(relative)) is matches


def test_url_and_text_patterns_use_plain_globs() -> None:
    rule = Rule.parse("fetch_url_content(https://docs.python.org/*)")
    assert rule.matches("fetch_url_content", Subject("url", "https://docs.python.org/3/library/os.html"))
    assert not rule.matches("fetch_url_content", Subject("url", "https://docs.python.org.evil.com/"))
    assert Rule.parse("fetch_url_content(docs.python.org/*)").matches(
        "fetch_url_content", Subject("url", "https://docs.python.org/3/")
    )
    assert Rule.parse("search_web(*python*)").matches("search_web", Subject("text", "learn python fast"))


def test_a_rule_applies_only_to_its_tools() -> None:
    assert Rule.parse("myserver__*").matches("myserver__query", None)
    assert not Rule.parse("myserver__*").matches("other__query", None)
    assert not Rule.parse("read_file(x)").matches("read_file", None)


def test_always_rules_name_exactly_one_subject() -> None:
    rule = Rule.parse(rule_for_subject("run_terminal_command", "ls *.py"))
    assert rule.text == "run_terminal_command(ls [*].py)"
    assert rule.is_exact_for(Subject("command", "ls *.py"))
    assert not rule.matches("run_terminal_command", command("ls secret.py"))
    assert rule_for_subject("myserver__go", None) == "myserver__go"
    assert literal_text(glob_escape("a?b[c]*")) == "a?b[c]*"
    assert literal_text("src/*") is None
    assert Rule.parse("read_file(.env)").is_exact_for(path(".env"))
    assert not Rule.parse("read_file(.env*)").is_exact_for(path(".env"))
