"""Shared fixtures: a real Jupyter server with hdsp-agent enabled, a guard against reaching real providers."""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from scripted_model import ScriptedModel

pytest_plugins = ["pytest_jupyter.jupyter_server"]

# The scripted model lives beside the tests and is imported by name.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return {"ServerApp": {"jpserver_extensions": {"hdsp_agent": True}}}


class ExternalNetworkBlocked(RuntimeError):
    pass


def _is_local(address: Any) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths
        return True
    host = address[0]
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return host == "localhost"


@pytest.fixture(autouse=True)
def _no_external_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that would reach a real model provider (or anything off this machine)."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        if not _is_local(address):
            raise ExternalNetworkBlocked(f"test tried to connect to {address!r}: only loopback is allowed")
        return real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> Any:
        if not _is_local(address):
            raise ExternalNetworkBlocked(f"test tried to connect to {address!r}: only loopback is allowed")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    # Model clients read these; a test must configure its scripted local model explicitly.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    """A scripted model server with no replies yet; tests ``add`` what it should answer."""
    from scripted_model import ScriptedModel

    with ScriptedModel() as model:
        yield model
