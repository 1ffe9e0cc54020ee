"""Model configuration: the configured catalog, and local servers found on 127.0.0.1 when none is
configured."""

from __future__ import annotations

import socket

import pytest
from scripted_model import ScriptedModel

from hdsp_agent.agent.models import ModelNotConfigured, catalog_from_config, probe_local_servers
from hdsp_agent.config import HdspAgentConfig

pytestmark = pytest.mark.asyncio


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_probe_finds_an_openai_compatible_server_and_skips_closed_ports() -> None:
    with ScriptedModel() as model:
        found = await probe_local_servers((("Scripted", model.port), ("Nothing", unused_port())))
    assert found == [{"server": "Scripted", "base_url": model.base_url, "models": ["scripted"]}]


async def test_catalog_from_config_lists_models_and_keeps_keys_private() -> None:
    config = HdspAgentConfig(
        model="llama3.1",
        base_url="http://127.0.0.1:11434/v1",
        api_key="sk-secret",
        models=[{"name": "big", "model": "gpt-4o", "base_url": "https://example.invalid/v1", "vision": True}],
    )
    catalog = catalog_from_config(config)
    assert [m["name"] for m in catalog.public()] == ["llama3.1", "big"]
    assert "sk-secret" not in str(catalog.public())
    assert catalog.get("big").vision is True and catalog.get(None).model == "llama3.1"
    assert catalog.get("big").api_key == "sk-secret", "entries without a key use the configured one"


async def test_no_model_configured_raises_with_setup_help() -> None:
    with pytest.raises(ModelNotConfigured) as caught:
        catalog_from_config(HdspAgentConfig()).get(None)
    assert "c.HdspAgentApp.base_url" in str(caught.value)
