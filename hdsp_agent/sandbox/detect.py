"""Which sandbox layer works on this machine, found once per process by trying it.

bubblewrap needs the ``bwrap`` binary and user namespaces (or root); both are checked by running a trivial
sandbox, because a container's seccomp profile can block what ``/proc/sys/user/max_user_namespaces`` allows.
Landlock needs Linux >= 5.13 with Landlock enabled: ``landlock_create_ruleset(NULL, 0, VERSION)`` gives its
ABI.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys

from ..user_text import join_texts, user_text
from .landlock import abi_version
from .status import LayerChoice, SandboxStatus

# The smallest sandbox with every namespace the real ones use: it must print "ok".
_TRIAL = ("--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-all", "--die-with-parent")
_TRIAL_SECONDS = 10.0
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; RHEL/Fedora: dnf install bubblewrap)"
)


@functools.lru_cache(maxsize=1)
def bubblewrap_problem() -> str | None:
    """None when bwrap can run a sandbox here, else why not."""
    if not sys.platform.startswith("linux"):
        return user_text("bubblewrap runs only on Linux (this is %1)", sys.platform)
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return user_text("bwrap is not on PATH (%1)", INSTALL_HINT)
    try:
        trial = subprocess.run(
            [bwrap, *_TRIAL, "/bin/sh", "-c", "echo ok"],
            capture_output=True,
            text=True,
            timeout=_TRIAL_SECONDS,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return user_text("bwrap could not be run: %1", error)
    if trial.returncode != 0 or trial.stdout.strip() != "ok":
        detail = (trial.stderr.strip() or f"exit code {trial.returncode}").splitlines()[-1]
        return user_text("bwrap cannot create namespaces here (user namespaces blocked?): %1", detail)
    return None


@functools.lru_cache(maxsize=1)
def bubblewrap_disables_userns() -> bool:
    """Whether ``--unshare-user --disable-userns`` works here (bwrap >= 0.8 with user namespaces); without it
    the command keeps no capabilities either, but could still create a (powerless) user namespace."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    try:
        trial = subprocess.run(
            [
                bwrap,
                *_TRIAL,
                "--unshare-user",
                "--disable-userns",
                "--cap-drop",
                "ALL",
                "/bin/sh",
                "-c",
                "echo ok",
            ],
            capture_output=True,
            text=True,
            timeout=_TRIAL_SECONDS,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return trial.returncode == 0 and trial.stdout.strip() == "ok"


@functools.lru_cache(maxsize=1)
def landlock_abi() -> int:
    return abi_version() if sys.platform.startswith("linux") else 0


def detect(choice: LayerChoice = "auto", required: bool = False) -> SandboxStatus:
    """The layer for ``choice`` ("auto": bubblewrap, else Landlock, else none) and why."""
    if choice == "none":
        return SandboxStatus(
            "none", user_text("the sandbox is turned off (HdspAgentApp.sandbox = 'none')"), required
        )
    bwrap_problem = bubblewrap_problem() if choice in ("auto", "bubblewrap") else None
    if choice in ("auto", "bubblewrap") and bwrap_problem is None:
        return SandboxStatus(
            "bubblewrap", user_text("bubblewrap: namespaces for filesystem, network and processes"), required
        )
    abi = landlock_abi() if choice in ("auto", "landlock") else 0
    if abi >= 1:
        reason = (
            user_text("Landlock ABI %1: filesystem allowlist, TCP blocked", abi)
            if abi >= 4
            else user_text(
                "Landlock ABI %1: filesystem allowlist, network NOT blocked (Landlock ABI < 4)", abi
            )
        )
        if bwrap_problem:
            reason = user_text("%1; bubblewrap unusable: %2", reason, bwrap_problem)
        return SandboxStatus("landlock", reason, required)
    reasons = []
    if bwrap_problem:
        reasons.append(bwrap_problem)
    if choice in ("auto", "landlock"):
        reasons.append(user_text("Landlock is not available (Linux >= 5.13 with Landlock enabled)"))
    return SandboxStatus("none", user_text("no sandbox: %1", join_texts("; ", reasons)), required)
