"""Where a sandboxed command's overlay keeps its writes, and whether an overlay can be mounted here at all.

The ``upper`` directory must outlive the command's mount namespace (the server reads it after the command
has ended), so it is an ordinary directory, not a tmpfs inside the namespace. It is made on the project's own
filesystem when a usable place there exists (applying a created or changed file is then a rename), never
inside the project (overlayfs refuses overlapping layers, and the command must not see it) and never in a
place the sandbox shows the command (bubblewrap gives the command a private ``/tmp`` and hides the homes).

Whether overlays work is probed once per (project filesystem, scratch place) with the real mount code
(``overlay.py`` run as a script) on an empty mount point: the project is never written by the probe.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

OVERLAY_SCRIPT = Path(__file__).with_name("overlay.py")
_PROBE_SECONDS = 10.0
# Where scratch dirs may go, best first among those on the project's filesystem.
_CANDIDATES = (tempfile.gettempdir(), "/var/tmp")


@dataclass(frozen=True)
class OverlayDirs:
    """One command's overlay: ``upper`` receives its writes, ``work`` is overlayfs's, both under ``scratch``
    (removed when the command's changes have been applied)."""

    scratch: str
    upper: str
    work: str

    def remove(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def scratch_base(root: str) -> str | None:
    """The place for overlay scratch dirs of ``root``: on its filesystem when possible, else the first
    usable candidate; None when there is none."""
    try:
        device = os.stat(root).st_dev
    except OSError:
        return None
    usable = []
    for candidate in _CANDIDATES:
        real = os.path.realpath(candidate)
        if _overlaps(real, root) or not os.path.isdir(real) or not os.access(real, os.W_OK | os.X_OK):
            continue
        usable.append(real)
        if os.stat(real).st_dev == device:
            return real
    return usable[0] if usable else None


def make_overlay_dirs(base: str) -> OverlayDirs:
    scratch = tempfile.mkdtemp(prefix="hdsp-overlay-", dir=base)  # 0700: only we can look inside
    upper, work = os.path.join(scratch, "upper"), os.path.join(scratch, "work")
    os.mkdir(upper)
    os.mkdir(work)
    return OverlayDirs(scratch, upper, work)


# Overlays that were probed to work and then failed for a command: not tried again in this server's life.
_broken: dict[tuple[str, str], str] = {}


def overlay_works(root: str, base: str) -> str | None:
    """None when an overlay of ``root`` with its upper under ``base`` can be mounted; else why not."""
    return _broken.get((root, base)) or _probe(root, base)


@functools.lru_cache(maxsize=32)
def _probe(root: str, base: str) -> str | None:
    dirs = make_overlay_dirs(base)
    target = os.path.join(dirs.scratch, "mnt")
    os.mkdir(target)
    try:
        probe = subprocess.run(
            [sys.executable, "-I", "-S", str(OVERLAY_SCRIPT), root, dirs.upper, dirs.work, target],
            capture_output=True,
            text=True,
            timeout=_PROBE_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    finally:
        dirs.remove()
    return None if probe.returncode == 0 else (probe.stderr.strip() or f"exit code {probe.returncode}")


def mark_broken(root: str, scratch: str, reason: str) -> None:
    """The overlay of ``root`` (scratch dir ``scratch``) failed for a command although the probe passed: later
    commands use the fallback."""
    _broken[(root, os.path.dirname(scratch))] = reason
