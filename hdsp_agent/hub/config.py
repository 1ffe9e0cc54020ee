"""For ``jupyterhub_config.py``: run the model gateway as a hub service and point users' servers at it.

```python
from hdsp_agent.hub.config import gateway_for_users

users_base_url = gateway_for_users(
    c,
    upstream_url="http://vllm.models.svc:8000/v1",
    api_key_file="/srv/jupyterhub/model-key",   # readable by the hub's user only
    data_dir="/srv/jupyterhub/hdsp-gateway",     # the central audit log and the day's counts
    daily_tokens=2_000_000, daily_requests=2_000, concurrent_requests=2,
)
# then in admin.json: {"base_url": users_base_url, "model": "..."} (docs/deploy.md, "The model gateway")
```

Users' servers get their own hub token as ``$OPENAI_API_KEY`` (what hdsp-agent sends when no other key is
configured) and a server token scoped to use the gateway; the model's key stays in the service's settings.
"""

from __future__ import annotations

import sys
from typing import Any

GATEWAY_NAME = "hdsp-gateway"
DEFAULT_PORT = 10101


def gateway_service(
    *,
    upstream_url: str,
    data_dir: str,
    api_key_file: str = "",
    name: str = GATEWAY_NAME,
    url: str = f"http://127.0.0.1:{DEFAULT_PORT}",
    daily_tokens: int = 0,
    daily_requests: int = 0,
    concurrent_requests: int = 0,
    environment: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The entry for ``c.JupyterHub.services``: a managed service the hub starts and stops.

    The model key comes from ``api_key_file`` (read at each request) or ``HDSP_GATEWAY_API_KEY`` in
    ``environment``; the hub's own environment is not passed on beyond what JupyterHub passes to services.
    """
    settings = {
        "HDSP_GATEWAY_UPSTREAM_URL": upstream_url,
        "HDSP_GATEWAY_DATA_DIR": data_dir,
        "HDSP_GATEWAY_API_KEY_FILE": api_key_file,
        "HDSP_GATEWAY_DAILY_TOKENS": str(daily_tokens),
        "HDSP_GATEWAY_DAILY_REQUESTS": str(daily_requests),
        "HDSP_GATEWAY_CONCURRENT_REQUESTS": str(concurrent_requests),
    }
    return {
        "name": name,
        "url": url,
        "command": [sys.executable, "-m", "hdsp_agent.hub.gateway"],
        "environment": {**settings, **(environment or {})},
        # Not listed on users' home page: it is an API for their servers, not a page.
        "display": False,
    }


def gateway_for_users(
    c: Any,
    *,
    upstream_url: str,
    data_dir: str,
    api_key_file: str = "",
    name: str = GATEWAY_NAME,
    url: str = f"http://127.0.0.1:{DEFAULT_PORT}",
    users_url: str | None = None,
    daily_tokens: int = 0,
    daily_requests: int = 0,
    concurrent_requests: int = 0,
    environment: dict[str, str] | None = None,
) -> str:
    """Add the gateway service to the hub config ``c`` and let every user's server call it with its own hub
    token. Returns the ``base_url`` users' servers use (put it in admin.json).

    ``users_url``: where users' servers reach the service, when not at ``url`` (on Kubernetes, the hub's
    in-cluster address, e.g. ``http://hub:10101``).
    """
    c.JupyterHub.services.append(
        gateway_service(
            upstream_url=upstream_url,
            data_dir=data_dir,
            api_key_file=api_key_file,
            name=name,
            url=url,
            daily_tokens=daily_tokens,
            daily_requests=daily_requests,
            concurrent_requests=concurrent_requests,
            environment=environment,
        )
    )
    access = f"access:services!service={name}"
    # Users may use the gateway, and the token the hub gives each user's server ($JUPYTERHUB_API_TOKEN)
    # carries that permission besides the server role's own two scopes (it keeps only scopes the user holds).
    c.JupyterHub.load_roles.append({"name": "user", "scopes": ["self", access]})
    c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server", access]
    # hdsp-agent sends $OPENAI_API_KEY when admin.json names no key: here, the server's own hub token.
    c.Spawner.environment.update({"OPENAI_API_KEY": _server_token})
    return f"{(users_url or url).rstrip('/')}/services/{name}/v1"


def _server_token(spawner: Any) -> str:
    return str(spawner.api_token)
