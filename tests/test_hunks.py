"""Per-hunk review of the agent's file edits: the hunk logic, and ``hunks`` / ``undo-hunk`` over the real
Jupyter server with a turn of the scripted model that edits a real file.

The server tests run on pytest-jupyter's own event loop (no asyncio mark: with it, requests hang).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import tornado.httpclient
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.agent.hunks import Hunk, HunkConflict, hunks_between, revert_hunk

BEFORE = "".join(f"line {n}\n" for n in range(1, 21))


def edited(text_: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        assert old in text_
        text_ = text_.replace(old, new, 1)
    return text_


# -- the hunk logic ----------------------------------------------------------------------------------------


def test_hunks_are_the_changed_regions_with_editor_line_numbers() -> None:
    after = edited(BEFORE, {"line 2\n": "line two\n", "line 15\n": "", "line 20\n": "line 20\nline 21\n"})
    hunks = hunks_between(BEFORE, after)
    assert hunks == [
        Hunk(old_start=1, old_lines=("line 2",), new_start=1, new_lines=("line two",)),
        Hunk(old_start=14, old_lines=("line 15",), new_start=14, new_lines=()),
        Hunk(old_start=20, old_lines=(), new_start=19, new_lines=("line 21",)),
    ]


def test_a_created_file_is_one_inserted_hunk() -> None:
    assert hunks_between("", "a\nb\n") == [Hunk(old_start=0, old_lines=(), new_start=0, new_lines=("a", "b"))]


def test_reverting_one_hunk_leaves_the_others() -> None:
    after = edited(BEFORE, {"line 2\n": "line two\n", "line 15\n": "line fifteen\n"})
    first, second = hunks_between(BEFORE, after)
    reverted, hunk = revert_hunk(BEFORE, after, second)
    assert hunk == second
    assert reverted == edited(BEFORE, {"line 2\n": "line two\n"})
    assert revert_hunk(BEFORE, reverted, first)[0] == BEFORE


def test_reverting_finds_the_hunk_after_lines_moved_above_it() -> None:
    after = edited(BEFORE, {"line 15\n": "line fifteen\n"})
    (hunk,) = hunks_between(BEFORE, after)
    # The user adds two lines at the top since: the hunk is two lines further down, still intact.
    moved = "# a\n# b\n" + after
    reverted, _ = revert_hunk(BEFORE, moved, hunk)
    assert reverted == "# a\n# b\n" + BEFORE


def test_a_hunk_the_user_edited_since_is_refused() -> None:
    after = edited(BEFORE, {"line 15\n": "line fifteen\n"})
    (hunk,) = hunks_between(BEFORE, after)
    touched = after.replace("line fifteen", "line fifteen (mine)")
    with pytest.raises(HunkConflict, match="edited since"):
        revert_hunk(BEFORE, touched, hunk)


def test_a_hunk_undone_already_is_refused() -> None:
    after = edited(BEFORE, {"line 15\n": "line fifteen\n"})
    (hunk,) = hunks_between(BEFORE, after)
    with pytest.raises(HunkConflict, match="nothing to undo"):
        revert_hunk(BEFORE, BEFORE, hunk)


# -- over the server ----------------------------------------------------------------------------------------


@pytest.fixture
def jp_server_config(
    jp_server_config: dict[str, Any], scripted_model: ScriptedModel, tmp_path: Path
) -> dict[str, Any]:
    return {
        **jp_server_config,
        "HdspAgentApp": {
            "model": "scripted",
            "base_url": scripted_model.base_url,
            "api_key": "sk-test",
            "max_retries": 0,
            "store_path": str(tmp_path / "sessions.sqlite3"),
        },
    }


async def run_editing_turn(
    jp_fetch: Any, jp_ws_fetch: Any, scripted_model: ScriptedModel, edits: list[tuple[str, str]]
) -> str:
    """A turn in "accept edits" mode whose model replaces each ``old`` with ``new`` in notes.txt."""
    scripted_model.add(
        tool_calls(
            *[
                (
                    "single_find_and_replace",
                    json.dumps({"filepath": "notes.txt", "old_string": old, "new_string": new}),
                )
                for old, new in edits
            ]
        ),
        text("Edited."),
    )
    created = await jp_fetch("hdsp-agent", "sessions", method="POST", body="{}")
    session_id = json.loads(created.body)["id"]
    ws = await jp_ws_fetch("hdsp-agent", "sessions", session_id, "ws")
    ws.write_message(json.dumps({"type": "resume", "since_seq": 0}))
    ws.write_message(
        json.dumps({"type": "send", "content": "edit notes", "context": {"mode": "accept-edits"}})
    )
    while True:
        message = json.loads(await asyncio.wait_for(ws.read_message(), 20))
        if message.get("type") == "turn.end":
            assert message["reason"] == "completed", message
            break
    ws.close()
    return str(session_id)


async def fetch_hunks(jp_fetch: Any, session_id: str, path: str) -> list[dict[str, Any]]:
    reply = await jp_fetch("hdsp-agent", "sessions", session_id, "hunks", params={"path": path})
    return list(json.loads(reply.body)["hunks"])


async def post_undo_hunk(jp_fetch: Any, session_id: str, body: Any) -> Any:
    return await jp_fetch(
        "hdsp-agent", "sessions", session_id, "undo-hunk", method="POST", body=json.dumps(body)
    )


async def test_undo_hunk_restores_one_hunk_and_keeps_the_rest(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, scripted_model: ScriptedModel
) -> None:
    notes = jp_root_dir / "notes.txt"
    notes.write_bytes(BEFORE.replace("\n", "\r\n").encode())  # CRLF endings stay CRLF
    session_id = await run_editing_turn(
        jp_fetch, jp_ws_fetch, scripted_model, [("line 4", "line four"), ("line 15", "line fifteen")]
    )
    hunks = await fetch_hunks(jp_fetch, session_id, "notes.txt")
    assert [(h["new_start"], h["old_lines"], h["new_lines"]) for h in hunks] == [
        (3, ["line 4"], ["line four"]),
        (14, ["line 15"], ["line fifteen"]),
    ]

    reply = await post_undo_hunk(jp_fetch, session_id, {"path": "notes.txt", "hunk": hunks[1]})
    assert json.loads(reply.body)["restored"] == ["notes.txt: line 15 restored"]
    assert json.loads(reply.body)["hunks"] == [hunks[0]]
    expected = edited(BEFORE, {"line 4\n": "line four\n"}).replace("\n", "\r\n")
    assert notes.read_bytes() == expected.encode()

    # The same hunk again: it is gone, and the file is left as it is.
    with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
        await post_undo_hunk(jp_fetch, session_id, {"path": "notes.txt", "hunk": hunks[1]})
    assert caught.value.code == 409
    assert notes.read_bytes() == expected.encode()


async def test_undo_hunk_refuses_a_hunk_the_user_edited_since(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, scripted_model: ScriptedModel
) -> None:
    notes = jp_root_dir / "notes.txt"
    notes.write_text(BEFORE)
    session_id = await run_editing_turn(jp_fetch, jp_ws_fetch, scripted_model, [("line 15", "line fifteen")])
    (hunk,) = await fetch_hunks(jp_fetch, session_id, "notes.txt")
    mine = notes.read_text().replace("line fifteen", "line fifteen, and my words")
    notes.write_text(mine)

    with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
        await post_undo_hunk(jp_fetch, session_id, {"path": "notes.txt", "hunk": hunk})
    assert caught.value.code == 409
    assert "edited since" in caught.value.response.body.decode()
    assert notes.read_text() == mine, "the user's edit is not overwritten"


async def test_hunk_routes_reject_bad_input_and_unchanged_files(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, scripted_model: ScriptedModel
) -> None:
    (jp_root_dir / "notes.txt").write_text(BEFORE)
    (jp_root_dir / "other.txt").write_text("untouched\n")
    session_id = await run_editing_turn(jp_fetch, jp_ws_fetch, scripted_model, [("line 3", "line three")])
    assert await fetch_hunks(jp_fetch, session_id, "other.txt") == []

    for body, code in [
        ({"path": "notes.txt"}, 400),  # no hunk
        ({"path": "notes.txt", "hunk": {"old_start": -1, "old_lines": [], "new_start": 0}}, 400),
        ({"path": "../outside.txt", "hunk": Hunk(old_start=0, old_lines=(), new_start=0, new_lines=())}, 400),
        ({"path": "other.txt", "hunk": Hunk(old_start=0, old_lines=(), new_start=0, new_lines=())}, 409),
    ]:
        if isinstance(body.get("hunk"), Hunk):
            body = {**body, "hunk": body["hunk"].model_dump()}
        with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
            await post_undo_hunk(jp_fetch, session_id, body)
        assert caught.value.code == code, body
    assert (jp_root_dir / "notes.txt").read_text() == BEFORE.replace("line 3\n", "line three\n")


async def test_the_whole_turn_still_undoes_after_one_hunk_was_undone(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, scripted_model: ScriptedModel
) -> None:
    """Per-hunk undo and whole-turn undo work together: the kept hunks still count as the agent's change, so
    the turn's undo restores the file as it was before the turn (not a conflict)."""
    notes = jp_root_dir / "notes.txt"
    notes.write_text(BEFORE)
    session_id = await run_editing_turn(
        jp_fetch, jp_ws_fetch, scripted_model, [("line 4", "line four"), ("line 15", "line fifteen")]
    )
    hunks = await fetch_hunks(jp_fetch, session_id, "notes.txt")
    await post_undo_hunk(jp_fetch, session_id, {"path": "notes.txt", "hunk": hunks[0]})
    assert notes.read_text() == edited(BEFORE, {"line 15\n": "line fifteen\n"})

    await jp_fetch("hdsp-agent", "sessions", session_id, "undo", method="POST", body="{}")
    assert notes.read_text() == BEFORE
