"""The overlay a sandboxed command writes into: the project root seen through overlayfs in a mount namespace
of the command's own, so whatever it creates, changes or deletes lands in a scratch ``upper`` directory and
the real project is untouched until the server has looked at each change (``tools/builtin/shell_changes.py``).

Standard library only: the supervisor (``supervisor.py``) imports it from beside itself, in the child that
then execs bubblewrap (bubblewrap 0.8 has no overlay options of its own). Run as a script
(``python -I -S overlay.py ROOT UPPER WORK TARGET``), it is the server's probe: can an overlay be mounted
here?

- As root: ``unshare(CLONE_NEWNS)``, every mount made private (nothing we mount leaks back to the host),
  then ``mount -t overlay`` over the root.
- Not root: ``unshare(CLONE_NEWUSER | CLONE_NEWNS)`` with the caller's uid and gid mapped to themselves
  (the command keeps its identity), and the ``userxattr`` option (overlayfs keeps its whiteout and opaque
  marks in ``user.overlay.*``: ``trusted.*`` is root's).
"""

from __future__ import annotations

import ctypes
import os
import sys

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
# Characters overlayfs reads as separators in its options: a root spelled with one is not mounted (the
# caller falls back to comparing the tree before and after).
_UNSAFE = (",", ":", "\\", "\n")


class OverlayError(OSError):
    pass


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.unshare.argtypes = [ctypes.c_int]
    return libc


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OverlayError(errno, f"{what}: {os.strerror(errno)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def mount_overlay(root: str, upper: str, work: str, target: str | None = None) -> None:
    """Enter a new mount namespace (and, when not root, a user namespace) and mount an overlay of ``root``
    over ``target`` (default: ``root`` itself) whose writes go to ``upper`` (``work``: overlayfs's own
    scratch, on the same filesystem). Only the calling process and what it starts see it. Raises
    ``OverlayError`` when any step fails."""
    for path in (root, upper, work):
        if any(mark in path for mark in _UNSAFE):
            raise OverlayError(0, f"the path {path!r} has a character overlayfs options cannot carry")
    libc = _libc()
    privileged = os.geteuid() == 0
    if privileged:
        _check(libc.unshare(_CLONE_NEWNS), "unshare(mount namespace)")
    else:
        uid, gid = os.geteuid(), os.getegid()
        _check(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare(user and mount namespaces)")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "make mounts private")
    # No redirects and no metadata-only copies: a renamed folder is then copied up whole (``mv`` gets EXDEV
    # and copies) and a chmod copies the data too, so the upper dir alone says everything the command changed.
    options = f"redirect_dir=nofollow,metacopy=off,lowerdir={root},upperdir={upper},workdir={work}"
    if not privileged:
        options = "userxattr," + options
    where = (target or root).encode()
    _check(libc.mount(b"overlay", where, b"overlay", 0, options.encode()), "mount overlay")


def _probe(root: str, upper: str, work: str, target: str) -> int:
    """Mount an overlay of ``root`` on the empty directory ``target`` (the project itself is never written)
    and write one file through it into ``upper``: 0 when that works, else 1 with the reason on stderr."""
    try:
        mount_overlay(root, upper, work, target)
        with open(os.path.join(target, ".hdsp-overlay-probe"), "w") as probe:
            probe.write("ok")
        if not os.path.isfile(os.path.join(upper, ".hdsp-overlay-probe")):
            raise OverlayError(0, "a write through the overlay did not reach its upper directory")
    except OSError as error:
        sys.stderr.write(f"{error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_probe(*sys.argv[1:5]))
