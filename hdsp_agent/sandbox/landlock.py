"""Landlock through raw syscalls (ctypes): the ABI version, and restricting the calling process.

Standard library only: the supervisor script imports this module by file, outside the hdsp_agent package.
A process restricts itself (and every process it starts afterwards); nothing can lift the restriction.
"""

from __future__ import annotations

import ctypes
import os

# The syscall numbers are the same on x86_64 and aarch64 (the generic table).
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_LAST_CAP_GUESS = 63

# Filesystem rights, by the ABI that introduced them.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
# Every filesystem right any ABI knows (masked down to what the running kernel handles).
ALL_RIGHTS = (1 << 16) - 1


class LandlockError(OSError):
    pass


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI (0: not available — not compiled in, disabled at boot, or not Linux)."""
    try:
        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        version = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def restrict_self(rules: list[tuple[str, int]], *, deny_tcp: bool, abi: int | None = None) -> int:
    """Allow only what ``rules`` grant — (path, rights) pairs, each right beneath its path — on the
    filesystem; with ``deny_tcp`` (ABI >= 4) no TCP bind or connect. On ABI >= 6 signals to and abstract
    sockets of processes outside the sandbox are refused too. Returns the ABI used."""
    abi = abi_version() if abi is None else abi
    if abi < 1:
        raise LandlockError("Landlock is not available in this kernel")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, NET_BIND_TCP | NET_CONNECT_TCP if deny_tcp and abi >= 4 else 0, 0)
    size = 8
    if abi >= 4:
        size = 16
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path, rights in rules:
            _add_path(libc, int(ruleset), path, rights & handled)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_SYS_RESTRICT_SELF, int(ruleset), 0) != 0:
            raise LandlockError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(int(ruleset))
    return abi


def drop_capabilities() -> None:
    """Empty the capability bounding and ambient sets, so whatever this process execs — even as root — starts
    with no capabilities (no loading kernel modules, raw sockets, chown, reboot...). Landlock alone confines
    the filesystem, not what root's capabilities allow. Errors (no CAP_SETPCAP: not root) are ignored: a
    process without capabilities has nothing to drop."""
    libc = _libc()
    for capability in range(_CAP_LAST_CAP_GUESS + 1):
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)  # EINVAL past the kernel's last capability
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def _add_path(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist grants nothing
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        if not rights:
            return  # a rule on a file may carry only file rights
        attr = _PathBeneathAttr(rights, fd)
        if libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(attr), 0) != 0:
            raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)
