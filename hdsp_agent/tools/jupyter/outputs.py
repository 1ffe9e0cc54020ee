"""Cell outputs: iopub messages → nbformat outputs (as JupyterLab's output area builds them) → text for the
model.

``OutputCollector`` follows one execution's iopub messages: consecutive stream messages of the same name
merge, ``update_display_data`` rewrites the outputs that share its display id, ``clear_output`` clears (or,
with ``wait=True``, clears when the next output arrives). ``render_outputs`` turns outputs into what the model
reads: ANSI codes stripped, HTML reduced to text, errors as ``ename: evalue`` plus the traceback, each output
and the whole within a budget (head and tail kept), images attached only for a model that reads them.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import html2text
import nbformat

from ...documents.bridge_wire import OMITTED_KEY
from ..output import OutputBudget, apply_budget

OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
# A text/plain that only names the object (``<IPython.core.display.HTML object>``) says nothing: use richer
# data.
_BARE_OBJECT_REPR = re.compile(r"^<[\w.]+ object(?: at 0x[0-9a-fA-F]+)?>$")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# attach: the image goes to the model as an image part; placeholder: a line saying the model cannot see it;
# brief: just the description (overviews).
ImageMode = Literal["attach", "placeholder", "brief"]


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def collapse_overwrites(text: str) -> str:
    r"""Apply carriage returns the way a terminal shows them, so a progress bar keeps only its last state.

    A trailing ``\r`` is kept: the next chunk of the stream overwrites that line.
    """
    if "\r" not in text:
        return text
    lines = text.split("\n")
    for position, line in enumerate(lines):
        if "\r" not in line:
            continue
        pending_return = line.endswith("\r") and position == len(lines) - 1
        shown = ""
        for segment in line.rstrip("\r").split("\r"):
            shown = segment + shown[len(segment) :]
        lines[position] = shown + ("\r" if pending_return else "")
    return "\n".join(lines)


def _message_type(msg: dict[str, Any]) -> str:
    return str(msg.get("msg_type") or msg.get("header", {}).get("msg_type", ""))


class OutputCollector:
    """The outputs of one execution, built from its iopub messages (already filtered by parent message id)."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self.outputs: list[nbformat.NotebookNode] = []
        self.execution_count: int | None = None
        self.started = False
        self.on_change = on_change
        self._clear_pending = False
        # Unprocessed stream text per output index: a later chunk may overwrite a line the earlier one ended
        # with \r.
        self._raw_streams: dict[int, str] = {}
        self._display_indices: dict[str, list[int]] = {}

    def handle(self, msg: dict[str, Any]) -> None:
        msg_type = _message_type(msg)
        content = msg.get("content", {})
        if msg_type == "status" and content.get("execution_state") == "busy":
            self.started = True
        elif msg_type == "execute_input":
            self.started = True
            self.execution_count = content.get("execution_count", self.execution_count)
        elif msg_type == "clear_output":
            if content.get("wait"):
                self._clear_pending = True
            else:
                self._clear()
        elif msg_type == "update_display_data":
            self._update_display(content)
        elif msg_type in OUTPUT_TYPES:
            if self._clear_pending:
                self._clear()
            self._add(msg_type, content)
        else:
            return
        if self.on_change is not None:
            self.on_change()

    def latest_line(self) -> str:
        """The last non-empty line of text output, for progress reports."""
        for output in reversed(self.outputs):
            text = output_text(output, "brief").strip()
            if text:
                return text.splitlines()[-1][:200]
        return ""

    def _clear(self) -> None:
        self.outputs.clear()
        self._raw_streams.clear()
        self._display_indices.clear()
        self._clear_pending = False

    def _add(self, msg_type: str, content: dict[str, Any]) -> None:
        if msg_type == "stream":
            last = len(self.outputs) - 1
            if (
                last >= 0
                and self.outputs[last].output_type == "stream"
                and self.outputs[last].name == content["name"]
            ):
                self._raw_streams[last] += content["text"]
                self.outputs[last].text = collapse_overwrites(self._raw_streams[last])
                return
            self._raw_streams[len(self.outputs)] = content["text"]
            output = nbformat.v4.new_output(
                "stream", name=content["name"], text=collapse_overwrites(content["text"])
            )
            self.outputs.append(output)
            return
        if msg_type == "execute_result" and self.execution_count is None:
            self.execution_count = content.get("execution_count")
        output = nbformat.v4.output_from_msg({"header": {"msg_type": msg_type}, "content": content})
        display_id = (content.get("transient") or {}).get("display_id")
        if display_id:
            self._display_indices.setdefault(display_id, []).append(len(self.outputs))
        self.outputs.append(output)

    def _update_display(self, content: dict[str, Any]) -> None:
        display_id = (content.get("transient") or {}).get("display_id")
        for index in self._display_indices.get(display_id or "", []):
            self.outputs[index].data = content.get("data", {})
            self.outputs[index].metadata = content.get("metadata", {})


# -- outputs → what the model reads --------------------------------------------------------------------------


@dataclass
class ImagePart:
    """An image output: shown in the tool card, and sent as an image part (never as text) to a model that
    reads images."""

    mime_type: str
    data: str  # base64, as in the notebook
    width: int | None = None
    height: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"mime_type": self.mime_type, "data": self.data, "width": self.width, "height": self.height}


@dataclass
class RenderedOutputs:
    text: str
    images: list[ImagePart] = field(default_factory=list)
    total_chars: int = 0


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def image_dimensions(raw: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG's IHDR chunk or a GIF's screen descriptor; None for other formats."""
    if raw.startswith(_PNG_SIGNATURE) and len(raw) >= 24 and raw[12:16] == b"IHDR":
        width, height = struct.unpack(">II", raw[16:24])
        return int(width), int(height)
    if raw[:6] in (b"GIF87a", b"GIF89a") and len(raw) >= 10:
        width, height = struct.unpack("<HH", raw[6:10])
        return int(width), int(height)
    return None


def _human_bytes(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} kB"
    return f"{count / (1024 * 1024):.1f} MB"


def _decoded(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return b""


def _image(
    mime_type: str, encoded: Any, mode: ImageMode, images: list[ImagePart], omitted: Any = None
) -> str:
    if isinstance(omitted, dict) and not _joined(encoded):
        # A brief read (``bridge_wire.ReadRequest``): the tab sent the image's size and first bytes only.
        head = _decoded(str(omitted.get("head", ""))[:44])
        size = image_dimensions(head)
        count = int(omitted.get("bytes") or 0)
        described = mime_type + (f" {size[0]}×{size[1]} px" if size else "") + f", {_human_bytes(count)}"
        return f"[{described}]"
    data = _joined(encoded).replace("\n", "")
    raw = _decoded(data)
    size = image_dimensions(raw)
    described = mime_type + (f" {size[0]}×{size[1]} px" if size else "") + f", {_human_bytes(len(raw))}"
    if mode == "attach":
        images.append(ImagePart(mime_type, data, *(size or (None, None))))
        return f"[{described}: attached as image {len(images)}]"
    if mode == "placeholder":
        # Kept for the tool card (``details.images``; the loop sends images to vision models only): the user
        # sees the plot even when the model reads just this line.
        images.append(ImagePart(mime_type, data, *(size or (None, None))))
        return f"[{described}: not shown, this model does not read images]"
    return f"[{described}]"


def html_to_text(html: str) -> str:
    converter = html2text.HTML2Text()
    converter.body_width = 0
    converter.ignore_images = True
    return str(converter.handle(html)).strip()


def _rich_text(data: dict[str, Any]) -> str:
    plain = _joined(data.get("text/plain", ""))
    if plain and not _BARE_OBJECT_REPR.match(plain.strip()):
        return plain
    if "text/markdown" in data:
        return _joined(data["text/markdown"])
    if "text/html" in data:
        return html_to_text(_joined(data["text/html"]))
    if "text/latex" in data:
        return _joined(data["text/latex"])
    if "application/json" in data:
        return json.dumps(data["application/json"], ensure_ascii=False)
    if "image/svg+xml" in data:
        return f"[image/svg+xml, {len(_joined(data['image/svg+xml'])):,} characters]"
    return plain


def output_text(
    output: dict[str, Any], mode: ImageMode = "placeholder", images: list[ImagePart] | None = None
) -> str:
    """One output as text: ANSI stripped, HTML reduced; images are attached to ``images`` or described."""
    kind = output.get("output_type")
    if kind == "stream":
        return strip_ansi(collapse_overwrites(_joined(output.get("text", ""))))
    if kind == "error":
        summary = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        traceback = strip_ansi("\n".join(output.get("traceback", [])))
        return f"{summary}\n{traceback}" if traceback.strip() else summary
    data = output.get("data", {})
    sink = images if images is not None else []
    omitted = (output.get("metadata") or {}).get(OMITTED_KEY) or {}
    parts = [_image(mime, data[mime], mode, sink, omitted.get(mime)) for mime in IMAGE_TYPES if mime in data]
    text = strip_ansi(_rich_text(data)).strip("\n")
    if text and not (parts and _BARE_OBJECT_REPR.match(text.strip())):
        parts.insert(0, text)
    return "\n".join(parts)


def render_outputs(
    outputs: Iterable[dict[str, Any]],
    *,
    vision: bool,
    paging_hint: str,
    per_output_chars: int | None = 8_000,
    total_chars: int | None = 20_000,
    redact: Callable[[str], str] | None = None,
) -> RenderedOutputs:
    """All outputs of a cell as the model reads them; ``None`` budgets keep everything (for paging).
    ``redact`` (the executor's redaction) is applied to each output before a budget cuts it: a secret at the
    cut would otherwise leave a piece on each side."""
    images: list[ImagePart] = []
    texts = []
    for output in outputs:
        # One output per block of lines: a stream's final newline would otherwise show as an empty line.
        text = output_text(output, "attach" if vision else "placeholder", images).rstrip("\n")
        if redact is not None:
            text = redact(text)
        if per_output_chars is not None:
            text = apply_budget(text, OutputBudget(max_chars=per_output_chars), paging_hint).text
        texts.append(text)
    joined = "\n".join(texts)
    full_length = len(joined)
    if total_chars is not None:
        joined = apply_budget(joined, OutputBudget(max_chars=total_chars), paging_hint).text
    return RenderedOutputs(joined, images, full_length)


# An overview line reads at most this much of an output's text (a cell's log can be megabytes; its first line
# is what is shown) ...
_SUMMARY_READ_CHARS = 4_096
# ... and redacts the kept width and this many characters after it, then cuts: a secret the cut splits is
# whole in what was redacted (a longer one is caught by its pieces, ``redaction._PIECE_CHARS``).
_SUMMARY_REDACT_MARGIN = 200


def _text_cut(output: dict[str, Any], chars: int) -> dict[str, Any]:
    """``output`` with its stream text and text data cut to ``chars`` (images kept: they are described)."""
    cut = dict(output)
    if "text" in output:
        cut["text"] = _joined(output["text"])[:chars]
    data = output.get("data")
    if isinstance(data, dict):
        cut["data"] = {
            mime: value
            if mime in IMAGE_TYPES or not isinstance(value, str | list)
            else _joined(value)[:chars]
            for mime, value in data.items()
        }
    return cut


def output_summary(
    outputs: Sequence[dict[str, Any]], width: int = 100, redact: Callable[[str], str] | None = None
) -> str:
    """A one-line hint of a cell's outputs for the notebook overview. Cut to a bound first, then ``redact``
    applied to a window a little wider than what is kept, then cut to ``width``."""
    if not outputs:
        return ""
    keep = redact or (lambda text: text)
    window = width + _SUMMARY_REDACT_MARGIN
    errors = [output for output in outputs if output.get("output_type") == "error"]
    if errors:
        line = f"error: {errors[-1].get('ename', '')}: {errors[-1].get('evalue', '')}"
        return keep(line[:window])[:width]
    text = output_text(_text_cut(outputs[0], _SUMMARY_READ_CHARS), "brief").strip()
    first = text.splitlines()[0] if text else ""
    first = keep(first[:window])
    more = f" (+{len(outputs) - 1} more)" if len(outputs) > 1 else ""
    return (first[:width] + more) if first else f"{len(outputs)} output(s)"


def stdin_was_requested(outputs: Iterable[dict[str, Any]]) -> bool:
    return any(output.get("ename") == "StdinNotImplementedError" for output in outputs)
