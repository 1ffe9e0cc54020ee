"""The large notebooks of the ``scale`` group, made at bench time (never committed): ``cells`` cells, the
first a small one to run, the others code cells with outputs spread over them — a text stream on every cell
and a PNG on every fourth — adding up to about ``output_bytes`` of output (as the notebook file holds them:
base64 for the images).

The images are noise, so they do not compress: a browser, a socket or a parser pays for every byte, as for a
real plot.
"""

from __future__ import annotations

import base64
import random
import struct
import zlib
from pathlib import Path

import nbformat

SMALL_CELL = "x = 1"
IMAGE_EVERY = 4
# The share of the output bytes that are images (the rest is text): plots dominate a real notebook's size.
IMAGE_SHARE = 0.8
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def noise_png(encoded_bytes: int, rng: random.Random) -> str:
    """A valid grey-scale PNG of random pixels whose base64 is about ``encoded_bytes`` long."""
    raw_size = max(64, encoded_bytes * 3 // 4 - 80)  # base64 grows by 4/3; the PNG's chunks take ~80 bytes
    width = 256
    height = max(1, raw_size // (width + 1))
    rows = b"".join(b"\x00" + rng.randbytes(width) for _ in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 0))
    return base64.b64encode(png + chunk(b"IEND", b"")).decode("ascii")


def make_notebook(cells: int, output_bytes: int, seed: int = 26) -> nbformat.NotebookNode:
    rng = random.Random(seed)
    image_cells = len(range(1, cells, IMAGE_EVERY))
    image_bytes = int(output_bytes * IMAGE_SHARE) // max(1, image_cells)
    text_bytes = (output_bytes - image_bytes * image_cells) // max(1, cells - 1)
    line = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789\n"
    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    notebook.cells.append(nbformat.v4.new_code_cell(SMALL_CELL))
    for index in range(1, cells):
        source = f"# cell {index}\nvalues_{index} = [i * {index} for i in range(100)]\nprint(values_{index})"
        text = (line * (text_bytes // len(line) + 1))[:text_bytes]
        outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        if index % IMAGE_EVERY == 1:
            png = noise_png(image_bytes, rng)
            outputs.append(
                nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})
            )
        notebook.cells.append(nbformat.v4.new_code_cell(source, execution_count=index, outputs=outputs))
    return notebook


def write_notebook(path: Path, cells: int, output_bytes: int) -> Path:
    nbformat.write(make_notebook(cells, output_bytes), path)
    return path


def output_size(notebook: nbformat.NotebookNode) -> int:
    """The bytes of output the notebook holds: stream text and every mime bundle's data, as stored."""
    total = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                total += len(output.text)
            for value in output.get("data", {}).values():
                total += len(value)
    return total
