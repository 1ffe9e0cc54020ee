"""The model gateway's own logic, without a hub: quotas, token counting, forwarding (streamed and not), the
central audit record, and the OpenAI-shaped refusals. The hub stands in as a table of tokens (``identify``);
tests/test_hub_gateway.py runs the same service under a real JupyterHub.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from jupyter_process import free_port
from scripted_model import ScriptedModel, text

from hdsp_agent.audit.log import AuditLog
from hdsp_agent.hub.gateway.app import make_app
from hdsp_agent.hub.gateway.auth import bearer_token
from hdsp_agent.hub.gateway.handlers import Gateway
from hdsp_agent.hub.gateway.quotas import Limits, QuotaRefused, Quotas, UsageLedger
from hdsp_agent.hub.gateway.settings import GatewaySettings, SettingsError
from hdsp_agent.hub.gateway.usage import UsageCount

MODEL_KEY = "sk-gateway-unit-not-real"
TOKENS = {"alice-token": "alice", "bob-token": "bob"}


def ledger_quotas(tmp_path: Path, limits: Limits) -> Quotas:
    return Quotas(limits, UsageLedger(tmp_path / "usage.sqlite3"))


# -- quotas -------------------------------------------------------------------------------------------------


def test_daily_token_limit_refuses_the_next_request_with_what_to_do(tmp_path: Path) -> None:
    quotas = ledger_quotas(tmp_path, Limits(daily_tokens=100))
    quotas.admit("alice")
    quotas.spent("alice", 120)
    quotas.release("alice")
    with pytest.raises(QuotaRefused) as refused:
        quotas.admit("alice")
    assert refused.value.code == "daily_tokens"
    assert "120 of the 100 model tokens allowed per day" in refused.value.message
    quotas.admit("bob")  # one user's use is not another's


def test_daily_requests_and_concurrency_are_per_user(tmp_path: Path) -> None:
    quotas = ledger_quotas(tmp_path, Limits(daily_requests=3, concurrent_requests=2))
    quotas.admit("alice")
    quotas.admit("alice")
    with pytest.raises(QuotaRefused) as running:
        quotas.admit("alice")
    assert running.value.code == "concurrent_requests" and "at once (2)" in running.value.message
    quotas.admit("bob")
    quotas.release("alice")
    quotas.admit("alice")  # the third of the day
    quotas.release("alice")
    with pytest.raises(QuotaRefused) as daily:
        quotas.admit("alice")
    assert daily.value.code == "daily_requests"


def test_the_days_counts_survive_a_restart_and_start_again_the_next_day(tmp_path: Path) -> None:
    day = [date(2026, 11, 27)]
    first = Quotas(Limits(daily_tokens=10), UsageLedger(tmp_path / "usage.sqlite3"), lambda: day[0])
    first.admit("alice")
    first.spent("alice", 10)
    first.ledger.close()
    again = Quotas(Limits(daily_tokens=10), UsageLedger(tmp_path / "usage.sqlite3"), lambda: day[0])
    with pytest.raises(QuotaRefused):
        again.admit("alice")
    day[0] = date(2026, 11, 28)
    again.admit("alice")


def test_usage_is_the_upstreams_count_or_an_estimate() -> None:
    reported = UsageCount(estimated_prompt=999)
    reported.add({"choices": [{"delta": {"content": "hello"}}]})
    reported.add({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}})
    assert reported.totals() == (12, 3) and not reported.estimated
    guessed = UsageCount(estimated_prompt=50)
    guessed.add({"choices": [{"delta": {"content": "x" * 10}}]})
    assert guessed.totals() == (50, 3) and guessed.estimated


def test_settings_refuse_a_malformed_limit_and_a_missing_upstream() -> None:
    with pytest.raises(SettingsError, match="UPSTREAM_URL"):
        GatewaySettings.from_environ({})
    with pytest.raises(SettingsError, match="DAILY_TOKENS"):
        GatewaySettings.from_environ(
            {"HDSP_GATEWAY_UPSTREAM_URL": "http://x/v1", "HDSP_GATEWAY_DAILY_TOKENS": "lots"}
        )
    settings = GatewaySettings.from_environ(
        {
            "HDSP_GATEWAY_UPSTREAM_URL": "http://x/v1/",
            "JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:10101",
            "JUPYTERHUB_SERVICE_PREFIX": "/services/hdsp-gateway/",
            "HDSP_GATEWAY_CONCURRENT_REQUESTS": "2",
        }
    )
    assert (settings.upstream_url, settings.port, settings.concurrent_requests) == ("http://x/v1", 10101, 2)
    assert (
        bearer_token("Bearer abc") == "abc"
        and bearer_token("token abc") == "abc"
        and bearer_token("") is None
    )


# -- forwarding ---------------------------------------------------------------------------------------------


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(report_usage=True) as scripted:
        yield scripted


@pytest_asyncio.fixture
async def gateway(tmp_path: Path, model: ScriptedModel) -> AsyncIterator[tuple[str, Gateway]]:
    key_file = tmp_path / "model-key"
    key_file.write_text(MODEL_KEY + "\n")
    port = free_port()
    settings = GatewaySettings(
        upstream_url=model.base_url.rstrip("/"),
        data_dir=tmp_path / "gateway",
        api_key_file=str(key_file),
        port=port,
        prefix="/services/hdsp-gateway/",
    )

    async def identify(token: str) -> str | None:
        return TOKENS.get(token)

    built = Gateway(
        settings=settings,
        identify=identify,
        quotas=Quotas(Limits(daily_tokens=1000), UsageLedger(settings.data_dir / "usage.sqlite3")),
        audit=AuditLog(settings.data_dir / "audit.jsonl"),
        client=httpx.AsyncClient(timeout=30),
    )
    server = make_app(built).listen(port, "127.0.0.1")
    yield f"http://127.0.0.1:{port}/services/hdsp-gateway/v1", built
    server.stop()
    await built.client.aclose()
    built.audit.close()


def audit_records(built: Gateway) -> list[dict[str, Any]]:
    path = built.settings.data_dir / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.asyncio
async def test_a_stream_is_passed_through_chunk_by_chunk_with_the_models_key(
    gateway: tuple[str, Gateway], model: ScriptedModel
) -> None:
    url, built = gateway
    reply = text("one two three four", pieces=4)
    reply.delay = 0.3
    model.add(reply)
    arrivals: list[float] = []
    events: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=30) as http:
        body = {"model": "scripted", "stream": True, "messages": [{"role": "user", "content": "count"}]}
        async with http.stream(
            "POST", url + "/chat/completions", json=body, headers={"Authorization": "Bearer alice-token"}
        ) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("data:") and line != "data: [DONE]":
                    arrivals.append(time.monotonic())
                    events.append(json.loads(line[5:]))
    # Chunks arrive as the model sends them (0.3 s apart), not all at once at the end.
    assert len(events) >= 4 and arrivals[-1] - arrivals[0] > 0.6
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in events if c["choices"]) == (
        "one two three four"
    )
    # The client did not ask for usage: the usage chunk the gateway asked for is not passed on.
    assert not any(chunk.get("usage") for chunk in events)
    assert model.request_headers[-1]["authorization"] == f"Bearer {MODEL_KEY}"
    assert model.requests[-1]["stream_options"] == {"include_usage": True}
    [record] = audit_records(built)
    assert record["user"] == "alice" and record["outcome"] == "ok" and record["model"] == "scripted"
    assert record["estimated"] is False and record["completion_tokens"] > 0
    used, requests = built.quotas.ledger.used("alice", date.today().isoformat())
    assert requests == 1 and used == record["prompt_tokens"] + record["completion_tokens"]


@pytest.mark.asyncio
async def test_refusals_are_openai_shaped_audited_and_not_forwarded(
    gateway: tuple[str, Gateway], model: ScriptedModel
) -> None:
    url, built = gateway
    body = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}]}
    async with httpx.AsyncClient(timeout=30) as http:
        anonymous = await http.post(url + "/chat/completions", json=body)
        wrong = await http.post(
            url + "/chat/completions", json=body, headers={"Authorization": f"Bearer {MODEL_KEY}"}
        )
        built.quotas.spent("bob", 5000)
        over = await http.post(
            url + "/chat/completions", json=body, headers={"Authorization": "token bob-token"}
        )
    assert anonymous.status_code == wrong.status_code == 401
    assert anonymous.json()["error"]["code"] == "invalid_api_key"
    assert over.status_code == 429 and over.headers["x-should-retry"] == "false"
    assert over.json()["error"]["type"] == "quota_exceeded"
    assert "5,000 of the 1,000 model tokens allowed per day" in over.json()["error"]["message"]
    assert model.requests == []
    outcomes = [(r["user"], r["outcome"]) for r in audit_records(built)]
    assert outcomes == [(None, "unauthenticated"), (None, "unauthenticated"), ("bob", "refused")]


@pytest.mark.asyncio
async def test_a_client_that_goes_away_cancels_the_upstream_request(
    gateway: tuple[str, Gateway], model: ScriptedModel
) -> None:
    url, built = gateway
    reply = text("a slow answer in many pieces", pieces=20)
    reply.delay = 0.5
    model.add(reply)
    async with httpx.AsyncClient(timeout=30) as http:
        body = {"model": "scripted", "stream": True, "messages": [{"role": "user", "content": "slow"}]}
        async with http.stream(
            "POST", url + "/chat/completions", json=body, headers={"Authorization": "Bearer alice-token"}
        ) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    break  # the first chunk, then hang up
    for _ in range(50):
        if audit_records(built):
            break
        await asyncio.sleep(0.1)
    [record] = audit_records(built)
    # Ended within a second or two, not after the model's 10 s; the concurrency slot is free again.
    assert record["outcome"] == "cancelled" and record["duration_ms"] < 5000
    assert built.quotas.running("alice") == 0


@pytest.mark.asyncio
async def test_models_and_plain_completions_are_forwarded(
    gateway: tuple[str, Gateway], model: ScriptedModel
) -> None:
    url, built = gateway
    model.add(text("plain answer"))
    headers = {"Authorization": "Bearer bob-token"}
    async with httpx.AsyncClient(timeout=30) as http:
        listed = await http.get(url + "/models", headers=headers)
        answered = await http.post(
            url + "/chat/completions",
            json={"model": "scripted", "messages": [{"role": "user", "content": "hi"}]},
            headers=headers,
        )
    assert listed.status_code == 200 and listed.json()["data"][0]["id"] == "scripted"
    assert answered.status_code == 200
    assert answered.json()["choices"][0]["message"]["content"] == "plain answer"
    [record] = audit_records(built)
    assert record["user"] == "bob" and record["outcome"] == "ok" and record["completion_tokens"] > 0
