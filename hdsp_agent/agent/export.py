"""A conversation as a Markdown document for the user: what the chat showed, not what the model read.

It is written from the conversation's event log (the sidebar's own record), not from the model's messages:
tool results appear as the tool returned them, without the ``<tool_output>`` envelope, the notes and the
budget cuts the model gets; paths under the server's root are written relative to it (the server's absolute
paths mean nothing on another machine and say more about it than the reader needs); the images a call
produced (a plot from ``run_cell``, a picture ``read_file`` opened) are embedded as ``data:`` URIs, so the
one ``.md`` file opens whole in JupyterLab, VS Code or any Markdown viewer, with nothing beside it to lose.

The JSON export (``format=json``) stays the raw record: the model's messages and the events, as stored.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..tools.output import ENVELOPE_TAG

_TERMINAL = {"done", "errored", "denied", "canceled"}
_STATUS_WORDS = {"done": "done", "errored": "failed", "denied": "denied", "canceled": "stopped"}
_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"}
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
# An envelope that reached a stored text anyway (a tool that echoed one): its tags only, the data stays.
_ENVELOPE = re.compile(rf"</?{ENVELOPE_TAG}\b[^>]*>\n?")
# The line a cell output's picture becomes for the model (``tools/jupyter/outputs.py``): the export shows
# the picture itself instead.
_IMAGE_PLACEHOLDER = re.compile(
    r"^\[image/[^\]\n]*: (?:not shown, this model does not read images|attached as image \d+)\]\n?", re.M
)


def conversation_markdown(title: str, events: list[dict[str, Any]], root: Path | str | None) -> str:
    """``events`` (the conversation's log, in order) as Markdown; ``root``: the server's root directory."""
    paths = _RootPaths(root)
    lines = [f"# {title}", ""]
    arguments: dict[str, Any] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message.user":
            lines += ["## User", "", paths.relative(str(event.get("content", ""))), ""]
        elif kind == "assistant.message":
            if event.get("content"):
                lines += ["## Assistant", "", paths.relative(str(event["content"])), ""]
        elif kind == "tool.status":
            call_id = str(event.get("call_id", ""))
            if event.get("arguments") is not None:
                arguments[call_id] = event["arguments"]
            elif event.get("raw_arguments") and call_id not in arguments:
                arguments[call_id] = event["raw_arguments"]
            if event.get("status") in _TERMINAL:
                lines += _tool_call(event, arguments.get(call_id), paths)
        elif kind == "error":
            lines += [
                f"> **Error** ({event.get('code', '')}): {paths.relative(str(event.get('message', '')))}",
                "",
            ]
        elif kind == "turn.end" and event.get("reason") not in ("completed", None) and event.get("message"):
            lines += [f"> {paths.relative(str(event['message']))}", ""]
        elif kind == "context.compacted":
            lines += [f"> {event.get('message', '')}", ""]
        elif kind == "turn.undone":
            restored = [f"> - {paths.relative(str(line))}" for line in event.get("restored") or []]
            lines += ["> Undone. Restored:", *restored, ""]
    return "\n".join(lines)


def _tool_call(event: dict[str, Any], arguments: Any, paths: _RootPaths) -> list[str]:
    name = str(event.get("name", ""))
    status = _STATUS_WORDS.get(str(event.get("status")), str(event.get("status")))
    lines = [f"**Tool call** `{name}` ({status})", ""]
    if arguments not in (None, {}, ""):
        shown = (
            arguments if isinstance(arguments, str) else json.dumps(arguments, indent=2, ensure_ascii=False)
        )
        lines += _fenced(paths.relative(shown), "json")
    error = event.get("error")
    if error:
        lines += [
            f"**{'Denied' if event.get('status') == 'denied' else 'Error'}**: "
            f"{paths.relative(str(error.get('message', '')))}",
            "",
        ]
    details = event.get("details") or {}
    images = _images(details)
    content = _ENVELOPE.sub("", str(event.get("content") or ""))
    if images:
        content = _IMAGE_PLACEHOLDER.sub("", content)
    if content.strip():
        lines += ["**Result**", "", *_fenced(paths.relative(content))]
    diff = details.get("diff")
    if isinstance(diff, str) and diff.strip():
        lines += _fenced(paths.relative(diff), "diff")
    for index, (mime_type, data) in enumerate(images, start=1):
        lines += [f"![Output image {index} of {name}](data:{mime_type};base64,{data})", ""]
    return lines


def _images(details: dict[str, Any]) -> list[tuple[str, str]]:
    """(MIME type, base64) of each image a call produced: cell outputs and MCP results
    (``details.images``), a picture ``read_file`` opened (``details.image``)."""
    found = [
        (image.get("mime_type"), image.get("data"))
        for image in details.get("images") or []
        if isinstance(image, dict)
    ]
    single = details.get("image")
    if isinstance(single, dict):
        found.append((single.get("mime_type"), single.get("base64")))
    return [
        (mime_type, "".join(data.split()))
        for mime_type, data in found
        # Only pictures, and only base64: nothing that could break out of the Markdown image syntax.
        if mime_type in _IMAGE_TYPES and isinstance(data, str) and data and _BASE64.match(data)
    ]


def _fenced(text: str, language: str = "") -> list[str]:
    # A fence longer than any backtick run inside, so the content cannot close it.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence, ""]


class _RootPaths:
    """Writes absolute paths under the server's root relative to it (the root itself as ``.``)."""

    def __init__(self, root: Path | str | None) -> None:
        forms: set[str] = set()
        if root is not None:
            given = str(root).rstrip("/")
            forms.add(given)
            try:
                forms.add(str(Path(given).resolve()))
            except OSError:
                pass
        # Longest first, so /home/u/project is replaced before a shorter /home/u would be; "" or "/" never.
        prefixes = sorted((form for form in forms if form not in ("", "/")), key=len, reverse=True)
        self._pattern = (
            re.compile("|".join(rf"{re.escape(prefix)}(?:/|(?![\w.-]))" for prefix in prefixes))
            if prefixes
            else None
        )

    def relative(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda match: "" if match.group(0).endswith("/") else ".", text)
