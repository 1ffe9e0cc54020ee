"""The REST surface on a real Jupyter server with the extension loaded."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
import tornado.httpclient
from jupyter_server.serverapp import ServerApp
from jupyter_server.utils import JupyterServerAuthWarning, url_path_join

from hdsp_agent import __version__
from hdsp_agent.web.completion import build_completion_handlers
from hdsp_agent.web.instructions import build_instructions_handlers
from hdsp_agent.web.mentions import build_mentions_handlers
from hdsp_agent.web.model_setup import build_model_setup_handlers
from hdsp_agent.web.openai_v1 import build_openai_handlers
from hdsp_agent.web.routes import NAMESPACE, SESSION_ID, build_handlers

ALL_ROUTES = [
    (pattern.replace(SESSION_ID, "0" * 32), method.upper())
    for pattern, handler in build_handlers()
    + build_openai_handlers()
    + build_model_setup_handlers()
    + build_instructions_handlers()
    + build_mentions_handlers()
    + build_completion_handlers()
    for method in ("get", "post", "patch", "delete")
    if method in vars(handler)
]


async def test_info_returns_version_and_catalog(jp_fetch: Any) -> None:
    response = await jp_fetch(NAMESPACE, "info")
    assert response.code == 200
    payload = json.loads(response.body)
    assert payload["name"] == "hdsp-agent"
    assert payload["version"] == __version__
    ls = next(tool for tool in payload["tools"] if tool["name"] == "ls")
    assert ls["read_only"] is True
    assert set(ls["parameters"]["properties"]) == {"dirPath", "recursive"}


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return {
        "ServerApp": {**jp_server_config["ServerApp"], "allow_unauthenticated_access": False},
        "HdspAgentApp": {"disabled_tools": []},
    }


@pytest.mark.parametrize(("endpoint", "method"), ALL_ROUTES)
async def test_every_route_rejects_unauthenticated_requests(
    jp_serverapp: ServerApp, http_server_client: Any, jp_base_url: str, endpoint: str, method: str
) -> None:
    url = url_path_join(jp_base_url, endpoint)
    body = "{}" if method in ("POST", "PATCH") else None
    with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
        await http_server_client.fetch(url, method=method, body=body, raise_error=True)
    assert caught.value.code in (401, 403)


async def test_server_with_unauthenticated_access_disallowed_loads_without_auth_warnings(
    jp_configurable_serverapp: Any,
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        app = jp_configurable_serverapp(
            config={
                "ServerApp": {
                    "allow_unauthenticated_access": False,
                    "jpserver_extensions": {"hdsp_agent": True},
                }
            }
        )
    assert "hdsp_agent" in app.extension_manager.extensions
    # Other extensions' endpoints are not ours to judge; every hdsp-agent route must be decorated.
    auth_warnings = [
        w
        for w in caught
        if issubclass(w.category, JupyterServerAuthWarning) and f"/{NAMESPACE}/" in str(w.message)
    ]
    assert auth_warnings == [], [str(w.message) for w in auth_warnings]


def test_every_handler_verb_is_covered() -> None:
    assert len(ALL_ROUTES) >= 10


async def test_disabled_tools_are_left_out_of_the_catalog(jp_fetch: Any, jp_serverapp: ServerApp) -> None:
    agent = jp_serverapp.web_app.settings["hdsp_agent"]
    agent.disabled_tools = ["ls"]
    payload = json.loads((await jp_fetch(NAMESPACE, "info")).body)
    assert "ls" not in [tool["name"] for tool in payload["tools"]]
