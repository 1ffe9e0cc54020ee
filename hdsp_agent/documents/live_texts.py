"""Text files open in a JupyterLab file editor, as a ``LiveTextGateway`` (``contract.py``): the agent's edits
to such a file go into the editor, merged with what the user typed there and did not save, instead of to the
disk behind the editor's back (``tools/builtin/edit/pipeline.py``).

The tabs are ``OpenTabs`` (``bridge_connection.py``), shared with the notebooks (``live.py``); the messages
are ``read_text``, ``set_text``, ``revert_text`` and ``save`` (``bridge_wire.py``). The agent's change waits
in the editor until the file is saved: ``AgentText`` remembers it, so a reloaded editor gets it back, an
editor that is gone has it written to the file, and the end of the turn saves it when the user's own typing
is gone.
An edit's undo step is a ``TextEdit``, recorded by the file tools with the file changes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..tools.base import ToolError
from ..user_text import user_text
from .bridge_connection import E_NOTEBOOK_BRIDGE, BridgeConnection, OpenTabs, _normalized, _text, log
from .contract import ContentsManager, SettleOutcome, TextEdit
from .gateway import _call
from .journal import AgentText, TextJournal
from .merge import E_EDIT_CONFLICT, MergeConflict, merge_texts


async def _folder_gone(path: str, contents_manager: ContentsManager) -> bool:
    """Whether the folder ``path`` is in no longer exists (deleted with the document in it)."""
    parent = path.rsplit("/", 1)[0] if "/" in path else ""
    return bool(parent) and not await _call(contents_manager.dir_exists, parent)


class LiveTexts:
    """The ``LiveTextGateway`` over every connected tab's file editors."""

    def __init__(self, tabs: OpenTabs) -> None:
        self.tabs = tabs
        # Written through to the conversation store (a restart keeps it): replace a record, never change one.
        self.texts = TextJournal()
        self._replays: set[asyncio.Task[None]] = set()

    @property
    def _locks(self) -> Any:
        return self.tabs.locks

    def is_open(self, path: str) -> bool:
        return self.tabs.editor_holder(path) is not None

    async def state(self, path: str) -> tuple[str, bool] | None:
        holder = self.tabs.editor_holder(path)
        if holder is None:
            return None
        result = await holder.request("read_text", _normalized(path))
        return _text(result, path), bool(result.get("dirty"))

    async def reload(self, path: str, expected: str) -> bool:
        """Reload the editor holding ``path`` from the file (the agent just wrote it there), if it still shows
        ``expected`` with nothing unsaved; False when the user has typed since (their typing is kept)."""
        holder = self.tabs.editor_holder(path)
        if holder is None:
            return False
        result = await holder.request("revert_text", _normalized(path), expected=expected)
        return bool(result.get("reverted"))

    def agent_text(self, path: str) -> str | None:
        record = self.texts.get(_normalized(path))
        return record.agent if record is not None else None

    async def edit_text(self, path: str, base: str, changed: str, on_disk: str) -> TextEdit:
        """Put the agent's change (``base`` → ``changed``) into the editor holding ``path``, merged with what
        the user typed there and did not save. Returns the edit as its own undo step (``revert``).

        ``on_disk``: the file's text now (the base of the record, for the first change since a save).
        Raises ``E_EDIT_CONFLICTS_WITH_UNSAVED_TYPING`` when the user's typing overlaps the change.
        """
        key = _normalized(path)
        async with self._locks(key):
            holder = self.tabs.editor_holder(key)
            if holder is None:
                raise ToolError(
                    E_NOTEBOOK_BRIDGE,
                    user_text("%1 is no longer open in a JupyterLab editor", path),
                    user_text("Try again."),
                )
            current = _text(await holder.request("read_text", key), path)
            merged = merge_texts(base, current, changed)
            if isinstance(merged, MergeConflict):
                where = (
                    f"line {merged.first_line}"
                    if merged.first_line == merged.last_line
                    else f"lines {merged.first_line}-{merged.last_line}"
                )
                raise ToolError(
                    E_EDIT_CONFLICT,
                    user_text(
                        "%1 is open in JupyterLab with unsaved changes by the user at %2, where your edit "
                        "changes the text too; nothing was changed",
                        path,
                        where,
                    ),
                    user_text(
                        "Leave those lines to the user: edit other lines, or ask the user to save or finish."
                    ),
                )
            await holder.request("set_text", key, expected=current, text=merged)
            previous = self.texts.get(key)
            self.texts[key] = AgentText(previous.base if previous is not None else on_disk, changed)
            self.tabs.changed(key)
            return TextEdit(base, changed)

    async def revert(self, path: str, edit: TextEdit) -> bool:
        """Undo of an edit made by ``edit_text``: take the agent's change (``edit.before`` → ``edit.after``)
        back out of the open editor, keeping the user's typing. False when the editor is gone."""
        key = _normalized(path)
        agent_made, before = edit.after, edit.before
        async with self._locks(key):
            holder = self.tabs.editor_holder(key)
            if holder is None:
                return False
            current = _text(await holder.request("read_text", key), path)
            restored = merge_texts(agent_made, current, before)
            if isinstance(restored, MergeConflict):
                raise ToolError(
                    "E_FILE_CHANGED_SINCE_READ",
                    user_text(
                        "%1: the lines the agent changed were edited since; they were left as they are", path
                    ),
                    user_text("Change them back by hand if you want the agent's change undone."),
                )
            await holder.request("set_text", key, expected=current, text=restored)
            record = self.texts.get(key)
            if record is not None:
                self.texts[key] = AgentText(record.base, before)
            elif current == agent_made:
                # The change had been saved and the user has typed nothing since: the file is put back too.
                await holder.request("save", key)
            else:
                # Saved, then typed in: the undo joins the user's unsaved text, saved by the same policy.
                self.texts[key] = AgentText(agent_made, before)
            return True

    def opened(self, connection: BridgeConnection, path: str) -> None:
        """A tab announced ``path`` as just loaded in an editor: it gets the agent's unsaved change again."""
        if path in connection.editors and path in self.texts:
            task = asyncio.ensure_future(self._replay_text(connection, path))
            self._replays.add(task)
            task.add_done_callback(self._replays.discard)

    async def _replay_text(self, connection: BridgeConnection, path: str) -> None:
        """A file editor reopened (a reload): the agent's unsaved change goes into it again."""
        async with self._locks(path):
            record = self.texts.get(path)
            if record is None or connection.closed:
                return
            try:
                current = _text(await connection.request("read_text", path), path)
                merged = merge_texts(record.base, current, record.agent)
                if isinstance(merged, MergeConflict) or merged == current:
                    return
                await connection.request("set_text", path, expected=current, text=merged)
            except ToolError as error:
                log.warning("hdsp-agent: unsaved agent changes to %s were not replayed: %s", path, error)

    async def reclaim(self, path: str, contents_manager: ContentsManager) -> bool:
        """Before ``path`` is edited on disk: True when an editor holds it again; else the agent's unsaved
        change, if any, is written to the file first (False)."""
        key = _normalized(path)
        if key not in self.texts:
            return False
        if await self.tabs.wait(self.tabs.editor_holder, key) is not None:
            return True
        await self.write_text_to_file(key, contents_manager)
        return False

    async def write_text_to_file(self, path: str, contents_manager: ContentsManager) -> None:
        async with self._locks(path):
            record = self.texts.get(path)
            if record is None:
                return
            if await _folder_gone(path, contents_manager):
                self.texts.pop(path, None)  # the user deleted the file's folder: nothing to write into
                return
            model = await _call(contents_manager.get, path, content=True, type="file", format="text")
            on_disk = str(model["content"]).replace("\r\n", "\n")
            merged = merge_texts(record.base, on_disk, record.agent)
            if isinstance(merged, MergeConflict):
                raise ToolError(
                    E_EDIT_CONFLICT,
                    user_text(
                        "%1 changed on disk at line %2 where the agent's unsaved change is",
                        path,
                        merged.first_line,
                    ),
                )
            if merged != on_disk:
                await _call(
                    contents_manager.save, {"type": "file", "format": "text", "content": merged}, path
                )
            self.texts.pop(path, None)

    async def settle(self, contents_manager: ContentsManager, recent: set[str]) -> list[SettleOutcome]:
        """The texts among ``recent`` (changed in the turn, or by an undo): saved through the editor, left for
        the user, or written."""
        changed = [path for path in self.texts if path in recent]
        return list(await asyncio.gather(*(self._settle_text_safely(p, contents_manager) for p in changed)))

    async def _settle_text_safely(self, path: str, contents_manager: ContentsManager) -> SettleOutcome:
        try:
            return await self._settle_text(path, contents_manager)
        except Exception as error:
            log.warning("hdsp-agent: could not save the agent's changes to %s: %s", path, error)
            message = error.message if isinstance(error, ToolError) else f"{type(error).__name__}: {error}"
            return SettleOutcome(path, "left_unsaved", problem=message)

    async def _settle_text(self, path: str, contents_manager: ContentsManager) -> SettleOutcome:
        holder = await self.tabs.wait(self.tabs.editor_holder, path)
        if holder is None:
            await self.write_text_to_file(path, contents_manager)
            return SettleOutcome(path, "written")
        async with self._locks(path):
            record = self.texts.get(path)
            if record is None:
                return SettleOutcome(path, "unchanged")
            current = _text(await holder.request("read_text", path), path)
            model = await _call(contents_manager.get, path, content=True, type="file", format="text")
            on_disk = str(model["content"]).replace("\r\n", "\n")
            if current != record.agent or on_disk != record.base:
                return SettleOutcome(path, "left_unsaved")
            await holder.request("save", path)
            self.texts.pop(path, None)
            return SettleOutcome(path, "saved")

    def saved(self, path: str) -> None:
        self.texts.pop(_normalized(path), None)

    def renamed(self, old: str, new: str) -> None:
        if _normalized(old) in self.texts:
            self.texts[_normalized(new)] = self.texts.pop(_normalized(old))

    async def aclose(self, contents_manager: ContentsManager) -> None:
        """The server is stopping: texts no editor holds get the agent's change written to the file."""
        for task in list(self._replays):
            task.cancel()
        for path in list(self.texts):
            if self.tabs.editor_holder(path) is None:
                try:
                    await self.write_text_to_file(path, contents_manager)
                except Exception as error:
                    log.warning("hdsp-agent: the agent's changes to %s were not written: %s", path, error)
