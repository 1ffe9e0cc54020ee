"""Recognizing PNG, JPEG, GIF and WebP files by their first bytes, and reading their size from the header.

Only the header is parsed (no decoding), so this stays cheap on large images and needs no imaging library.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class ImageInfo:
    mime_type: str
    width: int | None
    height: int | None


def image_info(head: bytes) -> ImageInfo | None:
    """The image type and size of a file starting with ``head``, or None if it is not an image."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return ImageInfo("image/png", *_png_size(head))
    if head.startswith(b"\xff\xd8\xff"):
        return ImageInfo("image/jpeg", *_jpeg_size(head))
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return ImageInfo("image/gif", *_gif_size(head))
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return ImageInfo("image/webp", *_webp_size(head))
    return None


Size = tuple[int | None, int | None]
_UNKNOWN: Size = (None, None)


def _png_size(head: bytes) -> Size:
    # The IHDR chunk comes first: width and height are big-endian at bytes 16-24.
    if len(head) < 24 or head[12:16] != b"IHDR":
        return _UNKNOWN
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _gif_size(head: bytes) -> Size:
    if len(head) < 10:
        return _UNKNOWN
    width, height = struct.unpack("<HH", head[6:10])
    return width, height


# JPEG start-of-frame markers carry the size; 0xC4 (DHT), 0xC8 (JPG) and 0xCC (DAC) share the range but do
# not.
_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(head: bytes) -> Size:
    position = 2
    while position + 9 < len(head):
        if head[position] != 0xFF:
            return _UNKNOWN
        marker = head[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        (segment_length,) = struct.unpack(">H", head[position + 2 : position + 4])
        if marker in _SOF_MARKERS:
            height, width = struct.unpack(">HH", head[position + 5 : position + 9])
            return width, height
        position += 2 + segment_length
    return _UNKNOWN


def _webp_size(head: bytes) -> Size:
    chunk = head[12:16]
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return _UNKNOWN
