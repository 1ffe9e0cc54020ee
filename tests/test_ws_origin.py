"""Cross-site WebSocket hijacking: a browser sends the login cookie with any page's WebSocket upgrade, so
every hdsp-agent WebSocket must refuse a cookie-authenticated upgrade whose Origin is not the server's own.

Token-authenticated upgrades skip the origin check: that is Jupyter's design (``IdentityProvider.
should_check_origin``) — a token is not ambient, another site's page cannot attach it, so the token itself
proves the request is not cross-site. The last test pins that down so a change to it is noticed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import tornado.httpclient
import tornado.web
import tornado.websocket
from jupyter_server.serverapp import ServerApp
from jupyter_server.utils import url_path_join

FOREIGN_ORIGIN = "http://evil.example"


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return {"ServerApp": {**jp_server_config["ServerApp"], "allow_unauthenticated_access": False}}


def _rules(router: Any) -> list[Any]:
    found = []
    for rule in getattr(router, "rules", []):
        found.append(rule)
        found.extend(_rules(rule.target))
    return found


def agent_socket_paths(serverapp: ServerApp, session_id: str) -> list[str]:
    """The path of every WebSocket route the extension registered (whatever file adds it)."""
    paths = []
    for rule in _rules(serverapp.web_app.default_router):
        handler = rule.target
        pattern = getattr(rule.matcher, "regex", None)
        if not (isinstance(handler, type) and issubclass(handler, tornado.websocket.WebSocketHandler)):
            continue
        if pattern is None or "/hdsp-agent/" not in pattern.pattern:
            continue
        path = re.sub(r"\(\?P<session_id>[^)]*\)", session_id, pattern.pattern).rstrip("$")
        assert "(" not in path, f"a WebSocket route with a parameter this test does not fill: {path}"
        paths.append(path)
    return paths


async def login_cookie(http_server_client: Any, base_url: str, token: str) -> str:
    """What a browser holds after logging in: the cookie Jupyter sets on a token-authenticated request."""
    response = await http_server_client.fetch(
        url_path_join(base_url, "hdsp-agent", "info"), headers={"Authorization": f"token {token}"}
    )
    cookies = [
        c.split(";", 1)[0] for c in response.headers.get_list("Set-Cookie") if c.startswith("username-")
    ]
    assert cookies, "Jupyter sets a login cookie"
    return cookies[0]


async def open_socket(port: int, path: str, headers: dict[str, str]) -> Any:
    request = tornado.httpclient.HTTPRequest(f"ws://127.0.0.1:{port}{path}", headers=headers)
    return await tornado.websocket.websocket_connect(request)


async def test_every_agent_websocket_refuses_a_foreign_origin_and_no_credentials(
    jp_serverapp: ServerApp, jp_fetch: Any, http_server_client: Any, jp_base_url: str, jp_http_port: int
) -> None:
    session_id = json.loads((await jp_fetch("hdsp-agent", "sessions", method="POST", body="{}")).body)["id"]
    token = jp_serverapp.identity_provider.token
    cookie = await login_cookie(http_server_client, jp_base_url, token)
    own_origin = f"http://127.0.0.1:{jp_http_port}"
    paths = agent_socket_paths(jp_serverapp, session_id)
    assert any(path.endswith(f"/sessions/{session_id}/ws") for path in paths), paths
    for path in paths:
        with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
            await open_socket(jp_http_port, path, {"Cookie": cookie, "Origin": FOREIGN_ORIGIN})
        assert caught.value.code == 403, f"{path} let another site's page in with the user's cookie"

        accepted = await open_socket(jp_http_port, path, {"Cookie": cookie, "Origin": own_origin})
        accepted.close()

        with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
            await open_socket(jp_http_port, path, {"Origin": own_origin})
        assert caught.value.code == 403, f"{path} let a request in with neither cookie nor token"


async def test_the_login_cookie_alone_authenticates_the_session_socket(
    jp_serverapp: ServerApp, jp_fetch: Any, http_server_client: Any, jp_base_url: str, jp_http_port: int
) -> None:
    """The accepted case above is real: same-origin with only the cookie, the socket answers commands."""
    session_id = json.loads((await jp_fetch("hdsp-agent", "sessions", method="POST", body="{}")).body)["id"]
    cookie = await login_cookie(http_server_client, jp_base_url, jp_serverapp.identity_provider.token)
    path = url_path_join(jp_base_url, "hdsp-agent", "sessions", session_id, "ws")
    ws = await open_socket(
        jp_http_port, path, {"Cookie": cookie, "Origin": f"http://127.0.0.1:{jp_http_port}"}
    )
    ws.write_message(json.dumps({"type": "resume", "since_seq": 0, "id": "r1"}))
    reply = json.loads(await ws.read_message())
    assert (reply["type"], reply.get("id")) == ("command.ok", "r1")
    ws.close()


async def test_a_token_authenticated_upgrade_skips_the_origin_check_by_jupyters_design(
    jp_serverapp: ServerApp, jp_fetch: Any, jp_base_url: str, jp_http_port: int
) -> None:
    session_id = json.loads((await jp_fetch("hdsp-agent", "sessions", method="POST", body="{}")).body)["id"]
    token = jp_serverapp.identity_provider.token
    path = url_path_join(jp_base_url, "hdsp-agent", "sessions", session_id, "ws")
    ws = await open_socket(jp_http_port, path, {"Authorization": f"token {token}", "Origin": FOREIGN_ORIGIN})
    ws.close()
