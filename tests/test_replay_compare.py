"""Comparing a cell's saved and replayed outputs: what counts as the same, what as a difference."""

from __future__ import annotations

import base64
import struct
import zlib

from hdsp_agent.tools.jupyter.replay.compare import compare_outputs
from hdsp_agent.tools.jupyter.replay.image_hash import average_hash, same_picture


def _png(pixels: list[list[tuple[int, int, int]]], *, level: int = 6, filter_kind: int = 0) -> bytes:
    """An RGB PNG, encoded with the given zlib level and row filter (0: none, 1: sub)."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
        )

    rows = b""
    for row in pixels:
        flat = bytes(v for pixel in row for v in pixel)
        if filter_kind == 1:
            flat = bytes((flat[i] - (flat[i - 3] if i >= 3 else 0)) & 0xFF for i in range(len(flat)))
        rows += bytes([filter_kind]) + flat
    header = struct.pack(">IIBBBBB", len(pixels[0]), len(pixels), 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, level))
        + chunk(b"IEND", b"")
    )


def _picture(split: int, size: int = 32) -> list[list[tuple[int, int, int]]]:
    """Dark on the left of column ``split``, light on the right: a stand-in for a plotted line."""
    return [[(20, 20, 20) if x < split else (240, 240, 240) for x in range(size)] for _ in range(size)]


def _stdout(text: str) -> dict[str, object]:
    return {"output_type": "stream", "name": "stdout", "text": text}


def _image(png: bytes) -> dict[str, object]:
    return {"output_type": "display_data", "data": {"image/png": base64.b64encode(png).decode()}}


def test_timestamps_addresses_and_float_noise_are_not_differences() -> None:
    saved = [
        _stdout("run at 2026-11-25 09:14:03.221 <Model object at 0x7f3a2b1c9d00>\nloss 0.30000000000000004\n")
    ]
    replayed = [_stdout("run at 2026-11-27 17:02:11.004 <Model object at 0x7f99aa01bb20>\nloss 0.3\n")]
    assert compare_outputs(saved, replayed) is None


def test_a_changed_number_text_or_error_is_a_difference() -> None:
    assert compare_outputs([_stdout("mean 4.5\n")], [_stdout("mean 4.6\n")]) is not None
    assert compare_outputs([_stdout("mode: full\n")], [_stdout("mode: sample\n")]) is not None
    error = {"output_type": "error", "ename": "NameError", "evalue": "x", "traceback": []}
    difference = compare_outputs([_stdout("42\n")], [error])
    assert difference is not None and difference.what == "text became error"


def test_the_same_picture_encoded_differently_is_the_same_and_another_picture_is_not() -> None:
    plot = _png(_picture(12), level=9, filter_kind=0)
    reencoded = _png(_picture(12), level=1, filter_kind=1)
    assert plot != reencoded
    assert average_hash(plot) == average_hash(reencoded) is not None
    assert same_picture(base64.b64encode(plot).decode(), base64.b64encode(reencoded).decode())
    other = _png(_picture(28))
    assert compare_outputs([_image(plot)], [_image(reencoded)]) is None
    assert compare_outputs([_image(plot)], [_image(other)]) is not None
