"""Streamed text reaches the sidebar in batches, and never waits for the next chunk to be shown."""

from __future__ import annotations

import asyncio

import pytest

from hdsp_agent.agent.relay import DeltaBatcher
from hdsp_agent.events import AssistantDeltaEvent

pytestmark = pytest.mark.asyncio


async def test_words_before_a_pause_are_shown_during_the_pause() -> None:
    # A model that sends "A lo" and then thinks for a long time: the words go out within the interval,
    # not when the next chunk comes.
    sent: list[AssistantDeltaEvent] = []
    batcher = DeltaBatcher("msg_1", sent.append, interval=0.02)
    batcher.add("text", "A lo")
    assert sent == []  # held for the interval, to merge a fast stream's chunks
    await asyncio.sleep(0.2)
    assert [event.text for event in sent] == ["A lo"]


async def test_chunks_arriving_within_the_interval_go_out_as_one_event() -> None:
    sent: list[AssistantDeltaEvent] = []
    batcher = DeltaBatcher("msg_1", sent.append, interval=0.05)
    for piece in ["A ", "long ", "answer"]:
        batcher.add("text", piece)
    await asyncio.sleep(0.3)
    assert [event.text for event in sent] == ["A long answer"]
    batcher.flush()  # nothing left: no empty event
    assert len(sent) == 1


async def test_thinking_and_answer_stay_apart_and_in_order() -> None:
    sent: list[AssistantDeltaEvent] = []
    batcher = DeltaBatcher("msg_1", sent.append, interval=10)
    batcher.add("reasoning", "let me see")
    batcher.add("text", "Yes.")
    batcher.flush()
    assert [(event.kind, event.text) for event in sent] == [("reasoning", "let me see"), ("text", "Yes.")]
