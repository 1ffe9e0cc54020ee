"""``python -m hdsp_agent.hub.gateway``: the hub starts this (a managed service) with its settings in the
environment; it serves until the hub stops it."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

import httpx

from ...audit.log import AuditLog
from .app import make_app
from .auth import hub_identify
from .handlers import Gateway
from .quotas import Limits, Quotas, UsageLedger
from .settings import GatewaySettings, SettingsError

log = logging.getLogger("hdsp_agent.gateway")


def build_gateway(settings: GatewaySettings, hub_auth: object) -> Gateway:
    limits = Limits(settings.daily_tokens, settings.daily_requests, settings.concurrent_requests)
    # The audit log and the day's counts are the administrator's alone: no one else may read or list them.
    settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    settings.data_dir.chmod(0o700)
    return Gateway(
        settings=settings,
        identify=hub_identify(hub_auth),
        quotas=Quotas(limits, UsageLedger(settings.data_dir / "usage.sqlite3")),
        audit=AuditLog(settings.data_dir / "audit.jsonl", max_bytes=50 * 1024 * 1024, backups=10),
        client=httpx.AsyncClient(timeout=httpx.Timeout(settings.timeout, connect=10.0), trust_env=True),
    )


async def serve(settings: GatewaySettings) -> None:
    from jupyterhub.services.auth import HubAuth

    gateway = build_gateway(settings, HubAuth())
    server = make_app(gateway).listen(settings.port, settings.ip)
    log.info(
        "hdsp-agent model gateway on %s:%s%s -> %s",
        settings.ip,
        settings.port,
        settings.prefix,
        settings.upstream_url,
    )
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopped.set)
    await stopped.wait()
    server.stop()
    await gateway.client.aclose()
    gateway.audit.close()
    gateway.quotas.ledger.close()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s %(asctime)s hdsp-gateway] %(message)s")
    try:
        settings = GatewaySettings.from_environ()
    except SettingsError as error:
        log.error("%s", error)
        sys.exit(2)
    if not settings.port:
        log.error("JUPYTERHUB_SERVICE_URL is not set: run the gateway as a hub service with a 'url'")
        sys.exit(2)
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
