"""rg's results in path order, without ``--sort path`` (which makes rg search on a single thread).

rg writes each file's results in one piece, in whatever order its threads finish them. We cut its output into
those pieces, sort them as ``--sort path`` would (names compared byte-wise, directory by directory) and hand
them on, so the model sees the same stable order at the speed of a parallel search. A search whose output
passes ``MAX_BUFFERED_BYTES`` runs again with ``--sort path`` and is streamed, so memory stays bounded; the
result is the same either way.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from .ripgrep import RipgrepRun

MAX_BUFFERED_BYTES = 8 * 1024 * 1024
# How rg's output is cut into per-file pieces: JSON messages from "begin" to "end"; NUL-terminated paths;
# "path\0count" lines.
OutputShape = Literal["json", "paths", "counts"]
SortKey = list[bytes]


def path_key(path: bytes) -> SortKey:
    """The order of ``--sort path``: rg sorts each directory's entries by name, byte-wise."""
    return path.split(b"/")


class _Pieces:
    """Per-file pieces of rg's output; lines that belong to no file (the JSON summary) go last."""

    def __init__(self, shape: OutputShape) -> None:
        self.shape = shape
        self.pieces: list[tuple[SortKey, list[bytes]]] = []
        self.trailer: list[bytes] = []
        self._open: list[bytes] | None = None

    def add(self, line: bytes) -> None:
        if self.shape == "paths":
            # `--null`: paths end with NUL, not newline, so one "line" may hold many of them.
            for path in line.split(b"\0"):
                if path.strip(b"\n"):
                    self.pieces.append((path_key(path.strip(b"\n")), [path + b"\0"]))
        elif self.shape == "counts":
            path = line.partition(b"\0")[0]
            self.pieces.append((path_key(path), [line]))
        elif line.startswith(b'{"type":"begin"'):
            self._open = [line]
            self.pieces.append((path_key(_json_path(line)), self._open))
        elif self._open is not None:
            self._open.append(line)
            if line.startswith(b'{"type":"end"'):
                self._open = None
        else:
            self.trailer.append(line)

    def in_order(self) -> list[bytes]:
        self.pieces.sort(key=lambda piece: piece[0])
        return [line for _, lines in self.pieces for line in lines] + self.trailer


def _json_path(begin: bytes) -> bytes:
    path = json.loads(begin)["data"]["path"]
    return path["text"].encode() if "text" in path else base64.b64decode(path["bytes"])


async def search_in_path_order(
    args: Sequence[str], cwd: Path, shape: OutputShape, feed: Callable[[bytes], None]
) -> tuple[int, str]:
    """Run rg with ``args`` and ``feed`` its output lines as ``--sort path`` orders them; rg's exit code and
    stderr."""
    pieces = _Pieces(shape)
    buffered = 0
    async with RipgrepRun(args, cwd) as run:
        async for line in run.lines():
            buffered += len(line)
            if buffered > MAX_BUFFERED_BYTES:
                break
            pieces.add(line)
        else:
            returncode, stderr = await run.finish()
            for line in pieces.in_order():
                feed(line)
            return returncode, stderr
    async with RipgrepRun(["--sort", "path", *args], cwd) as run:
        async for line in run.lines():
            feed(line)
        return await run.finish()
