"""A perceptual hash of a PNG, so a replotted figure that differs only in encoding still counts as equal.

The average hash: the picture shrunk to 8×8 grey levels, one bit per cell above the mean; two pictures with at
most a few differing bits are the same picture. Pillow decodes when it is installed; otherwise the common
case of plots (8-bit grey/RGB/RGBA, not interlaced: what matplotlib writes) is decoded here with ``zlib``.
Any other PNG without Pillow is compared byte for byte, which is stricter.
"""

from __future__ import annotations

import base64
import io
import struct
import zlib

HASH_SIDE = 8
# Bits out of 64 that may differ for two images to count as the same picture.
SAME_PICTURE_BITS = 6
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # PNG colour type → samples per pixel


def _grey_with_pillow(png: bytes) -> tuple[int, int, list[float]] | None:
    try:
        from PIL import Image
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(png)) as image:
            grey = image.convert("L")
            return grey.width, grey.height, [float(p) for p in grey.getdata()]
    except Exception:
        return None


def _paeth(left: int, up: int, up_left: int) -> int:
    estimate = left + up - up_left
    distances = (abs(estimate - left), abs(estimate - up), abs(estimate - up_left))
    return (left, up, up_left)[distances.index(min(distances))]


def _grey_from_png(png: bytes) -> tuple[int, int, list[float]] | None:
    """8-bit, non-interlaced grey/RGB/RGBA PNGs decoded to grey levels; None for anything else."""
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    position, header, data = 8, b"", bytearray()
    while position + 8 <= len(png):
        length, tag = struct.unpack(">I4s", png[position : position + 8])
        body = png[position + 8 : position + 8 + length]
        if tag == b"IHDR":
            header = body
        elif tag == b"IDAT":
            data += body
        position += 12 + length
    if len(header) < 13:
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header[:13])
    channels = _CHANNELS.get(colour)
    if depth != 8 or channels is None or interlace or width * height > 16_000_000:
        return None
    try:
        raw = zlib.decompress(bytes(data))
    except zlib.error:
        return None
    stride = width * channels
    previous = bytearray(stride)
    grey: list[float] = []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + previous[i]) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, previous[i], up_left)) & 0xFF
        for x in range(0, stride, channels):
            if channels >= 3:
                value = 0.299 * line[x] + 0.587 * line[x + 1] + 0.114 * line[x + 2]
            else:
                value = float(line[x])
            if channels in (2, 4):  # transparent pixels show the (white) page behind them
                alpha = line[x + channels - 1] / 255
                value = value * alpha + 255 * (1 - alpha)
            grey.append(value)
        previous = line
    return width, height, grey


def average_hash(png: bytes) -> int | None:
    """The 64-bit average hash of a PNG; None when it cannot be decoded here."""
    decoded = _grey_with_pillow(png) or _grey_from_png(png)
    if decoded is None:
        return None
    width, height, grey = decoded
    if not width or not height:
        return None
    sums = [0.0] * (HASH_SIDE * HASH_SIDE)
    counts = [0] * (HASH_SIDE * HASH_SIDE)
    for y in range(height):
        cell_row = y * HASH_SIDE // height * HASH_SIDE
        for x in range(width):
            cell = cell_row + x * HASH_SIDE // width
            sums[cell] += grey[y * width + x]
            counts[cell] += 1
    means = [total / count if count else 0.0 for total, count in zip(sums, counts, strict=True)]
    overall = sum(means) / len(means)
    bits = 0
    for value in means:
        bits = (bits << 1) | (value > overall)
    return bits


def same_picture(saved_base64: str, replayed_base64: str) -> bool:
    saved = base64.b64decode("".join(saved_base64.split()))
    replayed = base64.b64decode("".join(replayed_base64.split()))
    if saved == replayed:
        return True
    saved_hash, replayed_hash = average_hash(saved), average_hash(replayed)
    if saved_hash is None or replayed_hash is None:
        return False
    return bin(saved_hash ^ replayed_hash).count("1") <= SAME_PICTURE_BITS
