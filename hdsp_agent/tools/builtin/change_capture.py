"""One shell command's change capture, from before it starts to after it ends (foreground or background).

With an overlay (``PreparedCommand.overlay``) nothing is needed before the start: the command's writes wait
in the overlay's upper dir, and ``finish`` applies them (``ShellChanges.apply_overlay``). Without one, the
project is walked before the start and again at the end (``tree_snapshot``). Which commands get which:

- sandboxed and network modes on the bubblewrap layer: the overlay (protected changes dropped);
- the Landlock layer, or an overlay that cannot be mounted here: the walk (created protected files removed);
- approved ``unsandboxed`` commands: the walk, nothing dropped (the user approved running outside the
  sandbox). They get no overlay on purpose: such a command is often one that must change the project while it
  runs, where other programs see it (a dev server, a database file, ``git`` lock files, a watcher), and an
  overlay would hide all of that until it ends.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ...sandbox import PreparedCommand, RunMode
from ...sandbox.overlay_setup import mark_broken
from ...user_text import user_text
from .edit.filestate import FileStateStore
from .shell_changes import ChangeReport, ShellChanges
from .tree_snapshot import Entry, TooLarge, diff, snapshot


class ChangeCapture:
    def __init__(
        self,
        root: Path,
        session_id: str,
        store: FileStateStore,
        prepared: PreparedCommand,
        mode: RunMode,
        *,
        server_dirs: tuple[str, ...] = (),
    ) -> None:
        """``server_dirs``: folders the server writes into while the command runs (its log)."""
        self.root = root.resolve()
        self.prepared = prepared
        self.changes = ShellChanges(
            self.root,
            session_id,
            store,
            filter_protected=mode != "unsandboxed",
            ignore=tuple(prepared.mount_points),
            ignore_under=server_dirs,
        )
        self._before: dict[str, Entry] | None = None
        self._not_captured: str | None = None
        # Set by ``finish`` when the supervisor could not mount the overlay (the command did not run).
        self.overlay_failed: str | None = None
        self.report: ChangeReport | None = None

    async def begin(self) -> None:
        """Before the command starts: walk the project when no overlay will catch its writes."""
        if self.prepared.overlay is not None:
            return
        try:
            self._before = await asyncio.to_thread(snapshot, self.root)
        except TooLarge as error:
            self._not_captured = str(error)

    def finish(self) -> ChangeReport:
        """After the command (and everything it started) has ended: apply, drop and record its changes. Call
        once, before ``prepared.cleanup``."""
        if self.report is not None:
            return self.report
        overlay = self.prepared.overlay
        if overlay is not None:
            self.overlay_failed = self.prepared.overlay_failed
            if self.overlay_failed is not None:
                mark_broken(str(self.root), overlay.scratch, self.overlay_failed)
                self.report = ChangeReport()
            else:
                self.report = self.changes.apply_overlay(Path(overlay.upper))
        elif self._before is not None:
            try:
                after = snapshot(self.root)
            except TooLarge as error:
                self.report = ChangeReport(not_captured=str(error))
            else:
                self.report = self.changes.apply_snapshot_diff(diff(self._before, after))
        else:
            self.report = ChangeReport(not_captured=self._not_captured or user_text("unknown"))
        return self.report

    async def finish_async(self) -> ChangeReport:
        return await asyncio.to_thread(self.finish)
