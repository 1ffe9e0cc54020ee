"""Inline completion (``agent/inline_completion.py``, ``POST /hdsp-agent/complete``) against the scripted
model: fill-in-the-middle where ``/v1/completions`` answers, the chat fallback where it 404s, what is sent
redacted and bounded, bad bodies refused. That the route needs Jupyter auth: ``tests/test_routes.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest
import tornado.httpclient
from scripted_model import ScriptedModel, text

from hdsp_agent.agent.inline_completion import (
    PREFIX_CHARS,
    CompletionContext,
    InlineCompleter,
    SensitiveDocument,
)
from hdsp_agent.agent.llm import ModelSettings
from hdsp_agent.agent.models import ModelCatalog

SECRET = "sk-live-4f9Qx7Lm2Vb8Rt6Yp3Zw"


def completer(model: ScriptedModel, **options: Any) -> InlineCompleter:
    catalog = ModelCatalog([ModelSettings(model="scripted", base_url=model.base_url, api_key="k")])
    return InlineCompleter(catalog, **options)


async def test_fim_is_used_where_the_endpoint_answers_completions() -> None:
    with ScriptedModel([text("mean()"), text("sum()")], completions=True) as model:
        inline = completer(model)
        context = CompletionContext(
            prefix="total = df['price'].",
            suffix="\nprint(total)",
            cells_above=("import pandas as pd", "df = pd.read_csv('sales.csv')"),
            variables=("df", "pd", "not a name"),
        )
        first = await inline.complete(context)
        second = await inline.complete(context)
        await inline.aclose()
    assert (first.text, first.mode, second.text) == ("mean()", "fim", "sum()")
    request = model.requests[0]
    assert "messages" not in request and request["suffix"] == "\nprint(total)"
    assert request["prompt"].endswith("total = df['price'].")
    # The cells above and the kernel's names come before the prefix; a non-name is dropped.
    assert "df = pd.read_csv('sales.csv')" in request["prompt"]
    assert "variables in the kernel: df, pd\n" in request["prompt"]


async def test_chat_is_the_fallback_where_completions_404_and_the_choice_is_kept() -> None:
    with ScriptedModel([text("```python\nmean()\n```"), text("sum()")]) as model:
        inline = completer(model)
        first = await inline.complete(CompletionContext(prefix="df['price'].", language="python"))
        second = await inline.complete(CompletionContext(prefix="df['qty']."))
        await inline.aclose()
    assert (first.text, first.mode, second.mode) == ("mean()", "chat", "chat")
    assert inline.modes == {f"{model.base_url}|scripted": "chat"}
    messages = model.requests[0]["messages"]
    assert "python" in messages[0]["content"] and messages[1]["content"] == "df['price'].<CURSOR>"


async def test_secrets_never_reach_the_model_and_secret_files_are_not_sent() -> None:
    with ScriptedModel([text("x")], completions=True) as model:
        inline = completer(model, secrets=lambda: [SECRET])
        prefix = f"key = '{SECRET}'\nurl = 'https://ann:hunter2pass@db.example.com/x'\n" + "y = 1\n" * 2000
        await inline.complete(CompletionContext(prefix=prefix, suffix=f"# {SECRET}"))
        with pytest.raises(SensitiveDocument):
            await inline.complete(CompletionContext(prefix="TOKEN=", path="project/.env"))
        await inline.aclose()
    assert len(model.requests) == 1  # the .env file asked nothing
    sent = json.dumps(model.requests[0])
    assert SECRET not in sent and "hunter2pass" not in sent
    # Bounded: the prefix's end only (the secret line at its start would be cut anyway; the test above
    # puts one in the suffix too).
    assert len(model.requests[0]["prompt"]) <= PREFIX_CHARS + 100


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], scripted_model: ScriptedModel) -> dict[str, Any]:
    scripted_model.completions = True
    return {
        "ServerApp": {**jp_server_config["ServerApp"], "allow_unauthenticated_access": False},
        "HdspAgentApp": {"model": "scripted", "base_url": scripted_model.base_url, "api_key": SECRET},
    }


async def test_the_route_completes_and_refuses_bad_bodies(
    jp_fetch: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(text("head()"))
    body = {"prefix": f"# {SECRET}\ndf.", "suffix": "", "language": "python", "path": "a.ipynb"}
    response = await jp_fetch("hdsp-agent", "complete", method="POST", body=json.dumps(body))
    assert json.loads(response.body) == {"text": "head()", "mode": "fim", "model": "scripted"}
    # The configured key is a secret the server knows: redacted from the prefix.
    assert SECRET not in json.dumps(scripted_model.requests[0])
    for bad, field in (
        ({"suffix": "x"}, "prefix"),
        ({"prefix": 3}, "prefix"),
        ({"prefix": "x", "cells_above": "not a list"}, "cells_above"),
        ({"prefix": "x", "temperature": 2}, "temperature"),
    ):
        with pytest.raises(tornado.httpclient.HTTPClientError) as refused:
            await jp_fetch("hdsp-agent", "complete", method="POST", body=json.dumps(bad))
        assert refused.value.code == 400
        reply = json.loads(refused.value.response.body)
        assert (reply["code"], reply["field"]) == ("invalid_field", field)
    sensitive = {"prefix": "TOKEN=", "path": "deploy/.env"}
    response = await jp_fetch("hdsp-agent", "complete", method="POST", body=json.dumps(sensitive))
    assert json.loads(response.body) == {"text": "", "skipped": "sensitive"}
    assert len(scripted_model.requests) == 1
