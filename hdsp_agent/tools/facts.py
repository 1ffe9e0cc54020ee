"""What a built-in tool is, declared on the tool itself (``Tool.facts``) and read by everyone who needs it.

- the policy (``permissions/defaults.py``): its default level (allow, ask with a reason, or deny) and what
  kind of change it makes (files, notebook cells, the kernel) for ``policy check`` and accept-edits mode;
- the catalog (``tools/profiles.py``): which profiles offer it, and whether only once a notebook is in play
  or the web tools are enabled;
- the sidebar (``src/toolWordsTable.ts``, generated from these facts by ``make wire-schema``): the words its
  cards say for a call ("Insert a cell into %1?"), translated with the sidebar's catalog.

Whether a tool changes anything stays ``Tool.read_only`` (it may run beside other calls; MCP's readOnlyHint).
Tools from outside (MCP servers, declared tools, plugins) declare no facts: the policy asks about them and the
sidebar describes them by what they do.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

ProfileName = Literal["compact", "standard", "full"]
Level = Literal["allow", "ask", "deny"]
# What a call changes, for the policy when it has only the arguments (``permissions.defaults.derive_action``)
# and for accept-edits mode (file and cell edits go through).
ChangeKind = Literal["none", "file_edit", "cell_edit", "kernel", "other"]
ALL_PROFILES: frozenset[ProfileName] = frozenset({"compact", "standard", "full"})


class ToolWords(BaseModel):
    """What a call does in the user's words: a question on the approval card, a statement on the tool card;
    ``…_with_subject`` when the call names a file or notebook (``%1``: its base name). English templates,
    translated by the sidebar (they are ``user_template`` strings, in the catalog)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str
    statement: str
    question_with_subject: str | None = None
    statement_with_subject: str | None = None


class ToolFacts(BaseModel):
    """A built-in tool's facts (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    level: Level
    # For ``ask``: why, in the user's words (a ``user_template``; never the tool's name, which the user does
    # not know): "It changes cells of a notebook".
    ask_reason: str | None = None
    changes: ChangeKind = "none"
    profiles: frozenset[ProfileName] = ALL_PROFILES
    # Offered only when a notebook is in play / the administrator enabled the web tools (``full`` offers the
    # notebook tools always).
    needs: Literal["notebook", "web"] | None = None
    words: ToolWords | None = None


# The modules whose tool classes declare facts: imported on first use (the tools import the permission
# helpers, so the policy cannot import them while it loads).
_TOOL_MODULES = (
    "hdsp_agent.tools.builtin",
    "hdsp_agent.tools.jupyter",
    "hdsp_agent.mcp.start",
)
_declared: dict[str, ToolFacts] = {}
_imported = False


def declare(name: str, facts: ToolFacts) -> None:
    """Called by ``Tool.__init_subclass__`` for each class that declares its own facts."""
    known = _declared.get(name)
    if known is not None and known != facts:
        raise ValueError(f"two tools named {name!r} declare different facts")
    _declared[name] = facts


def known_facts() -> Mapping[str, ToolFacts]:
    """Every built-in tool's facts, by name (read-only)."""
    global _imported
    if not _imported:
        for module in _TOOL_MODULES:
            importlib.import_module(module)
        _imported = True
    return _declared
