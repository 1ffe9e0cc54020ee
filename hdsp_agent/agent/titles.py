"""A conversation's title in the history list: a few words of what was asked, and the notebook it was about.

Written from the first message without a model call (a call would cost the user's tokens and time before the
first answer): polite openings dropped, the first clause kept, at most ``MAX_WORDS`` words, then the
notebook's file name, so four chats that began "load data.csv and give me an overview" in four notebooks
read apart in the list.
"""

from __future__ import annotations

import re
from typing import Any

MAX_WORDS = 8
MAX_CHARACTERS = 48
# Openings that say nothing about the task.
_FILLER = re.compile(
    r"^(?:(?:hi|hello|hey|please|pls|ok|okay|so|now)\b[,!.]?\s*"
    r"|(?:can|could|would|will) you\s+(?:please\s+)?"
    r"|i (?:want|need|would like) (?:you )?to\s+"
    r"|let'?s\s+)+",
    re.IGNORECASE,
)
# Where the first thing asked ends.
_CLAUSE_END = re.compile(r"[.?!;:](?:\s|$)|\n|,\s|\s(?:and then|then|and also)\s")


def conversation_title(content: str, context: dict[str, Any] | None = None) -> str:
    """``"Load data.csv — analysis.ipynb"``; without a notebook, the summary alone."""
    summary = summarize(content)
    notebook = notebook_name(context or {})
    if notebook and summary:
        return f"{summary} — {notebook}"
    return summary or notebook


def summarize(content: str) -> str:
    text = " ".join(content.split())
    text = _FILLER.sub("", text).strip()
    clause = _CLAUSE_END.split(text, maxsplit=1)[0].strip() or text
    words = clause.split()
    summary = " ".join(words[:MAX_WORDS])
    if len(summary) > MAX_CHARACTERS:
        summary = summary[: MAX_CHARACTERS - 1].rsplit(" ", 1)[0] or summary[: MAX_CHARACTERS - 1]
    if len(words) > MAX_WORDS or len(summary) < len(clause):
        summary += "…"
    return summary[:1].upper() + summary[1:]


def notebook_name(context: dict[str, Any]) -> str:
    """The file name of the notebook the message was sent from (the sidebar's ``active_document``)."""
    document = context.get("active_document")
    path = document.get("path") if isinstance(document, dict) else None
    if not isinstance(path, str) or not path:
        return ""
    return path.rstrip("/").rsplit("/", 1)[-1]
