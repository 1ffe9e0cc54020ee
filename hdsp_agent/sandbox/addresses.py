"""One classification of network addresses, for the web tools' URL guard and the sandbox's allowlist proxy.

Which addresses lead somewhere the server must not be led by a URL or a DNS answer: the machine itself
(loopback in any spelling, the unspecified address, link-local), every cloud's instance-metadata service
(credentials live there), private and otherwise non-public networks. An IPv6 address that carries an IPv4
address (IPv4-mapped ``::ffff:127.0.0.1``, IPv4-compatible, 6to4, Teredo, NAT64) is judged by the address it
carries, so ``::ffff:169.254.169.254`` is the metadata service it names.

Standard library only: the sandbox supervisor (``supervisor.py``, run with ``python -I -S`` outside the
package) imports ``network_proxy.py``, which imports this module from beside itself;
``permissions/urls.py`` imports it as part of the package.

- ``address_class(address)``: ``"metadata"``, ``"loopback"``, ``"unspecified"``, ``"link-local"``,
  ``"multicast"``, ``"private"``, ``"reserved"``, ``"non-public"``, or None for an ordinary public address;
- ``address_problem(address)``: the same as a sentence for the user, or None;
- ``leads_to_this_machine(address)``: loopback, unspecified, link-local or metadata (what a wildcard
  allowlist entry must never reach);
- ``parse_literal_ip(host)``: the address a host names literally, in any form a resolver accepts.
"""

from __future__ import annotations

import ipaddress
import socket

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Names that reach a cloud provider's instance metadata service.
METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
    }
)
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle (v2)
        "169.254.170.2",  # AWS ECS task credentials
        "169.254.170.23",  # AWS EKS Pod Identity
        "169.254.169.253",  # AWS DNS
        "169.254.169.123",  # AWS time sync
        "fd00:ec2::254",  # AWS IPv6
        "fd00:ec2::23",  # AWS EKS Pod Identity, IPv6
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (v1)
        "169.254.0.23",  # Tencent Cloud
        "100.88.222.5",  # Huawei Cloud (also at 169.254.169.254)
    )
)
_NAT64_PREFIX = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_NUMERIC_HOST_CHARS = frozenset("0123456789abcdefxABCDEFX.")
_THIS_MACHINE = frozenset({"metadata", "loopback", "unspecified", "link-local"})
_LABELS = {
    "metadata": "a cloud metadata address",
    "loopback": "a loopback address",
    "unspecified": "the unspecified address",
    "link-local": "a link-local address",
    "multicast": "a multicast address",
    "private": "a private address",
    "reserved": "a reserved address",
    "non-public": "not a publicly routable address",
}


def parse_literal_ip(host: str) -> IPAddress | None:
    """The address a host names literally, in any form a resolver accepts: ``127.0.0.1``, ``[::1]``,
    ``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``. None for a DNS name."""
    candidate = host.strip().strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:
        pass
    if candidate and set(candidate) <= _NUMERIC_HOST_CHARS and any(c.isdigit() for c in candidate):
        try:
            # inet_aton is what getaddrinfo uses for numeric hosts: decimal, hex, octal and short forms.
            return ipaddress.IPv4Address(socket.inet_aton(candidate))
        except OSError:
            return None
    return None


def as_address(address: IPAddress | str) -> IPAddress:
    """An address object from an address or its text (a zone ``%eth0`` and brackets are dropped)."""
    if isinstance(address, str):
        parsed = parse_literal_ip(address)
        if parsed is None:
            raise ValueError(f"not an IP address: {address!r}")
        return parsed
    return address


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, 6to4, Teredo client, NAT64), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64_PREFIX or (address in _IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_class(address: IPAddress | str) -> str | None:
    """What kind of non-public address this is (see the module docstring), or None for a public one."""
    ip = as_address(address)
    inner = embedded_ipv4(ip)
    if inner is not None:
        return address_class(inner)
    if ip in METADATA_ADDRESSES:
        return "metadata"
    checks = (
        (ip.is_loopback, "loopback"),
        (ip.is_unspecified, "unspecified"),
        (ip.is_link_local, "link-local"),
        (ip.is_multicast, "multicast"),
        (ip.is_private, "private"),
        (ip.is_reserved, "reserved"),
        (not ip.is_global, "non-public"),
    )
    return next((label for failed, label in checks if failed), None)


def address_problem(address: IPAddress | str) -> str | None:
    """Why the server must not connect to ``address`` (a sentence), or None for an ordinary public one."""
    ip = as_address(address)
    kind = address_class(ip)
    if kind is None:
        return None
    inner = embedded_ipv4(ip)
    if inner is not None:
        return f"{ip} embeds {inner}, {inner} is {_LABELS[kind]}"
    return f"{ip} is {_LABELS[kind]}"


def is_metadata(address: IPAddress | str) -> bool:
    return address_class(address) == "metadata"


def leads_to_this_machine(address: IPAddress | str) -> bool:
    """Loopback (any spelling, IPv4-mapped too), unspecified, link-local, or a cloud metadata address."""
    return address_class(address) in _THIS_MACHINE
