"""Who is calling: the bearer token of the request, checked with the hub.

A user's server sends its ``$JUPYTERHUB_API_TOKEN`` as the model key; the hub says whose token it is and
whether it carries ``access:services!service=<this service>`` (``hdsp_agent/hub/config.py`` grants it to
users' server tokens). Anything else — no token, an unknown or expired one, one without that scope — is
refused.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

# Returns the hub name of the token's owner, or None when the token does not open this service.
Identify = Callable[[str], Awaitable["str | None"]]

_BEARER = re.compile(r"^\s*(?:token|bearer)\s+(\S+)\s*$", re.IGNORECASE)


def bearer_token(authorization: str | None) -> str | None:
    found = _BEARER.match(authorization or "")
    return found.group(1) if found else None


def hub_identify(hub_auth: Any) -> Identify:
    """``Identify`` backed by ``jupyterhub.services.auth.HubAuth`` (cached by HubAuth for a few minutes)."""

    async def identify(token: str) -> str | None:
        model = await hub_auth.user_for_token(token, sync=False)
        if not model:
            return None
        if not hub_auth.check_scopes(hub_auth.access_scopes, model):
            return None
        return str(model.get("name") or "") or None

    return identify
