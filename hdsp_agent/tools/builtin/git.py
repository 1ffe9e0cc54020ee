"""``view_diff``: the uncommitted changes of the project's git repository (Continue's name, no parameters)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ..base import Tool, ToolArgs, ToolContext, ToolError, ToolOutput

E_NOT_A_GIT_REPO = "E_NOT_A_GIT_REPO"
E_GIT_FAILED = "E_GIT_FAILED"
# A diff beyond this is not read into memory at all; the executor's budget cuts what is shown further.
MAX_DIFF_BYTES = 2 * 1024 * 1024
MAX_UNTRACKED_LISTED = 100
_GIT_ENV = {"GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
# --relative: paths relative to the project root, and only changes under it (the root may be a subdirectory).
_DIFF_ARGS = ("--no-color", "--no-ext-diff", "--relative", "--stat", "--patch")


class ViewDiffArgs(ToolArgs):
    pass


class ViewDiffTool(Tool[ViewDiffArgs]):
    name = "view_diff"
    description = "Show the uncommitted git changes: staged, unstaged and untracked files."
    args_model = ViewDiffArgs
    read_only = True
    timeout = 60.0
    paging_hint = "read the changed files with read_file, or run `git diff -- PATH` for one file"

    async def run(self, args: ViewDiffArgs, ctx: ToolContext) -> ToolOutput:
        root = ctx.root_dir.resolve()
        code, _top, error = await _git(root, "rev-parse", "--show-toplevel")
        if code != 0:
            if "not a git repository" in error.lower():
                raise ToolError(
                    E_NOT_A_GIT_REPO,
                    "the project root is not inside a git repository, so there is no diff to show",
                    "Compare files directly (read_file), or run `git init` if the user wants version "
                    "control.",
                )
            raise ToolError(E_GIT_FAILED, f"git failed: {error}", "Check that git is installed and working.")
        # Before the first commit, --cached compares with the empty tree: staged files show as new.
        staged = await _checked(root, "diff", "--cached", *_DIFF_ARGS)
        unstaged = await _checked(root, "diff", *_DIFF_ARGS)
        untracked = (await _checked(root, "ls-files", "--others", "--exclude-standard")).splitlines()
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


async def _checked(root: Path, *args: str) -> str:
    code, output, error = await _git(root, *args)
    if code != 0:
        raise ToolError(
            E_GIT_FAILED, f"git {args[0]} failed: {error}", "Check the repository's state with git."
        )
    return output


async def _git(root: Path, *args: str) -> tuple[int, str, str]:
    """Run git in ``root``; stdout is capped at ``MAX_DIFF_BYTES`` (with a note) and the process reaped."""
    env = {**os.environ, **_GIT_ENV}
    try:
        process = await _spawn_git(root, env, args)
    except FileNotFoundError:
        raise ToolError(
            E_GIT_FAILED, "git is not installed on the server", "Compare files with read_file."
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


async def _spawn_git(root: Path, env: dict[str, str], args: tuple[str, ...]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        "git",
        "-c",
        "core.quotepath=off",
        *args,
        cwd=root,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
