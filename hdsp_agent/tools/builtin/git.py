"""``view_diff``: the uncommitted changes of the project's git repository (Continue's name, no parameters).

It runs without asking, so a hostile repository must not make git run code: the repository's config can name
programs (``core.fsmonitor``, ``diff.external``, ``diff.<driver>.textconv``/``command``,
``filter.<driver>.clean``/``process``, ``core.pager``). Every git call gets ``-c`` overrides that switch those
off (filter drivers found by name first), ``--no-ext-diff --no-textconv``, an environment without ``GIT_*``
variables and secrets, and — when an OS sandbox works here — runs inside it (no network, read-only outside the
project).
"""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from ...permissions.paths import secret_filter
from ...sandbox import PreparedCommand, Sandbox
from ...tools.facts import ToolFacts, ToolWords
from ...user_text import user_template, user_text
from ..base import Tool, ToolArgs, ToolContext, ToolError, ToolOutput

E_NOT_A_GIT_REPO = "E_NOT_A_GIT_REPO"
E_GIT_FAILED = "E_GIT_FAILED"
# A diff beyond this is not read into memory at all; the executor's budget cuts what is shown further.
MAX_DIFF_BYTES = 2 * 1024 * 1024
MAX_UNTRACKED_LISTED = 100
_GIT_ENV = {"GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
# The only names kept from the server's environment (GIT_CEILING_DIRECTORIES only narrows the search).
_KEPT_ENV = frozenset({"PATH", "HOME", "LANG", "TZ", "GIT_CEILING_DIRECTORIES"})
# Config that would make git run a program, switched off for every call.
_SAFE_CONFIG = (
    "core.quotepath=off",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "diff.external=",
    "core.untrackedCache=false",
)
# --relative: paths relative to the project root, and only changes under it (the root may be a subdirectory).
_DIFF_ARGS = ("--no-color", "--no-ext-diff", "--no-textconv", "--relative", "--stat", "--patch")


class ViewDiffArgs(ToolArgs):
    pass


class ViewDiffTool(Tool[ViewDiffArgs]):
    name = "view_diff"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full", "standard"}),
        words=ToolWords(
            question=user_template("Look at the changes not yet committed?"),
            statement=user_template("Look at the changes not yet committed"),
        ),
    )
    description = "Show the uncommitted git changes: staged, unstaged and untracked files."
    args_model = ViewDiffArgs
    read_only = True
    timeout = 60.0
    paging_hint = "read the changed files with read_file, or run `git diff -- PATH` for one file"

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self.sandbox = sandbox

    async def run(self, args: ViewDiffArgs, ctx: ToolContext) -> ToolOutput:
        root = ctx.root_dir.resolve()
        git = _Git(root, self.sandbox)
        code, _top, error = await git.run("rev-parse", "--show-toplevel")
        if code != 0:
            if "not a git repository" in error.lower():
                raise ToolError(
                    E_NOT_A_GIT_REPO,
                    user_text("the project root is not inside a git repository, so there is no diff to show"),
                    user_text(
                        "Compare files directly (read_file), or run `git init` if the user "
                        "wants version control."
                    ),
                )
            raise ToolError(
                E_GIT_FAILED,
                user_text("git failed: %1", error),
                user_text("Check that git is installed and working."),
            )
        # Before the first commit, --cached compares with the empty tree: staged files show as new.
        await git.disable_filters()
        staged = hide_secret_patches(await git.checked("diff", "--cached", *_DIFF_ARGS), root)
        unstaged = hide_secret_patches(await git.checked("diff", *_DIFF_ARGS), root)
        untracked = (await git.checked("ls-files", "--others", "--exclude-standard")).splitlines()
        sections: list[str] = []
        if staged.strip():
            sections.append("## Staged changes\n" + staged.rstrip())
        if unstaged.strip():
            sections.append("## Unstaged changes\n" + unstaged.rstrip())
        if untracked:
            listed = untracked[:MAX_UNTRACKED_LISTED]
            more = len(untracked) - len(listed)
            sections.append(
                "## Untracked files\n"
                + "\n".join(listed)
                + (f"\n[... {more} more untracked files]" if more else "")
            )
        details = {
            "staged": bool(staged.strip()),
            "unstaged": bool(unstaged.strip()),
            "untracked": len(untracked),
        }
        if not sections:
            return ToolOutput("No uncommitted changes: the working tree matches HEAD.", details=details)
        return ToolOutput("\n\n".join(sections), details=details)


def hide_secret_patches(diff: str, root: Path) -> str:
    """``diff`` with the patch of every file that may hold secrets replaced by a note (its name and --stat
    line stay: a name is no secret, the changed lines may be)."""
    is_secret = secret_filter(root)
    blocks = ("\n" + diff).split("\ndiff --git ")
    kept = [blocks[0]]
    for block in blocks[1:]:
        header = block.split("\n", 1)[0]
        old_path, _, new_path = header.partition(" b/")
        if is_secret(old_path.removeprefix("a/")) or is_secret(new_path):
            block = f"{header}\n[changes not shown: the file may hold secrets; read_file asks the user]"
        kept.append(block)
    return "\ndiff --git ".join(kept)[1:]


class _Git:
    """git in ``root``, hardened (module docstring), in the sandbox when one works."""

    def __init__(self, root: Path, sandbox: Sandbox | None) -> None:
        self.root = root
        self.sandbox = sandbox if sandbox is not None and sandbox.status.active else None
        self.config = list(_SAFE_CONFIG)

    async def disable_filters(self) -> None:
        """Neutralise every filter driver the repository's config names (``filter.<name>.clean`` etc.)."""
        code, names, _error = await self.run("config", "--name-only", "--get-regexp", r"^filter\.")
        drivers = (
            {name.rsplit(".", 1)[0] for name in names.splitlines() if name.count(".") >= 2}
            if code == 0
            else set()
        )
        for driver in sorted(drivers):
            self.config += [
                f"{driver}.clean=",
                f"{driver}.smudge=",
                f"{driver}.process=",
                f"{driver}.required=false",
            ]

    async def checked(self, *args: str) -> str:
        code, output, error = await self.run(*args)
        if code != 0:
            raise ToolError(
                E_GIT_FAILED,
                user_text("git %1 failed: %2", args[0], error),
                user_text("Check the repository's state with git."),
            )
        return output

    async def run(self, *args: str) -> tuple[int, str, str]:
        """Run git; stdout is capped at ``MAX_DIFF_BYTES`` (with a note) and the process reaped."""
        argv = ["git", *(item for pair in self.config for item in ("-c", pair)), *args]
        prepared = self._prepare(argv)
        try:
            return await _collect(prepared)
        finally:
            prepared.cleanup()

    def _prepare(self, argv: list[str]) -> PreparedCommand:
        env = _git_environment(os.environ)
        if self.sandbox is None:
            return PreparedCommand(argv, env, self.root, "none")
        own = {name: value for name, value in env.items() if name.startswith("GIT_") or name == "LC_ALL"}
        # git must read every file to diff it; the secret files' lines are left out of what the tool shows.
        return self.sandbox.prepare(
            shlex.join(argv), self.root, self.root, "sandboxed", env, own, mask_secrets=False
        )


def _git_environment(environ: Mapping[str, str]) -> dict[str, str]:
    env = {name: value for name, value in environ.items() if name in _KEPT_ENV or name.startswith("LC_")}
    return {**env, **_GIT_ENV}


async def _collect(prepared: PreparedCommand) -> tuple[int, str, str]:
    try:
        process = await _spawn(prepared)
    except FileNotFoundError:
        raise ToolError(
            E_GIT_FAILED,
            user_text("git is not installed on the server"),
            user_text("Compare files with read_file."),
        ) from None
    assert process.stdout is not None and process.stderr is not None
    try:
        stderr_task = asyncio.ensure_future(process.stderr.read())
        stdout, cut = await _read_capped(process.stdout, MAX_DIFF_BYTES)
        if cut:
            process.kill()
        stderr = await stderr_task
        code = await process.wait()
    except asyncio.CancelledError:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    text = stdout.decode("utf-8", errors="replace")
    if cut:
        return 0, text + f"\n[... output stopped after {MAX_DIFF_BYTES // (1024 * 1024)} MB]\n", ""
    return code, text, stderr.decode("utf-8", errors="replace").strip()


async def _read_capped(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = await stream.read(64 * 1024)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)[:limit], True


async def _spawn(prepared: PreparedCommand) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *prepared.argv,
        cwd=prepared.cwd,
        env=prepared.env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
