"""What the model reads of one conversation: its messages, saved to the store at every change, and the tools
it has called so far.

The conversation's event log is what the user sees; this is what the model sees. Notes the user's actions
leave for the model (an undo, a redo) are user messages marked ``(hdsp-agent note)``, so its next step does
not assume what was undone is still there.
"""

from __future__ import annotations

from typing import Any

from ..tools.profiles import tools_used
from .store import SessionStore

NOTE_PREFIX = "(hdsp-agent note) "


class ConversationHistory:
    def __init__(
        self, session_id: str, store: SessionStore, messages: list[dict[str, Any]] | None = None
    ) -> None:
        self.session_id = session_id
        self.store = store
        # One list for the conversation's life: the turn loop appends to it in place.
        self.messages: list[dict[str, Any]] = messages or []
        # Tools called in this conversation, by first use; kept when a compaction drops the calls (a tool
        # once used stays offered). After a restart it starts again from the stored messages.
        self._tools_in_use: dict[str, None] = {}

    def save(self) -> None:
        self.store.save_messages(self.session_id, self.messages)

    def add_user(self, content: str) -> None:
        self.messages.append({"role": "user", "content": content})
        self.save()

    def note(self, text: str) -> None:
        """Tell the model what the user did outside the chat (it reads this with the next message)."""
        self.add_user(NOTE_PREFIX + text)

    def tools_in_use(self) -> list[str]:
        """The tools used so far, by first use (fixed at a turn's start, see ``ToolCatalog.offering``)."""
        for name in tools_used(self.messages):
            self._tools_in_use.setdefault(name, None)
        return list(self._tools_in_use)
