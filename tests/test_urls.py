"""The SSRF guard: which URLs the server may fetch. Names resolve through the real resolver (only
``localhost``,
which /etc/hosts answers, so no test needs a network)."""

from __future__ import annotations

import ipaddress

import pytest

from hdsp_agent.permissions.urls import (
    UrlAllowlist,
    address_problem,
    check_url,
    check_url_syntax,
    embedded_ipv4,
    parse_literal_ip,
)

REFUSED = [
    # schemes
    ("file:///etc/passwd", "scheme 'file'"),
    ("ftp://ftp.example.com/x", "scheme 'ftp'"),
    ("gopher://example.com:70/_x", "scheme 'gopher'"),
    ("javascript:alert(1)", "scheme 'javascript'"),
    ("data:text/plain,hi", "scheme 'data'"),
    ("dict://127.0.0.1:11211/stat", "scheme 'dict'"),
    # loopback, in every spelling
    ("http://127.0.0.1/", "loopback"),
    ("http://127.0.0.1:8888/api/contents", "loopback"),
    ("http://127.1/", "loopback"),
    ("http://2130706433/", "loopback"),
    ("http://0x7f.1/", "loopback"),
    ("http://0x7f000001/", "loopback"),
    ("http://017700000001/", "loopback"),
    ("http://0177.0.0.1/", "0177.0.0.1"),  # httpx itself rejects this spelling
    ("http://[::1]/", "loopback"),
    ("http://[0:0:0:0:0:0:0:1]:8080/", "loopback"),
    ("http://localhost/", "localhost resolves only to refused addresses"),
    ("http://LOCALHOST:8888/", "localhost resolves only to refused addresses"),
    ("http://localhost./", "localhost"),
    # IPv6 forms that carry an IPv4 address
    ("http://[::ffff:127.0.0.1]/", "embeds 127.0.0.1"),
    ("http://[::ffff:7f00:1]/", "embeds 127.0.0.1"),
    ("http://[::ffff:10.0.0.1]/", "embeds 10.0.0.1"),
    ("http://[64:ff9b::a9fe:a9fe]/", "embeds 169.254.169.254"),
    ("http://[2002:c0a8:101::]/", "embeds 192.168.1.1"),
    # private, link-local, shared, unspecified, multicast, reserved
    ("http://10.0.0.1/", "private"),
    ("http://172.16.5.4/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://[fd12:3456::1]/", "private"),
    ("http://[fe80::1%25eth0]/", "link-local"),
    ("http://169.254.1.1/", "link-local"),
    ("http://100.64.0.1/", "not a publicly routable"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    ("http://224.0.0.1/", "multicast"),
    ("http://[ff02::1]/", "multicast"),
    ("http://240.0.0.1/", "240.0.0.1"),
    ("http://255.255.255.255/", "255.255.255.255"),
    ("http://192.0.2.1/", "192.0.2.1"),
    # cloud metadata
    ("http://169.254.169.254/latest/meta-data/", "cloud metadata address"),
    ("http://[fd00:ec2::254]/latest/", "cloud metadata address"),
    (
        "http://[::ffff:169.254.169.254]/latest/",
        "embeds 169.254.169.254, 169.254.169.254 is a cloud metadata",
    ),
    ("http://[::ffff:a9fe:a9fe]/latest/", "cloud metadata address"),
    ("http://[::ffff:100.100.100.200]/", "cloud metadata address"),
    ("http://169.254.170.23/v1/credentials", "cloud metadata address"),
    ("http://[fd00:ec2::23]/", "cloud metadata address"),
    ("http://100.100.100.200/latest/meta-data", "cloud metadata address"),
    ("http://metadata.google.internal/computeMetadata/v1/", "cloud metadata host"),
    ("http://metadata/computeMetadata/v1/", "cloud metadata host"),
    ("http://0xa9fea9fe/", "cloud metadata address"),
    # credentials and parser confusion
    ("http://evil@127.0.0.1/", "credentials"),
    ("http://user:pass@example.com/", "credentials"),
    ("http://example.com@127.0.0.1/", "credentials"),
    ("http://a@b@127.0.0.1/", "credentials"),
    # malformed
    ("http:///path-only", "no host"),
    ("not a url", "scheme"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("url", "reason"), REFUSED)
async def test_refused_urls(url: str, reason: str) -> None:
    verdict = await check_url(url)
    assert verdict.allowed is False
    assert reason in verdict.reason
    assert verdict.addresses == ()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "url",
    [
        "http://8.8.8.8/",
        "https://1.1.1.1/dns-query",
        "http://[2606:4700:4700::1111]/",
        "https://93.184.215.14:8443/x",
    ],
)
async def test_public_literal_addresses_are_allowed_and_pinned(url: str) -> None:
    verdict = await check_url(url)
    assert verdict.allowed, verdict.reason
    assert len(verdict.addresses) == 1 and ipaddress.ip_address(verdict.addresses[0]).is_global
    assert verdict.allowlisted is False


@pytest.mark.asyncio
async def test_allowlisted_address_is_admitted() -> None:
    verdict = await check_url("http://127.0.0.1:8000/", ["127.0.0.1"])
    assert verdict.allowed and verdict.allowlisted and verdict.addresses == ("127.0.0.1",)
    assert (await check_url("http://127.0.0.2/", ["127.0.0.1"])).allowed is False


@pytest.mark.asyncio
async def test_allowlisted_cidr_admits_its_range_only() -> None:
    assert (await check_url("http://10.1.2.3/", ["10.0.0.0/8"])).allowed
    assert (await check_url("http://192.168.0.1/", ["10.0.0.0/8"])).allowed is False


@pytest.mark.asyncio
async def test_name_resolving_to_several_addresses_keeps_only_the_admitted_ones() -> None:
    verdict = await check_url("http://localhost:9999/", ["127.0.0.1"])
    assert verdict.allowed and verdict.addresses == ("127.0.0.1",)  # ::1 is not admitted


@pytest.mark.asyncio
async def test_allowlisted_host_name_admits_whatever_it_resolves_to() -> None:
    verdict = await check_url("http://localhost/", ["localhost"])
    assert verdict.allowed and verdict.allowlisted and "127.0.0.1" in verdict.addresses
    assert check_url_syntax("http://metadata.google.internal/", ["*.google.internal"]).allowed


@pytest.mark.asyncio
async def test_metadata_address_needs_an_exact_allowlist_entry() -> None:
    assert (await check_url("http://169.254.169.254/", ["169.254.0.0/16"])).allowed is False
    assert (await check_url("http://169.254.169.254/", ["169.254.169.254"])).allowed
    assert (await check_url("http://169.254.1.1/", ["169.254.0.0/16"])).allowed


def test_syntax_check_needs_no_dns() -> None:
    assert check_url_syntax("https://example.com/docs").allowed
    assert check_url_syntax("https://example.com/docs").addresses == ()
    assert check_url_syntax("http://0x7f.1/").reason == "127.0.0.1 is a loopback address"
    assert check_url_syntax("ftp://example.com/").allowed is False


def test_literal_ip_forms() -> None:
    assert parse_literal_ip("2130706433") == ipaddress.ip_address("127.0.0.1")
    assert parse_literal_ip("0x7f.0.0.1") == ipaddress.ip_address("127.0.0.1")
    assert parse_literal_ip("010.0.0.1") == ipaddress.ip_address("8.0.0.1")
    assert parse_literal_ip("[::1]") == ipaddress.ip_address("::1")
    assert parse_literal_ip("fe80::1%25eth0") == ipaddress.ip_address("fe80::1")
    assert parse_literal_ip("example.com") is None
    assert parse_literal_ip("deadbeef") is None  # hex without 0x is a name, not an address
    assert embedded_ipv4(ipaddress.ip_address("::ffff:1.2.3.4")) == ipaddress.ip_address("1.2.3.4")
    assert address_problem(ipaddress.ip_address("8.8.8.8")) is None


def test_allowlist_parsing() -> None:
    allowlist = UrlAllowlist.parse(["Intranet.Example.", "*.corp.example", "10.0.0.0/8", " ", "[fd00::1]"])
    assert allowlist.admits_host("intranet.example")
    assert allowlist.admits_host("wiki.corp.example") and not allowlist.admits_host("corp.example.evil")
    assert allowlist.admits_address(ipaddress.ip_address("10.9.9.9"))
    assert allowlist.admits_address(ipaddress.ip_address("fd00::1"))
    assert not allowlist.admits_address(ipaddress.ip_address("11.0.0.1"))


def test_a_broad_range_never_admits_a_metadata_address_in_any_spelling() -> None:
    """Issue 24: the metadata exception (only an entry naming that address) holds when IPv4-mapped too."""
    broad = UrlAllowlist.parse(["::ffff:0:0/96", "169.254.0.0/16", "100.64.0.0/10"])
    for spelled in ("::ffff:169.254.169.254", "169.254.169.254", "100.100.100.200", "::ffff:100.100.100.200"):
        assert not broad.admits_address(ipaddress.ip_address(spelled)), spelled
    assert not check_url_syntax("http://[::ffff:169.254.169.254]/", broad).allowed
    assert check_url_syntax("http://169.254.169.254/", ["169.254.169.254"]).allowed
