from __future__ import annotations

import pytest

from hdsp_agent.tools.naming import (
    MAX_NAME_LENGTH,
    group_tool_name,
    is_valid_name,
    sanitize_part,
    split_tool_name,
)


def test_group_name_joins_with_double_underscore_and_splits_on_the_first() -> None:
    name = group_tool_name("github", "create_issue")
    assert name == "github__create_issue"
    assert split_tool_name(name) == ("github", "create_issue")


def test_plain_name_has_no_group() -> None:
    assert split_tool_name("read_file") == (None, "read_file")


@pytest.mark.parametrize(
    ("group", "export", "expected"),
    [
        ("my server", "do.thing", "my_server__do_thing"),
        ("a__b", "c__d", "a_b__c_d"),  # parts may not contain the separator
        ("ünï", "tool/x", "n__tool_x"),
        ("", "", "tool__tool"),
    ],
)
def test_parts_are_sanitized(group: str, export: str, expected: str) -> None:
    name = group_tool_name(group, export)
    assert name == expected
    assert is_valid_name(name)
    assert split_tool_name(name)[0] == sanitize_part(group)


def test_long_names_are_cut_to_64_and_stay_distinct() -> None:
    first = group_tool_name("a-very-long-server-name-for-testing", "export_" + "x" * 80 + "_one")
    second = group_tool_name("a-very-long-server-name-for-testing", "export_" + "x" * 80 + "_two")
    assert len(first) <= MAX_NAME_LENGTH and len(second) <= MAX_NAME_LENGTH
    assert first != second
    assert is_valid_name(first)
    group, export = split_tool_name(first)
    assert group is not None and "__" not in group and "__" not in export


@pytest.mark.parametrize("name", ["", "a" * 65, "has space", "dot.name", "ünicode"])
def test_invalid_names(name: str) -> None:
    assert not is_valid_name(name)
