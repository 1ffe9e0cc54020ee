"""Images read through read_file: recognized by content, described with their size, attached for vision."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import pytest
from file_tools_harness import jpeg_bytes, png_bytes, read_call

from hdsp_agent.tools.builtin.image_info import ImageInfo, image_info


@pytest.mark.asyncio
async def test_png_is_described_and_attached_for_vision(tmp_path: Path) -> None:
    image = png_bytes(3, 2)
    (tmp_path / "plot.png").write_bytes(image)
    result = await read_call(tmp_path, "read_file", {"filepath": "plot.png"})
    assert result.content == f"plot.png is an image: image/png, 3×2 px, {len(image):,} bytes."
    assert result.details["image"]["mime_type"] == "image/png"
    assert base64.b64decode(result.details["image"]["base64"]) == image


@pytest.mark.parametrize(
    ("name", "content", "description"),
    [
        ("photo.jpg", jpeg_bytes(640, 480), "image/jpeg, 640×480 px"),
        ("anim.gif", b"GIF89a" + struct.pack("<HH", 32, 16) + b"\x00" * 20, "image/gif, 32×16 px"),
        (
            "pic.webp",
            b"RIFF"
            + struct.pack("<I", 30)
            + b"WEBPVP8X"
            + struct.pack("<I", 10)
            + b"\x00" * 4
            + (99).to_bytes(3, "little")
            + (49).to_bytes(3, "little"),
            "image/webp, 100×50 px",
        ),
    ],
)
@pytest.mark.asyncio
async def test_other_image_types_are_recognized_by_content(
    tmp_path: Path, name: str, content: bytes, description: str
) -> None:
    (tmp_path / name).write_bytes(content)
    result = await read_call(tmp_path, "read_file", {"filepath": name})
    assert description in result.content
    assert result.details["image"]["mime_type"] == description.split(",")[0]


def test_a_truncated_header_gives_the_type_without_a_size() -> None:
    assert image_info(b"\x89PNG\r\n\x1a\n") == ImageInfo("image/png", None, None)


def test_text_is_not_an_image() -> None:
    assert image_info(b"GIF is a format; RIFF too") is None
