"""``GET /hdsp-agent/mentions?q=TEXT``: project files for the composer's ``@`` completion.

The same listing as the search tools (.gitignore respected, files that may hold secrets left out), cached for
a
few seconds so typing does not walk the tree on every key.
"""

from __future__ import annotations

import time
from pathlib import Path

import tornado.web

from ..tools.base import ToolError
from ..tools.builtin.search.ripgrep import list_files
from .rest_models import MentionsQuery, MentionsReply
from .routes import _AgentHandler, route

MAX_SUGGESTIONS = 20
LISTING_SECONDS = 10.0
_listing: dict[Path, tuple[float, list[str]]] = {}


async def project_files(root: Path) -> list[str]:
    cached = _listing.get(root)
    if cached is not None and time.monotonic() - cached[0] < LISTING_SECONDS:
        return cached[1]
    try:
        files = await list_files(root)
    except ToolError:
        files = []
    _listing[root] = (time.monotonic(), files)
    return files


def rank(files: list[str], query: str) -> list[str]:
    """Paths containing ``query`` (any case): file names starting with it first, then shorter paths."""
    needle = query.lower()
    found = [path for path in files if needle in path.lower()]
    found.sort(key=lambda path: (not path.rsplit("/", 1)[-1].lower().startswith(needle), len(path), path))
    return found[:MAX_SUGGESTIONS]


class MentionsHandler(_AgentHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        query = self.query(MentionsQuery).q[:200]
        files = await project_files(self.agent.root_dir)
        self.reply(MentionsReply, {"files": rank(files, query)})


def build_mentions_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [(route("mentions"), MentionsHandler)]
