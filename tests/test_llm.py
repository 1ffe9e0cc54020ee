"""The real ``openai`` client against the scripted server: streaming, retries and error mapping."""

from __future__ import annotations

import socket

import pytest
from scripted_model import Reply, ScriptedModel, error, text, tool_calls

from hdsp_agent.agent.accumulator import StepDelta
from hdsp_agent.agent.llm import ModelClient, ModelError, ModelSettings

pytestmark = pytest.mark.asyncio
USER = [{"role": "user", "content": "hi"}]
LS_TOOL = [
    {
        "type": "function",
        "function": {"name": "ls", "description": "list", "parameters": {"type": "object", "properties": {}}},
    }
]


def client_for(model: ScriptedModel, **overrides) -> ModelClient:
    return ModelClient(ModelSettings(model="scripted", base_url=model.base_url, **overrides))


async def test_streams_text_deltas_and_returns_the_message() -> None:
    deltas: list[StepDelta] = []
    with ScriptedModel([text("Hello world", pieces=4, reasoning="let me think")]) as model:
        answer = await client_for(model).stream(USER, [], deltas.append)
    assert answer.content == "Hello world" and answer.reasoning == "let me think"
    assert "".join(d.text for d in deltas) == "Hello world"
    assert len([d for d in deltas if d.text]) == 4


async def test_tools_and_tool_choice_omitted_when_there_are_none() -> None:
    with ScriptedModel([text("a"), text("b")]) as model:
        client = client_for(model)
        await client.stream(USER, [], lambda d: None)
        await client.stream(USER, LS_TOOL, lambda d: None)
    assert "tools" not in model.requests[0] and "tool_choice" not in model.requests[0]
    assert model.requests[1]["tools"] == LS_TOOL and model.requests[1]["tool_choice"] == "auto"
    assert model.requests[0]["stream"] is True


async def test_tool_calls_with_llama_cpp_repeated_names() -> None:
    with ScriptedModel(
        [tool_calls(("ls", '{"dirPath": "."}'), ("read_file", '{"filepath": "a"}'), repeat_name=True)]
    ) as model:
        answer = await client_for(model).stream(USER, LS_TOOL, lambda d: None)
    assert [(c.name, c.arguments) for c in answer.tool_calls] == [
        ("ls", '{"dirPath": "."}'),
        ("read_file", '{"filepath": "a"}'),
    ]
    assert answer.finish_reason == "tool_calls"


@pytest.mark.fault
async def test_429_then_success_is_retried() -> None:
    with ScriptedModel([error(429, "slow down", retry_after=0), text("done")]) as model:
        answer = await client_for(model, max_retries=2).stream(USER, [], lambda d: None)
    assert answer.content == "done" and len(model.requests) == 2


@pytest.mark.parametrize(
    ("status", "code"),
    [(500, "E_MODEL_HTTP"), (401, "E_MODEL_AUTH"), (404, "E_MODEL_NOT_FOUND"), (429, "E_MODEL_RATE_LIMITED")],
)
async def test_http_errors_become_clear_model_errors(status: int, code: str) -> None:
    with ScriptedModel([error(status, "nope", retry_after=0)] * 3) as model:
        with pytest.raises(ModelError) as caught:
            await client_for(model, max_retries=0).stream(USER, [], lambda d: None)
    assert caught.value.code == code


async def test_a_gateway_quota_refusal_is_shown_with_its_message_and_not_retried() -> None:
    # What the hub's model gateway answers a user over quota (hdsp_agent/hub/gateway/handlers.py).
    refusal = Reply(
        status=429,
        body={
            "error": {
                "message": "alice has used 10 of the 10 model tokens allowed per day",
                "type": "quota_exceeded",
                "code": "daily_tokens",
            }
        },
        headers={"x-should-retry": "false"},
    )
    with ScriptedModel([refusal, text("never")]) as model:
        with pytest.raises(ModelError) as caught:
            await client_for(model, max_retries=2).stream(USER, [], lambda d: None)
    assert caught.value.code == "E_MODEL_QUOTA" and len(model.requests) == 1
    assert "model gateway refused this request: alice has used 10 of the 10" in str(caught.value.message)


@pytest.mark.fault
async def test_dropped_stream_is_a_stream_error_not_a_partial_answer() -> None:
    reply = text("Hello there, world", pieces=6)
    reply.drop_after = 3
    deltas: list[StepDelta] = []
    with ScriptedModel([reply]) as model:
        with pytest.raises(ModelError) as caught:
            await client_for(model, max_retries=0).stream(USER, [], deltas.append)
    assert caught.value.code == "E_MODEL_STREAM"
    assert deltas, "what arrived before the drop was relayed"


async def test_unreachable_endpoint() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = ModelClient(ModelSettings(model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0))
    with pytest.raises(ModelError) as caught:
        await client.stream(USER, [], lambda d: None)
    assert caught.value.code == "E_MODEL_UNREACHABLE" and str(port) in caught.value.message


@pytest.mark.fault
async def test_timeout_is_reported() -> None:
    reply = text("late")
    reply.hang = 2.0
    with ScriptedModel([reply]) as model:
        with pytest.raises(ModelError) as caught:
            await client_for(model, timeout=0.5, max_retries=0).stream(USER, [], lambda d: None)
    assert caught.value.code == "E_MODEL_TIMEOUT"


async def test_key_and_extra_headers_are_sent_and_a_placeholder_without_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedModel([text("a"), text("b")]) as model:
        await client_for(model, api_key="sk-test", extra_headers={"X-Team": "hdsp"}).stream(
            USER, [], lambda d: None
        )
        await client_for(model).stream(USER, [], lambda d: None)
    assert model.request_headers[0]["authorization"] == "Bearer sk-test"
    assert model.request_headers[0]["x-team"] == "hdsp"
    assert model.request_headers[1]["authorization"] == "Bearer no-key"


async def test_environment_base_url_and_key_are_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedModel([text("env")]) as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        answer = await ModelClient(ModelSettings(model="m")).stream(USER, [], lambda d: None)
    assert answer.content == "env"
    assert model.request_headers[0]["authorization"] == "Bearer sk-from-env"


@pytest.mark.fault
@pytest.mark.parametrize(
    "broken",
    [
        {"_raw": "{not json"},
        {"error": {"message": "the server fell over mid-stream", "type": "server_error"}},
    ],
    ids=["bad-json", "error-event"],
)
async def test_a_garbled_stream_is_a_clear_model_error(broken: dict[str, object]) -> None:
    """Whatever a broken server sends mid-stream, the turn gets a ModelError with a code, never a crash."""
    reply = text("Hello there", pieces=2)
    reply.chunks.insert(2, broken)
    with ScriptedModel([reply]) as model:
        with pytest.raises(ModelError) as caught:
            await client_for(model, max_retries=0).stream(USER, [], lambda d: None)
    assert caught.value.code == "E_MODEL_STREAM"
    assert "stream" in caught.value.message


@pytest.mark.fault
@pytest.mark.parametrize(
    "odd",
    [
        {"_raw": '"a string, not a chunk"'},
        {"_raw": "[1, 2, 3]"},
        {"type": "ping"},
        {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": "not an object"}]},
        {"id": "x", "object": "chat.completion.chunk", "choices": "not a list"},
    ],
    ids=["a-string", "a-list", "keep-alive", "delta-not-object", "choices-not-list"],
)
async def test_odd_events_in_a_stream_are_passed_over_and_the_answer_is_whole(odd: dict[str, object]) -> None:
    """Valid JSON that is not a completion chunk (a vendor's keep-alive) carries no answer: it is passed
    over and the text around it arrives whole."""
    reply = text("Hello there", pieces=2)
    reply.chunks.insert(2, odd)
    with ScriptedModel([reply]) as model:
        answer = await client_for(model, max_retries=0).stream(USER, [], lambda d: None)
    assert answer.content == "Hello there"
