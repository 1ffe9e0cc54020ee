"""Kernel channels to a kernel gateway that requires authentication.

jupyter_server's ``GatewayKernelClient.start_channels`` (2.x) opens its websocket to the gateway without the
headers every other gateway request carries (``GatewayClient.load_connection_args``), so a gateway started
with an auth token answers 401 and the client never sees a message. JupyterLab is not affected (its sockets
go through the server's own gateway proxy, which sends them); an agent's own kernel client is. This opens the
same socket with the headers and then lets the client carry on exactly as its own method would.
"""

from __future__ import annotations

import asyncio
from threading import Thread
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.utils import url_escape, url_path_join


def is_gateway_client(client: Any) -> bool:
    return type(client).__name__ == "GatewayKernelClient" and hasattr(client, "_route_responses")


async def start_gateway_channels(client: Any, **channels: bool) -> None:
    import websocket
    from jupyter_server.gateway.gateway_client import GatewayClient

    gateway = GatewayClient.instance()
    headers = gateway.load_connection_args().get("headers") or {}
    ws_url = url_path_join(
        gateway.ws_url or "", gateway.kernels_endpoint, url_escape(client.kernel_id), "channels"
    )
    # websocket-client connects synchronously (to a remote host): in a thread, not on the server's event loop.
    client.channel_socket = await asyncio.to_thread(
        websocket.create_connection,
        ws_url,
        timeout=GatewayClient.KERNEL_LAUNCH_TIMEOUT,
        enable_multithread=True,
        sslopt={"ca_certs": gateway.ca_certs, "certfile": gateway.client_cert, "keyfile": gateway.client_key},
        header=headers,
    )
    # What GatewayKernelClient.start_channels does after opening its socket.
    await ensure_async(super(type(client), client).start_channels(**channels))
    client.response_router = Thread(target=client._route_responses, daemon=True)
    client.response_router.start()
