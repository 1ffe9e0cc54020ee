"""The gateway's settings, read from the environment the hub gives the service (``c.JupyterHub.services``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

PREFIX = "HDSP_GATEWAY_"


class SettingsError(Exception):
    """A setting is missing or malformed: the service refuses to start rather than run without its limits."""


@dataclass(frozen=True)
class GatewaySettings:
    # The OpenAI-compatible endpoint requests are forwarded to (".../v1").
    upstream_url: str
    data_dir: Path
    # The model's key: as a value, or a file read at each request (a rotated key needs no restart).
    api_key: str = ""
    api_key_file: str = ""
    # Per user, 0 = no limit.
    daily_tokens: int = 0
    daily_requests: int = 0
    concurrent_requests: int = 0
    timeout: float = 600.0
    # Where the hub told the service to listen, and under which path prefix the proxy sends requests.
    port: int = 0
    ip: str = "127.0.0.1"
    prefix: str = "/"

    def upstream_key(self) -> str:
        """The key to send upstream, read now; raises ``OSError`` when the key file cannot be read."""
        if self.api_key_file:
            return Path(self.api_key_file).read_text().strip()
        return self.api_key

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> GatewaySettings:
        env = os.environ if environ is None else environ
        upstream = env.get(PREFIX + "UPSTREAM_URL", "").strip()
        if not upstream:
            raise SettingsError(
                f"{PREFIX}UPSTREAM_URL (the model endpoint, e.g. http://vllm:8000/v1) is not set"
            )
        service_url = urlparse(env.get("JUPYTERHUB_SERVICE_URL", "") or "http://127.0.0.1:0")
        return cls(
            upstream_url=upstream.rstrip("/"),
            data_dir=Path(env.get(PREFIX + "DATA_DIR") or Path.cwd() / "hdsp-gateway"),
            api_key=env.get(PREFIX + "API_KEY", ""),
            api_key_file=env.get(PREFIX + "API_KEY_FILE", ""),
            daily_tokens=_count(env, "DAILY_TOKENS"),
            daily_requests=_count(env, "DAILY_REQUESTS"),
            concurrent_requests=_count(env, "CONCURRENT_REQUESTS"),
            timeout=float(_count(env, "TIMEOUT") or 600),
            port=service_url.port or 0,
            # The URL's host unless told otherwise: on Kubernetes the URL names the hub's Service ("hub"),
            # which the pod cannot bind; HDSP_GATEWAY_BIND_IP=0.0.0.0 there.
            ip=env.get(PREFIX + "BIND_IP") or service_url.hostname or "127.0.0.1",
            prefix=env.get("JUPYTERHUB_SERVICE_PREFIX", "/") or "/",
        )


def _count(env: Mapping[str, str], name: str) -> int:
    raw = env.get(PREFIX + name, "").strip()
    if not raw:
        return 0
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{PREFIX}{name} must be a whole number, not {raw!r}") from None
    if value < 0:
        raise SettingsError(f"{PREFIX}{name} must be 0 (no limit) or more, not {value}")
    return value
