"""The URL guard against server-side request forgery: which URLs the server may fetch for the model.

Only http and https. The host is resolved first and every address checked: loopback, private, link-local,
multicast, reserved, unspecified and cloud-metadata addresses are refused (including the same addresses
written
as decimal/hex/octal numbers, IPv4-mapped/6to4/NAT64 IPv6, or hidden behind a DNS name) unless an
administrator's
allow-list admits the host or the address. Callers connect to one of ``UrlVerdict.addresses`` (the checked
ones),
not to whatever a second DNS lookup returns, and check every redirect again.

- ``check_url_syntax(url, allowlist)``: sync; scheme, credentials, metadata names, literal IPs. No DNS.
- ``await check_url(url, allowlist)``: the above plus DNS resolution; the verdict the fetcher and policy use.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

# The address classification is shared with the sandbox's allowlist proxy (standard library only there).
from ..sandbox.addresses import (
    METADATA_ADDRESSES,
    METADATA_HOSTS,
    IPAddress,
    address_class,
    address_problem,
    embedded_ipv4,
    parse_literal_ip,
)

__all__ = [
    "METADATA_ADDRESSES",
    "METADATA_HOSTS",
    "UrlAllowlist",
    "UrlVerdict",
    "address_class",
    "address_problem",
    "check_url",
    "check_url_syntax",
    "embedded_ipv4",
    "parse_literal_ip",
]

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOWED_SCHEMES = frozenset({"http", "https"})
DNS_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class UrlVerdict:
    """Whether ``url`` may be fetched and why; ``addresses`` are the checked addresses to connect to."""

    allowed: bool
    url: str
    reasons: tuple[str, ...] = ()
    scheme: str = ""
    host: str = ""
    port: int | None = None
    addresses: tuple[str, ...] = ()
    # True when the allow-list admitted something the default rules refuse.
    allowlisted: bool = False

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


def _refuse(url: str, *reasons: str, host: str = "") -> UrlVerdict:
    return UrlVerdict(False, url, tuple(reasons), host=host)


@dataclass(frozen=True)
class UrlAllowlist:
    """An administrator's exceptions: host names (``intranet.example``, ``*.corp.example``), IPs and CIDRs.

    A cloud-metadata address is admitted only by an entry naming exactly that address (never by a broad
    range).
    """

    hosts: frozenset[str] = frozenset()
    host_suffixes: tuple[str, ...] = ()
    networks: tuple[IPNetwork, ...] = field(default_factory=tuple)

    @classmethod
    def parse(cls, entries: Sequence[str] | UrlAllowlist) -> UrlAllowlist:
        if isinstance(entries, UrlAllowlist):
            return entries
        hosts: set[str] = set()
        suffixes: list[str] = []
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip().lower().rstrip(".")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            if entry.startswith("*."):
                suffixes.append(entry[1:])
            elif entry.startswith("."):
                suffixes.append(entry)
            else:
                hosts.add(entry)
        return cls(frozenset(hosts), tuple(suffixes), tuple(networks))

    def admits_host(self, host: str) -> bool:
        name = host.lower().rstrip(".")
        return name in self.hosts or any(name.endswith(suffix) for suffix in self.host_suffixes)

    def admits_address(self, address: IPAddress) -> bool:
        for network in self.networks:
            if address.version != network.version or address not in network:
                continue
            if address_class(address) == "metadata" and network.num_addresses != 1:
                continue
            return True
        return False


def check_url_syntax(url: str, allowlist: Sequence[str] | UrlAllowlist = ()) -> UrlVerdict:
    """Everything that can be decided without DNS: scheme, host present, no credentials, literal addresses.

    An allowed verdict without ``addresses`` still needs ``check_url`` (the name must be resolved and
    checked).
    """
    admitted = UrlAllowlist.parse(allowlist)
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError, ValueError) as error:
        return _refuse(url, f"malformed URL ({error})")
    scheme = parsed.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        return _refuse(url, f"scheme {scheme or '(none)'!r} is not allowed: only http and https")
    host = parsed.raw_host.decode("ascii", errors="replace").lower()
    if not host:
        return _refuse(url, "the URL has no host")
    if parsed.userinfo:
        return _refuse(url, "URLs with credentials (user@host) are not allowed", host=host)
    port = parsed.port
    by_name = admitted.admits_host(host)
    literal = parse_literal_ip(host)
    if literal is None:
        if host.rstrip(".") in METADATA_HOSTS and not by_name:
            return _refuse(url, f"{host} is a cloud metadata host", host=host)
        return UrlVerdict(True, url, (), scheme, host, port, (), by_name)
    problem = address_problem(literal)
    exempt = by_name or admitted.admits_address(literal)
    if problem and not exempt:
        return _refuse(url, problem, host=host)
    return UrlVerdict(True, url, (), scheme, host, port, (str(literal),), bool(problem))


async def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (off the event loop, bounded in time)."""
    loop = asyncio.get_running_loop()
    infos = await asyncio.wait_for(
        loop.getaddrinfo(host.rstrip(".") or host, port, type=socket.SOCK_STREAM), DNS_TIMEOUT_SECONDS
    )
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


async def check_url(url: str, allowlist: Sequence[str] | UrlAllowlist = ()) -> UrlVerdict:
    """The full verdict: ``check_url_syntax`` plus DNS. A name is allowed when at least one address it
    resolves to
    is acceptable; only those addresses are returned, and the caller must connect to one of them."""
    admitted = UrlAllowlist.parse(allowlist)
    verdict = check_url_syntax(url, admitted)
    if not verdict.allowed or verdict.addresses:
        return verdict
    default_port = 443 if verdict.scheme == "https" else 80
    try:
        resolved = await resolve_host(verdict.host, verdict.port or default_port)
    except (OSError, asyncio.TimeoutError, UnicodeError) as error:
        return _refuse(url, f"could not resolve {verdict.host} ({error})", host=verdict.host)
    if admitted.admits_host(verdict.host):
        return _with_addresses(verdict, resolved, allowlisted=True)
    public = [address for address in resolved if not address_problem(address)]
    exempt = [
        address for address in resolved if address_problem(address) and admitted.admits_address(address)
    ]
    if not public and not exempt:
        problems = "; ".join(address_problem(address) or "" for address in resolved)
        return _refuse(
            url, f"{verdict.host} resolves only to refused addresses: {problems}", host=verdict.host
        )
    return _with_addresses(verdict, public + exempt, allowlisted=bool(exempt))


def _with_addresses(verdict: UrlVerdict, addresses: Sequence[IPAddress], *, allowlisted: bool) -> UrlVerdict:
    return UrlVerdict(
        True,
        verdict.url,
        verdict.reasons,
        verdict.scheme,
        verdict.host,
        verdict.port,
        tuple(str(address) for address in addresses),
        allowlisted,
    )
