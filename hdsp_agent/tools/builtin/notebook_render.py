"""A notebook file as the model should read it: cells with their ids, types, sources and brief outputs.

Raw ``.ipynb`` JSON wastes the model's context on escaping and metadata and invites text edits of the JSON;
this view shows what matters and points at the notebook cell tools for changes.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import nbformat

# Per output: enough to know what happened; read_cell / get_cell_output show everything.
OUTPUT_MAX_LINES = 8
OUTPUT_MAX_CHARS = 800
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")


class NotANotebook(ValueError):
    """The file is not a notebook nbformat can read."""


def render_notebook(text: str, shown_as: str) -> list[str]:
    """The notebook in ``text`` as lines of the cell view. Raises ``NotANotebook`` when it cannot be read."""
    try:
        notebook = nbformat.reads(text, as_version=4)
    except Exception as error:  # nbformat raises several unrelated types for malformed files
        raise NotANotebook(str(error) or type(error).__name__) from None
    cells = notebook.get("cells", [])
    kernel = notebook.get("metadata", {}).get("kernelspec", {})
    kernel_text = f" · kernel: {kernel.get('display_name') or kernel.get('name')}" if kernel else ""
    lines = [
        f"Notebook {shown_as} · {len(cells)} cell{'' if len(cells) == 1 else 's'}{kernel_text}",
        "(The saved file's cells. Change cells with the notebook tools (edit_cell, insert_cell), not as "
        "text.)",
    ]
    for index, cell in enumerate(cells):
        lines.append("")
        lines += _cell_lines(index, cell)
    return lines


def _cell_lines(index: int, cell: dict[str, Any]) -> list[str]:
    kind = cell.get("cell_type", "?")
    header = f"--- [{index}] {cell.get('id') or '(no id)'} · {kind}"
    if kind == "code":
        count = cell.get("execution_count")
        header += f" · [{count if count is not None else ' '}]"
    lines = [header + " ---"]
    source = _joined(cell.get("source", ""))
    lines += source.split("\n") if source else ["(empty)"]
    outputs = cell.get("outputs", []) if kind == "code" else []
    if outputs:
        lines.append(f"--- outputs ({len(outputs)}) ---")
        for output in outputs:
            lines += _output_lines(output)
    return lines


def _output_lines(output: dict[str, Any]) -> list[str]:
    kind = output.get("output_type", "?")
    if kind == "stream":
        return _brief(f"[{output.get('name', 'stream')}]", _joined(output.get("text", "")))
    if kind == "error":
        return [f"[error] {output.get('ename', 'Error')}: {_strip_ansi(str(output.get('evalue', '')))}"]
    data = output.get("data", {})
    label = f"[{kind}]"
    images = [_describe_image(mime, data[mime]) for mime in _IMAGE_TYPES if mime in data]
    if "text/plain" in data:
        return _brief(label, _joined(data["text/plain"])) + [f"{label} {image}" for image in images]
    if images:
        return [f"{label} {image}" for image in images]
    kinds = ", ".join(sorted(data)) or "no data"
    return [f"{label} {kinds} (not shown)"]


def _brief(label: str, text: str) -> list[str]:
    text = _strip_ansi(text).rstrip("\n")
    all_lines = text.split("\n")
    shown_text = "\n".join(all_lines[:OUTPUT_MAX_LINES])[:OUTPUT_MAX_CHARS]
    shown = shown_text.split("\n")
    result = [f"{label} {shown[0]}"] + shown[1:]
    hidden_chars = len(text) - len(shown_text)
    if hidden_chars:
        hidden_lines = len(all_lines) - len(shown)
        result.append(f"[... output cut: {hidden_chars:,} more chars ({hidden_lines} more lines)]")
    return result


def _describe_image(mime_type: str, encoded: Any) -> str:
    payload = _joined(encoded)
    if mime_type == "image/svg+xml":
        return f"{mime_type}, {len(payload):,} chars (not shown)"
    try:
        size = len(base64.b64decode(payload.replace("\n", ""), validate=False))
    except (binascii.Error, ValueError):
        size = len(payload)
    return f"{mime_type}, {size / 1024:.1f} kB (not shown)"


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _strip_ansi(text: str) -> str:
    return _ANSI_ESCAPE.sub("", text)
