"""The administrator's network allowlist (``sandbox_network_allowlist``), with commands really run in
bubblewrap: allowed hosts answer through the proxy, other hosts get a 403 that says why and their listener
never sees a connection, and a command that ignores the proxy reaches nothing.

The "hosts" are two listeners on the host's loopback, one named ``localhost`` (allowed) and one reached as
``127.0.0.1`` (not listed): the proxy matches names as written in the request, so both are real HTTP servers
behind different names. SAFETY: the commands are Python data handed to argv lists; they only make requests.
"""

from __future__ import annotations

import http.server
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hdsp_agent.config import HdspAgentConfig
from hdsp_agent.permissions.urls import address_problem
from hdsp_agent.sandbox import Sandbox, SandboxSettings, SandboxUnavailable, network_proxy
from hdsp_agent.sandbox.network_proxy import _internal, _resolve, allowlist_match
from hdsp_agent.sandbox.runner import settings_from_config


class _Listener:
    """An HTTP server on 127.0.0.1 that answers ``name`` and records every request path."""

    def __init__(self, name: str) -> None:
        self.paths: list[str] = []
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                listener.paths.append(self.path)
                body = name.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listeners() -> Iterator[tuple[_Listener, _Listener]]:
    allowed, other = _Listener("allowed-host"), _Listener("other-host")
    yield allowed, other
    allowed.close()
    other.close()


def make_sandbox(allowlist: tuple[str, ...] | None, layer: str = "bubblewrap") -> Sandbox:
    sandbox = Sandbox(SandboxSettings(layer=layer, network_allowlist=allowlist))  # type: ignore[arg-type]
    if sandbox.status.layer != layer:
        pytest.skip(f"SANDBOX LAYER {layer.upper()} NOT AVAILABLE HERE: {sandbox.status.reason}")
    return sandbox


def run_python(
    sandbox: Sandbox, root: Path, code: str, mode: str = "network"
) -> subprocess.CompletedProcess[str]:
    prepared = sandbox.prepare(f"python3 -c {_quote(code)}", root, root, mode, os.environ)  # type: ignore[arg-type]
    try:
        return subprocess.run(
            prepared.argv,
            env=prepared.env,
            cwd=prepared.cwd,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    finally:
        prepared.cleanup()


def _quote(code: str) -> str:
    return "'" + code.replace("'", "'\"'\"'") + "'"


FETCH = """
import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1] if len(sys.argv) > 1 else URL, timeout=20).read().decode())
except urllib.error.HTTPError as error:
    print("HTTP", error.code, error.read().decode())
"""


def fetch(url: str) -> str:
    return FETCH.replace("URL", repr(url))


def test_allowlist_patterns() -> None:
    patterns = ["pypi.org", "*.pythonhosted.org", "10.0.0.5"]
    assert allowlist_match("pypi.org", patterns) == "exact"
    assert allowlist_match("PyPI.org.", patterns) == "exact"
    assert allowlist_match("files.pythonhosted.org", patterns) == "wildcard"
    assert allowlist_match("pythonhosted.org", patterns) is None  # a wildcard is for names below it
    assert allowlist_match("evilpythonhosted.org", patterns) is None
    assert allowlist_match("pypi.org.evil.com", patterns) is None
    assert allowlist_match("10.0.0.5", patterns) == "exact"
    assert allowlist_match("", patterns) is None


def test_the_setting_reaches_the_sandbox() -> None:
    config = HdspAgentConfig()
    assert settings_from_config(config).network_allowlist is None
    config.sandbox_network_allowlist = ["pypi.org", "*.pythonhosted.org"]
    assert settings_from_config(config).network_allowlist == ("pypi.org", "*.pythonhosted.org")


def test_an_allowed_host_answers_and_another_is_refused_with_the_reason(
    tmp_path: Path, listeners: tuple[_Listener, _Listener]
) -> None:
    allowed, other = listeners
    sandbox = make_sandbox(("localhost",))

    done = run_python(sandbox, tmp_path, fetch(f"http://localhost:{allowed.port}/through-the-proxy"))
    assert done.stdout.strip() == "allowed-host", done.stderr
    assert allowed.paths == ["/through-the-proxy"]

    refused = run_python(sandbox, tmp_path, fetch(f"http://127.0.0.1:{other.port}/should-not-arrive"))
    assert refused.stdout.startswith("HTTP 403"), (refused.stdout, refused.stderr)
    assert "127.0.0.1 is not in the administrator's allowlist" in refused.stdout
    assert "sandbox_network_allowlist" in refused.stdout
    assert other.paths == []


def test_https_tunnels_are_filtered_by_host_too(
    tmp_path: Path, listeners: tuple[_Listener, _Listener]
) -> None:
    """CONNECT (what HTTPS clients send to a proxy) is answered for allowed hosts only."""
    allowed, other = listeners
    sandbox = make_sandbox(("localhost",))
    code = """
import os, socket
def connect(target):
    with socket.create_connection(("127.0.0.1", 3128)) as s:
        s.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
        return s.recv(200).decode().split("\\r\\n")[0]
print(connect("localhost:ALLOWED"))
print(connect("127.0.0.1:OTHER"))
""".replace("ALLOWED", str(allowed.port)).replace("OTHER", str(other.port))
    done = run_python(sandbox, tmp_path, code)
    assert done.stdout.splitlines() == [
        "HTTP/1.1 200 Connection established",
        "HTTP/1.1 403 Forbidden",
    ], done.stderr


def test_a_command_that_ignores_the_proxy_reaches_nothing(
    tmp_path: Path, listeners: tuple[_Listener, _Listener]
) -> None:
    allowed, _ = listeners
    sandbox = make_sandbox(("localhost",))
    code = f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {allowed.port}), timeout=5)
    print("connected")
except OSError as error:
    print("refused", type(error).__name__)
"""
    done = run_python(sandbox, tmp_path, code)
    assert done.stdout.startswith("refused"), (done.stdout, done.stderr)
    assert allowed.paths == []


def test_a_wildcard_name_cannot_lead_to_this_machine() -> None:
    """A name allowed only by a wildcard whose DNS answer is the loopback or link-local (cloud metadata) is
    refused: a DNS answer must not open the Jupyter server and other local services. An exact entry may."""
    refused = _resolve("localhost", 8888, "wildcard")
    assert isinstance(refused, str) and "resolves to this machine" in refused
    assert _resolve("localhost", 8888, "exact") in (("127.0.0.1", 8888), ("::1", 8888))
    assert _internal("169.254.169.254") and _internal("::1") and not _internal("10.0.0.5")


def test_without_an_allowlist_network_mode_has_the_host_network(
    tmp_path: Path, listeners: tuple[_Listener, _Listener]
) -> None:
    allowed, other = listeners
    sandbox = make_sandbox(None)
    done = run_python(sandbox, tmp_path, fetch(f"http://127.0.0.1:{other.port}/direct"))
    assert done.stdout.strip() == "other-host", done.stderr
    # ... and "sandboxed" mode has none, with or without an allowlist.
    closed = run_python(
        make_sandbox(("localhost",)), tmp_path, fetch(f"http://localhost:{allowed.port}/"), "sandboxed"
    )
    assert "allowed-host" not in closed.stdout
    assert allowed.paths == []


def test_landlock_cannot_filter_by_host_and_says_so(tmp_path: Path) -> None:
    sandbox = make_sandbox(("pypi.org",), layer="landlock")
    with pytest.raises(SandboxUnavailable, match="allowlist needs bubblewrap"):
        sandbox.prepare("true", tmp_path, tmp_path, "network", os.environ)


# -- issue 24: one address classification for the proxy and the web tools ---------------------------------

THIS_MACHINE_OR_METADATA = [
    "::ffff:127.0.0.1",  # loopback, IPv4-mapped: Python's is_loopback says False for it
    "::ffff:7f00:1",
    "::ffff:169.254.169.254",  # the metadata service, IPv4-mapped
    "fd00:ec2::254",  # AWS IPv6 metadata
    "100.100.100.200",  # Alibaba Cloud metadata
    "169.254.170.2",  # AWS ECS credentials
    "::",
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
]


def _answer(monkeypatch: pytest.MonkeyPatch, address: str) -> None:
    """The proxy's resolver answers ``address`` for every name (a hostile or careless DNS record)."""
    import socket

    family = socket.AF_INET6 if ":" in address else socket.AF_INET

    def getaddrinfo(host: str, port: int, *args: object, **kwargs: object) -> list[tuple]:
        sockaddr = (address, port, 0, 0) if family == socket.AF_INET6 else (address, port)
        return [(family, socket.SOCK_STREAM, 6, "", sockaddr)]

    monkeypatch.setattr(network_proxy.socket, "getaddrinfo", getaddrinfo)


@pytest.mark.parametrize("answer", THIS_MACHINE_OR_METADATA)
def test_a_wildcard_name_answered_with_this_machine_or_metadata_is_refused(
    monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    _answer(monkeypatch, answer)
    refused = _resolve("svc.allowed.example", 443, "wildcard")
    assert isinstance(refused, str) and answer in refused, refused
    # The web tools' guard refuses the same addresses, from the same module.
    assert address_problem(answer) is not None


@pytest.mark.parametrize("answer", ["::ffff:169.254.169.254", "fd00:ec2::254", "100.100.100.200"])
def test_metadata_needs_an_entry_naming_that_address(monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    """An exact name whose DNS answer is a metadata address is refused too; only the address itself, listed
    exactly, may be reached."""
    _answer(monkeypatch, answer)
    assert isinstance(_resolve("exact.example", 80, "exact"), str)
    assert _resolve(answer, 80, "exact") == (answer, 80)


def test_the_proxy_does_not_connect_a_wildcard_name_to_the_local_jupyter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, listeners: tuple[_Listener, _Listener]
) -> None:
    """End to end through the real proxy on its Unix socket: ``*.allowed.example`` is allowed, the name's DNS
    answer is ``::ffff:127.0.0.1`` where a local service listens. The request gets a 403 that says why and
    the local service sees nothing (before issue 24 the proxy connected)."""
    import socket

    local, _ = listeners
    _answer(monkeypatch, "::ffff:127.0.0.1")
    path = str(tmp_path / "proxy.sock")
    listener = network_proxy.serve(path, ["*.allowed.example"])
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(10)
        client.connect(path)
        request = f"GET http://svc.allowed.example:{local.port}/api/contents HTTP/1.1\r\nHost: x\r\n\r\n"
        client.sendall(request.encode())
        reply = b""
        while chunk := client.recv(4096):
            reply += chunk
        client.close()
    finally:
        listener.close()
    assert reply.startswith(b"HTTP/1.1 403"), reply
    assert b"resolves to this machine" in reply
    assert local.paths == [], "the local service was reached"


def test_ordinary_answers_still_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A private intranet address behind a wildcard entry is the administrator's to allow."""
    _answer(monkeypatch, "10.1.2.3")
    assert _resolve("svc.corp.example", 443, "wildcard") == ("10.1.2.3", 443)
    assert not _internal("10.1.2.3") and _internal("::ffff:127.0.0.1") and _internal("fd00:ec2::254")
