"""The Python side of the wire contract: contracts/wire.json is what the pydantic models generate.

The TypeScript side is src/__tests__/wireSchema.spec.ts, against the same file. A model changed on purpose:
``make wire-schema``, then mirror the change in src/ until jest passes.
"""

from __future__ import annotations

import json
from typing import Literal

from hdsp_agent import wire_schema
from hdsp_agent.events import TurnStartEvent


def test_the_committed_schema_is_what_the_models_generate() -> None:
    committed = json.loads(wire_schema.SCHEMA_PATH.read_text())
    assert committed == wire_schema.wire_schema(), "the wire models changed: run `make wire-schema`"
    assert wire_schema.main(["--check"]) == 0


def test_a_changed_model_no_longer_matches(monkeypatch) -> None:
    class Drifted(TurnStartEvent):
        type: Literal["turn.start"] = "turn.start"
        extra: str = ""

    before = wire_schema.render()
    monkeypatch.setattr(wire_schema, "AgentEvent", Drifted)
    assert wire_schema.render() != before
    assert wire_schema.main(["--check"]) == 1


def test_every_event_command_and_notebook_edit_is_in_it() -> None:
    schema = wire_schema.wire_schema()
    events = set(schema["events"]["discriminator"]["mapping"])
    assert {"tool.status", "approval.request", "turn.end", "session.updated"} <= events
    assert set(schema["commands"]["discriminator"]["mapping"]) == {
        "send",
        "approve",
        "deny",
        "cancel",
        "resume",
        "run_plan",
    }
    edits = set(schema["notebook_edits"]["discriminator"]["mapping"])
    assert edits == {"insert_cell", "set_cell_source", "delete_cell", "move_cell", "set_cell_outputs"}


def test_every_rest_model_is_in_it_with_its_typescript_mirror() -> None:
    from hdsp_agent.web.rest_models import REST_MODELS

    schema = wire_schema.wire_schema()
    names = [model.__name__ for model in REST_MODELS]
    assert schema["rest"]["models"] == names
    assert set(names) <= set(schema["rest"]["$defs"])
    assert schema["typescript"]["rest"]["types"] == {name: f"I{name}" for name in names}
    # Every section has a mirror the TypeScript check reads (src/__tests__/wireSchema.spec.ts).
    assert set(schema["typescript"]) == set(schema) - {"$comment", "typescript"}
