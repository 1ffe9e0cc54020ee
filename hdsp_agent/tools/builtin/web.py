"""``fetch_url_content`` and ``search_web`` (Continue's names and parameters).

Fetching goes through the URL guard (``permissions.urls``): every hop of a redirect chain is checked, and the
connection is made to the address that was checked (the Host header and TLS name stay the original host), so a
DNS answer that changes between check and connect cannot reach an internal service.
"""

from __future__ import annotations

import asyncio
import codecs
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import html2text
import httpx
from pydantic import Field

from ...permissions.urls import UrlAllowlist, UrlVerdict, check_url
from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template, user_text
from ..base import PermissionAction, PermissionKind, Tool, ToolArgs, ToolContext, ToolError, ToolOutput

FETCH_TIMEOUT_SECONDS = 20.0
MAX_FETCH_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5
USER_AGENT = "hdsp-agent (JupyterLab assistant)"
E_URL_BLOCKED = "E_URL_BLOCKED"
E_FETCH_FAILED = "E_FETCH_FAILED"

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/ecmascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-sh",
    "application/sql",
    "application/x-ipynb+json",
)
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


class FetchUrlArgs(ToolArgs):
    url: str = Field(description="An http(s) URL.")


@dataclass
class _Page:
    url: str
    status: int
    content_type: str
    body: bytes
    truncated: bool


class FetchUrlTool(Tool[FetchUrlArgs]):
    name = "fetch_url_content"
    facts = ToolFacts(
        level="ask",
        ask_reason=user_template("It downloads a page from the internet"),
        changes="other",
        profiles=frozenset({"full", "standard"}),
        needs="web",
        words=ToolWords(
            question=user_template("Fetch this web page?"), statement=user_template("Fetch a web page")
        ),
    )
    description = "Fetch a web page (as Markdown) or a text file over http(s)."
    args_model = FetchUrlArgs
    # No local side effects; the NETWORK action lets the policy decide about the request itself.
    read_only = True
    timeout = FETCH_TIMEOUT_SECONDS + 10.0
    paging_hint = "fetch a more specific page (an anchor or sub-page) or use search_web"

    def __init__(
        self,
        allowlist: Sequence[str] = (),
        *,
        timeout_seconds: float = FETCH_TIMEOUT_SECONDS,
        max_bytes: int = MAX_FETCH_BYTES,
        max_redirects: int = MAX_REDIRECTS,
    ) -> None:
        """``allowlist``: the administrator's exceptions to the URL guard (host names, IPs, CIDRs)."""
        self.allowlist = UrlAllowlist.parse(allowlist)
        self.timeout_seconds = timeout_seconds
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects

    def permission(self, args: FetchUrlArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(PermissionKind.NETWORK, target=args.url, detail="fetch (GET)")

    async def run(self, args: FetchUrlArgs, ctx: ToolContext) -> ToolOutput:
        try:
            page = await asyncio.wait_for(self._fetch(args.url), self.timeout_seconds)
        except asyncio.TimeoutError:
            raise ToolError(
                E_FETCH_FAILED,
                user_text("%1 did not answer within %2 s", args.url, format(self.timeout_seconds, "g")),
                user_text("Try again later or another source."),
            ) from None
        except httpx.HTTPError as error:
            raise ToolError(
                E_FETCH_FAILED,
                user_text("fetching %1 failed: %2: %3", args.url, type(error).__name__, error),
                user_text("Check the URL."),
            ) from None
        return _render(page, self.max_bytes)

    async def _fetch(self, url: str) -> _Page:
        current = url
        # trust_env=False: no proxy from the environment, so the connection goes to the address we checked.
        async with httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            timeout=self.timeout_seconds,
            headers={"User-Agent": USER_AGENT},
        ) as client:
            for _hop in range(self.max_redirects + 1):
                verdict = await check_url(current, self.allowlist)
                if not verdict.allowed:
                    via = f" (redirected from {url})" if current != url else ""
                    raise ToolError(
                        E_URL_BLOCKED,
                        user_text("refused to fetch %1%2: %3", current, via, verdict.reason),
                        user_text("Only public http(s) addresses can be fetched; do not retry this URL."),
                    )
                page, location = await self._get(client, current, verdict)
                if location is None:
                    return page
                current = str(httpx.URL(current).join(location))
        raise ToolError(
            E_FETCH_FAILED,
            user_text("%1 redirected more than %2 times", url, self.max_redirects),
            user_text("Fetch the final URL directly."),
        )

    async def _get(
        self, client: httpx.AsyncClient, url: str, verdict: UrlVerdict
    ) -> tuple[_Page, str | None]:
        response = await client.send(_pinned_request(client, url, verdict), stream=True)
        try:
            location = response.headers.get("location")
            if response.is_redirect and location:
                return _Page(url, response.status_code, "", b"", False), location
            body, truncated = await _read_capped(response, self.max_bytes)
        finally:
            await response.aclose()
        content_type = response.headers.get("content-type", "")
        return _Page(url, response.status_code, content_type, body, truncated), None


def _pinned_request(client: httpx.AsyncClient, url: str, verdict: UrlVerdict) -> httpx.Request:
    """A GET to the checked address, presenting the original host name (Host header, TLS SNI and
    certificate)."""
    original = httpx.URL(url)
    host = original.raw_host.decode("ascii")
    address = verdict.addresses[0]
    extensions: dict[str, Any] = {}
    headers: dict[str, str] = {}
    if address != host.strip("[]"):
        headers["Host"] = host if original.port is None else f"{host}:{original.port}"
        if original.scheme == "https":
            extensions["sni_hostname"] = host
    return client.build_request(
        "GET", original.copy_with(host=address), headers=headers, extensions=extensions
    )


async def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """The (decoded) body, stopping at ``max_bytes``: a huge or endless response is cut, not buffered."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


def _charset(content_type: str) -> str:
    match = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    if match:
        try:
            return codecs.lookup(match.group(1)).name
        except LookupError:
            pass
    return "utf-8"


def _kind(media_type: str, body: bytes) -> str:
    """'html', 'text' or 'binary', from the declared type, or by sniffing when none was declared."""
    if media_type in _HTML_TYPES:
        return "html"
    if media_type.startswith("text/") or media_type in _TEXT_TYPES or media_type.endswith(("+json", "+xml")):
        return "text"
    if media_type:
        return "binary"
    if body.lstrip()[:15].lower().startswith(b"<!doctype html") or body.lstrip()[:6].lower() == b"<html>":
        return "html"
    return "binary" if b"\0" in body[:4096] else "text"


def _render(page: _Page, max_bytes: int) -> ToolOutput:
    media_type = page.content_type.split(";", 1)[0].strip().lower()
    kind = _kind(media_type, page.body)
    if kind == "binary":
        raise ToolError(
            "E_BINARY_CONTENT",
            user_text("%1 returned %2, which is not text", page.url, media_type or "binary data"),
            user_text("Only web pages and text files can be fetched."),
        )
    text = page.body.decode(_charset(page.content_type), errors="replace")
    header = [f"URL: {page.url}", f"Status: {page.status}"]
    if kind == "html":
        title = _TITLE.search(page.body[:65536])
        if title:
            header.append("Title: " + html.unescape(title.group(1).decode("utf-8", errors="replace")).strip())
        text = _html_to_markdown(text, page.url)
    else:
        header.append(f"Content-Type: {media_type or 'unknown'}")
    if page.truncated:
        text += f"\n\n[... stopped reading after {max_bytes / (1024 * 1024):g} MB; the rest was not fetched]"
    if page.status >= 400:
        raise ToolError(
            E_FETCH_FAILED,
            user_text("%1 answered HTTP %2: %3", page.url, page.status, text.strip()[:500]),
            user_text("Check the URL; the page may not exist or need a login."),
        )
    details = {
        "url": page.url,
        "status": page.status,
        "content_type": media_type,
        "truncated": page.truncated,
    }
    return ToolOutput("\n".join(header) + "\n\n" + text.strip(), details=details)


def _html_to_markdown(markup: str, base_url: str) -> str:
    converter = html2text.HTML2Text(baseurl=base_url, bodywidth=0)
    converter.ignore_images = True
    converter.unicode_snob = True
    return converter.handle(markup)


class SearchWebArgs(ToolArgs):
    query: str = Field(description="What to search for.")


class SearchWebTool(Tool[SearchWebArgs]):
    name = "search_web"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        needs="web",
        words=ToolWords(question=user_template("Search the web?"), statement=user_template("Search the web")),
    )
    description = "Search the web; returns the top results' titles, URLs and snippets."
    args_model = SearchWebArgs
    read_only = True
    timeout = FETCH_TIMEOUT_SECONDS + 5.0
    paging_hint = "refine the query"

    def __init__(self, backend_url: str | None = None, *, max_results: int = 8) -> None:
        """``backend_url``: a SearXNG-compatible JSON endpoint (``GET ?q=...&format=json``), set by the
        admin."""
        self.backend_url = backend_url
        self.max_results = max_results

    def is_available(self, ctx: ToolContext) -> bool:
        return bool(self.backend_url)

    def permission(self, args: SearchWebArgs, ctx: ToolContext) -> PermissionAction:
        return PermissionAction(
            PermissionKind.NETWORK, target=args.query, detail=f"web search via {self.backend_url}"
        )

    async def run(self, args: SearchWebArgs, ctx: ToolContext) -> ToolOutput:
        if not self.backend_url:
            raise ToolError(
                "E_NO_SEARCH_BACKEND",
                user_text("no web search backend is configured"),
                user_text("Use fetch_url_content."),
            )
        try:
            async with httpx.AsyncClient(
                timeout=FETCH_TIMEOUT_SECONDS, headers={"User-Agent": USER_AGENT}
            ) as client:
                response = await client.get(self.backend_url, params={"q": args.query, "format": "json"})
            response.raise_for_status()
            payload = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise ToolError(
                E_FETCH_FAILED,
                user_text("the search backend failed: %1: %2", type(error).__name__, error),
                user_text("Try again later."),
            ) from None
        results = [item for item in payload.get("results", []) if isinstance(item, dict) and item.get("url")]
        top = results[: self.max_results]
        if not top:
            return ToolOutput(f"No results for {args.query!r}.", details={"results": []})
        lines = []
        for rank, item in enumerate(top, 1):
            snippet = " ".join(str(item.get("content") or "").split())
            lines.append(
                f"{rank}. {item.get('title') or item['url']}\n   {item['url']}\n   {snippet}".rstrip()
            )
        shown = [
            {"title": item.get("title"), "url": item["url"], "snippet": item.get("content")} for item in top
        ]
        return ToolOutput("\n\n".join(lines), details={"results": shown})
