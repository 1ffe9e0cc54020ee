"""The administrator's network allowlist for sandboxed commands: a filtering HTTP proxy on a Unix socket.

Standard library only: the supervisor (``supervisor.py``, run with ``python -I -S`` outside the package)
imports it from beside itself. With ``sandbox_network_allowlist`` set, a command approved to run with network
does not share the host's network: it keeps its own empty network namespace, and the only way out is this
proxy's socket, bound into the sandbox, where ``proxy_bridge.py`` offers it as ``127.0.0.1:3128`` and
``HTTP(S)_PROXY`` point at it. No TCP port is opened on the host.

The proxy answers ``CONNECT host:port`` (HTTPS and any TLS) and absolute-form ``GET http://host/…`` requests
(plain HTTP), for hosts that match the allowlist, and refuses everything else with a 403 that says why. It
resolves names itself, so the sandbox needs no resolver; a command that ignores the proxy variables reaches
nothing at all.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Sequence

try:  # part of the package (the server, tests)
    from .addresses import address_class, leads_to_this_machine, parse_literal_ip
except ImportError:  # the supervisor: beside this script, standard library only
    from addresses import address_class, leads_to_this_machine, parse_literal_ip  # type: ignore[no-redef]

_HEAD_LIMIT = 64 * 1024
_CONNECT_TIMEOUT = 30.0
_SETTING = "c.HdspAgentApp.sandbox_network_allowlist"


def allowlist_match(host: str, patterns: Sequence[str]) -> str | None:
    """How ``host`` matches ``patterns``: ``"exact"`` (the name or address itself), ``"wildcard"``
    (``*.example.com`` covers any name below example.com, not example.com itself), or None. Case and a
    trailing dot do not matter."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if not name:
        return None
    found: str | None = None
    for pattern in patterns:
        wanted = pattern.strip().rstrip(".").lower()
        if wanted.startswith("*."):
            if name.endswith(wanted[1:]) and len(name) > len(wanted) - 1:
                found = "wildcard"
        elif name == wanted:
            return "exact"
    return found


def _internal(address: str) -> bool:
    """The machine itself or its metadata service: loopback in any spelling (``::ffff:127.0.0.1`` too),
    unspecified, link-local, every cloud's metadata address (``addresses.py``, shared with the web tools)."""
    return leads_to_this_machine(address)


def _resolve(host: str, port: int, match: str) -> tuple[str, int] | str:
    """Where to connect for an allowed ``host``, or why not.

    A name allowed only by a wildcard must not lead to the machine itself (a DNS answer of 127.0.0.1, or
    ``::ffff:127.0.0.1``, would reach the Jupyter server and other local services); only an exact entry may.
    A cloud metadata address (credentials) is reached only through an entry that is that very address, never
    through a name whose DNS answer points there.
    """
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except OSError as error:
        return f"cannot resolve {host}: {error}"
    addresses = [str(info[4][0]).split("%", 1)[0] for info in infos]
    literal = parse_literal_ip(host) is not None
    for address in addresses:
        if address_class(address) == "metadata" and not (match == "exact" and literal):
            return (
                f"{host} resolves to a cloud metadata address ({address}); only an allowlist entry naming "
                "that address itself may allow it"
            )
    if match != "exact":
        inside = [address for address in addresses if _internal(address)]
        if inside:
            return (
                f"{host} resolves to this machine ({inside[0]}); only an exact allowlist entry may allow that"
            )
    return addresses[0], port


def _split_host_port(authority: str, default_port: int) -> tuple[str, int]:
    if authority.startswith("["):  # [::1]:443
        host, _, rest = authority[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = authority.rpartition(":") if authority.count(":") == 1 else (authority, "", "")
    return host, int(port) if port else default_port


def _read_head(client: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(4096)
        if not chunk:
            return None
        data += chunk
        if len(data) > _HEAD_LIMIT:
            return None
    return data


def _refuse(client: socket.socket, status: str, message: str) -> None:
    body = (message + "\n").encode()
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
    client.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


def _relay(client: socket.socket, upstream: socket.socket, first: bytes = b"") -> None:
    if first:
        upstream.sendall(first)
    other = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    other.start()
    _pipe(client, upstream)
    other.join()


def _handle(client: socket.socket, patterns: Sequence[str]) -> None:
    with client:
        head = _read_head(client)
        if head is None:
            return
        header_block, _, body_start = head.partition(b"\r\n\r\n")
        request_line, _, headers = header_block.partition(b"\r\n")
        try:
            method, target, version = request_line.decode("latin-1").split(" ", 2)
        except ValueError:
            _refuse(client, "400 Bad Request", "hdsp-agent sandbox proxy: not an HTTP request")
            return
        if method.upper() == "CONNECT":
            host, port = _split_host_port(target, 443)
            rest = b""
        elif target.lower().startswith("http://"):
            authority, _, path = target[len("http://") :].partition("/")
            host, port = _split_host_port(authority, 80)
            line = f"{method} /{path} {version}\r\n".encode("latin-1")
            rest = line + headers + b"\r\n\r\n" + body_start
        else:
            _refuse(client, "400 Bad Request", "hdsp-agent sandbox proxy: send absolute URLs or CONNECT")
            return
        match = allowlist_match(host, patterns)
        if match is None:
            _refuse(
                client,
                "403 Forbidden",
                f"hdsp-agent sandbox: network access to {host} is not in the administrator's allowlist "
                f"({_SETTING})",
            )
            return
        where = _resolve(host, port, match)
        if isinstance(where, str):
            _refuse(client, "403 Forbidden", f"hdsp-agent sandbox: {where}")
            return
        try:
            upstream = socket.create_connection(where, timeout=_CONNECT_TIMEOUT)
        except OSError as error:
            _refuse(
                client, "502 Bad Gateway", f"hdsp-agent sandbox proxy: cannot reach {host}:{port}: {error}"
            )
            return
        with upstream:
            upstream.settimeout(None)
            if method.upper() == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                _relay(client, upstream, body_start)
            else:
                _relay(client, upstream, rest)


def serve(socket_path: str, patterns: Sequence[str]) -> socket.socket:
    """Listen on ``socket_path`` (mode 0600) and handle each connection in a thread; returns the listening
    socket (close it to stop accepting)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    os.chmod(socket_path, 0o600)
    listener.listen(64)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_handle, args=(client, tuple(patterns)), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener
