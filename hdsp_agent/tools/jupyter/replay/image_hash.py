"""A perceptual hash of a PNG, so a replotted figure that differs only in encoding still counts as equal.

The average hash (8×8 greyscale, one bit per pixel above the mean) needs Pillow; without it, images are
compared byte for byte, which is stricter (a matplotlib version change would then show as a difference).
"""

from __future__ import annotations

import base64
import io

HASH_SIDE = 8
# Bits out of 64 that may differ for two images to count as the same picture.
SAME_PICTURE_BITS = 6


def average_hash(png: bytes) -> int | None:
    """The 64-bit average hash of a PNG; None when Pillow is missing or the bytes are not an image."""
    try:
        from PIL import Image
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(png)) as image:
            small = image.convert("L").resize((HASH_SIDE, HASH_SIDE))
            pixels = list(small.getdata())
    except Exception:
        return None
    mean = sum(pixels) / len(pixels)
    bits = 0
    for pixel in pixels:
        bits = (bits << 1) | (pixel > mean)
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
