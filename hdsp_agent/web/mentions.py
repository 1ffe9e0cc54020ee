"""``GET /hdsp-agent/mentions?q=TEXT``: project files for the composer's ``@`` completion.

The same listing as the search tools (.gitignore respected, files that may hold secrets left out), without
hidden folders and Jupyter's ``.ipynb_checkpoints`` (copies of the user's notebooks, never what they mean).
The listing is kept: a lookup answers from the last one at once and, when it is older than
``LISTING_SECONDS``, starts a fresh walk for the next lookup, so typing never waits on a 20,000-file walk
after the first (``make bench`` group ``mentions``).
"""

from __future__ import annotations

import asyncio
import heapq
import time
from pathlib import Path

import tornado.web

from ..tools.base import ToolError
from ..tools.builtin.search.ripgrep import list_files, secret_filter
from .rest_models import MentionsQuery, MentionsReply
from .routes import _AgentHandler, route

MAX_SUGGESTIONS = 20
LISTING_SECONDS = 10.0
# rg globs: a folder whose name starts with a dot (".ipynb_checkpoints", ".venv", ".cache") is not walked.
HIDDEN_FOLDERS = ("--glob", "!.*/")
_listing: dict[Path, tuple[float, list[str]]] = {}
_refreshing: dict[Path, asyncio.Task[list[str]]] = {}


async def _walk(root: Path) -> list[str]:
    try:
        # Secrets are left out by rank, on the few it suggests: checking 20,000 paths here costs a second.
        files = await list_files(root, HIDDEN_FOLDERS, secrets_checked=False)
    except ToolError:
        files = []
    _listing[root] = (time.monotonic(), files)
    return files


async def project_files(root: Path) -> list[str]:
    """The project's files: the kept listing (refreshed in the background when old), or a first walk."""
    cached = _listing.get(root)
    if cached is not None:
        if time.monotonic() - cached[0] >= LISTING_SECONDS and root not in _refreshing:
            task = asyncio.ensure_future(_walk(root))
            _refreshing[root] = task
            task.add_done_callback(lambda _: _refreshing.pop(root, None))
        return cached[1]
    running = _refreshing.get(root)
    if running is None:
        running = asyncio.ensure_future(_walk(root))
        _refreshing[root] = running
        running.add_done_callback(lambda _: _refreshing.pop(root, None))
    return await asyncio.shield(running)


def rank(files: list[str], query: str, root: Path | None = None) -> list[str]:
    """Paths containing ``query`` (any case): file names starting with it first, then shorter paths; never a
    file in a hidden folder or a secret (checked here, on the few suggested, when ``root`` is given)."""
    needle = query.lower()
    is_secret = secret_filter(root) if root is not None else None

    def shown(path: str) -> bool:
        return not _in_hidden_folder(path) and not (is_secret is not None and is_secret(path))

    def order(path: str) -> tuple[bool, int, str]:
        return (not path.rsplit("/", 1)[-1].lower().startswith(needle), len(path), path)

    found = [path for path in files if needle in path.lower()]
    # The best few, not a sort of thousands (a short query matches most of a large project); more when some
    # of them are not to be shown.
    wanted = MAX_SUGGESTIONS
    while True:
        best = heapq.nsmallest(wanted, found, key=order)
        chosen = [path for path in best if shown(path)]
        if len(chosen) >= MAX_SUGGESTIONS or len(best) == len(found):
            return chosen[:MAX_SUGGESTIONS]
        wanted *= 4


def _in_hidden_folder(path: str) -> bool:
    return any(part.startswith(".") for part in path.split("/")[:-1])


class MentionsHandler(_AgentHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        query = self.query(MentionsQuery).q[:200]
        root = self.agent.root_dir
        files = await project_files(root)
        self.reply(MentionsReply, {"files": rank(files, query, root)})


def build_mentions_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [(route("mentions"), MentionsHandler)]
