"""The bubblewrap command line for one sandboxed command: a pure function of a ``BwrapPlan``.

Mount order matters (later mounts cover earlier ones):

0. no capabilities, and no user namespace can be created inside (so no mount can be undone);
1. ``/`` read-only; fresh ``/dev``, a fresh ``/proc`` of the new PID namespace (the server's processes are not
   in it), a private size-limited ``/tmp``;
2. homes hidden (``/home``, ``/root``, the real ``$HOME``) and ``/run`` (sockets of system services) replaced
   by empty tmpfs;
3. the project root bound writable;
4. guarded paths inside the project bound read-only over themselves; a guarded path that does not exist yet
   gets an empty read-only tmpfs (a directory) or ``/dev/null`` (a file) in its place, so the command cannot
   create it (bwrap makes the mount point; the caller removes it afterwards if it is still empty);
5. masked paths (Jupyter's config, data and runtime dirs, system secrets, the administrator's list) covered by
   an empty read-only tmpfs or ``/dev/null``;
6. the scratch ``$HOME`` (inside the private ``/tmp``) and, read-only, the real-home paths the
   administrator lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .protect import GuardedPath

SCRATCH_HOME = "/tmp/home"
# Always hidden: other users' and the server's home directories, system service sockets.
HIDDEN_DIRS = ("/home", "/root", "/run")
# Kept from /run: the resolver configuration a command with network needs on systemd machines.
RUN_KEPT = ("/run/systemd/resolve",)
# Where the network allowlist's proxy socket and bridge appear inside the sandbox (under the hidden /run).
PROXY_DIR = "/run/hdsp-agent-proxy"


@dataclass(frozen=True)
class BwrapPlan:
    root: str
    cwd: str
    command: str
    env: Mapping[str, str]
    network: bool = False
    real_home: str | None = None
    guarded: tuple[GuardedPath, ...] = ()
    masked: tuple[GuardedPath, ...] = ()
    # (real path, path inside the scratch home) pairs, shown read-only.
    home_paths: tuple[tuple[str, str], ...] = ()
    tmpfs_bytes: int = 512 * 1024 * 1024
    # ``--unshare-user --disable-userns``: no user namespace can be created inside (where bwrap supports it).
    disable_userns: bool = True
    bwrap: str = "bwrap"
    shell: tuple[str, ...] = field(default=("bash", "-c"))
    # The allowlist proxy's directory (its socket and the bridge script), shown at PROXY_DIR.
    proxy_dir: str | None = None


def bwrap_argv(plan: BwrapPlan) -> list[str]:
    """The full argv (``bwrap … bash -c COMMAND``) for ``plan``."""
    # --cap-drop ALL: run by root, bwrap would otherwise leave the command every capability in its namespaces,
    # enough to unmount the read-only binds over protected paths.
    argv = [plan.bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
    if plan.disable_userns:
        argv += ["--unshare-user", "--disable-userns"]
    if plan.network:
        argv.append("--share-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--size", str(plan.tmpfs_bytes), "--tmpfs", "/tmp"]
    hidden = list(HIDDEN_DIRS)
    if plan.real_home and not any(_beneath(plan.real_home, d) for d in hidden) and plan.real_home != "/":
        hidden.append(plan.real_home)
    for directory in hidden:
        argv += ["--size", str(plan.tmpfs_bytes), "--tmpfs", directory]
    for kept in RUN_KEPT:
        argv += ["--ro-bind-try", kept, kept]
    if plan.proxy_dir is not None:
        argv += ["--bind", plan.proxy_dir, PROXY_DIR]
    argv += ["--bind", plan.root, plan.root]
    covered = [d for d in hidden if not _beneath(plan.root, d)]
    # Masked after guarded: a path that is both (``.ssh``, an existing ``.envrc``) ends up hidden.
    covers = [(item, item.exists) for item in plan.guarded] + [(item, False) for item in plan.masked]
    for item, keep in covers:
        if any(_beneath(item.path, d) for d in covered):
            continue  # already hidden by a tmpfs (whose mounts would also be read-only now)
        argv += _cover(item, keep=keep)
        if item.is_dir and not keep:
            covered.append(item.path)
    argv += ["--dir", SCRATCH_HOME]
    for real, inside in plan.home_paths:
        argv += ["--ro-bind-try", real, inside]
    argv += ["--chdir", plan.cwd, "--clearenv"]
    for name, value in sorted(plan.env.items()):
        argv += ["--setenv", name, value]
    return [*argv, *plan.shell, plan.command]


def _cover(item: GuardedPath, *, keep: bool) -> list[str]:
    if keep:  # what is there stays visible, read-only
        return ["--ro-bind", item.path, item.path]
    if item.is_dir:
        return ["--perms", "0555", "--tmpfs", item.path, "--remount-ro", item.path]
    return ["--ro-bind", "/dev/null", item.path]


def _beneath(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")
