"""Turning a shell command into the process that runs it sandboxed: argv, environment, and what to clean up.

``Sandbox`` is built once from the administrator's settings and shared by the policy (which needs its status),
the terminal tool and other tools that start programs. ``prepare`` does the filesystem look-ups for one
command; the argv itself comes from the pure builders in ``bwrap.py`` and ``landlock_rules.py``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..user_text import user_text
from .bwrap import PROXY_DIR, SCRATCH_HOME, BwrapPlan, bwrap_argv
from .detect import bubblewrap_disables_userns, detect
from .environment import sandbox_environment
from .landlock_rules import landlock_rules
from .overlay_setup import OverlayDirs, make_overlay_dirs, overlay_works, scratch_base
from .protect import GuardedPath, masked_paths, protected_paths
from .secret_files import SecretListingFailed, secret_files
from .status import RunMode, SandboxLimits, SandboxSettings, SandboxStatus

SUPERVISOR = Path(__file__).with_name("supervisor.py")
BRIDGE = Path(__file__).with_name("proxy_bridge.py")
# The port the bridge offers the allowlist proxy on, inside the sandbox's own network namespace.
PROXY_PORT = 3128
# Where a Python for the bridge may live: the sandbox hides the homes, where a venv's interpreter often is.
_SYSTEM_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3")


class SandboxUnavailable(Exception):
    """A command was to run sandboxed and no sandbox layer works here."""


@dataclass
class PreparedCommand:
    """What to start: ``argv`` in ``cwd`` with exactly ``env``; call ``cleanup`` once it has ended."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    layer: str
    _created: list[GuardedPath] = field(default_factory=list)
    _scratch: str | None = None
    # The overlay the command writes into (None: it writes the project directly), and why there is none.
    overlay: OverlayDirs | None = None
    no_overlay_reason: str | None = None

    @property
    def mount_points(self) -> list[str]:
        """The guarded paths bubblewrap had to create to mount over (with an overlay, in its upper dir)."""
        return [item.path for item in self._created]

    @property
    def overlay_failed(self) -> str | None:
        """Why the supervisor could not mount the overlay (the command then did not run), or None."""
        if self.overlay is None:
            return None
        try:
            with open(os.path.join(self.overlay.scratch, "failed")) as failed:
                return failed.read() or "unknown error"
        except OSError:
            return None

    # The bounds it runs under (to say which one a command hit); None: unsandboxed.
    limits: SandboxLimits | None = None

    def cleanup(self) -> None:
        """Remove the mount points bwrap had to create for guarded paths (when still empty) and the
        scratch dirs (the overlay's too: its changes must have been applied or dropped by now)."""
        if self.overlay is not None:
            self.overlay.remove()
            self.overlay = None
        for item in self._created:
            path = Path(item.path)
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()  # fails, harmlessly, when something is inside
                elif path.is_file() and path.stat().st_size == 0:
                    path.unlink()
        self._created = []
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


class Sandbox:
    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = settings or SandboxSettings()

    @functools.cached_property
    def status(self) -> SandboxStatus:
        return detect(self.settings.layer, self.settings.required)

    def prepare(
        self,
        command: str,
        cwd: Path,
        root: Path,
        mode: RunMode,
        base_env: Mapping[str, str],
        extra_env: Mapping[str, str] | None = None,
        *,
        overlay: bool = False,
        mask_secrets: bool = True,
    ) -> PreparedCommand:
        """``command`` (for ``bash -c``) ready to start in ``mode`` ("sandboxed" or "network"): the
        allowlisted part of ``base_env`` plus ``extra_env`` (the caller's own settings, never secrets).
        ``overlay``: the command writes into an overlay of the root (bubblewrap layer, where overlays work;
        ``PreparedCommand.overlay``) whose changes the caller applies afterwards.

        With ``mask_secrets`` (what runs without the user's approval of that very call) the project's secret
        files are unreadable (``secret_files.py``); without it (the user approved this command, or git
        computing a diff whose secret lines the tool hides) they are as on disk."""
        status = self.status
        if not status.active:
            raise SandboxUnavailable(status.reason)
        root = root.resolve()
        guarded = protected_paths(root, self.settings.read_only_paths)
        masked = masked_paths(root, self.settings.masked_paths)
        if mask_secrets:
            try:
                masked += secret_files(root)
            except SecretListingFailed as error:
                raise SandboxUnavailable(str(error)) from None
        limits = self.settings.limits
        spec: dict[str, object] = {
            "cwd": str(cwd),
            "limits": {
                "max_processes": limits.max_processes,
                "max_file_bytes": limits.max_file_bytes,
                "cpu_seconds": limits.cpu_seconds,
            },
            "landlock": None,
        }
        scratch: str | None = None
        created: list[GuardedPath] = []
        allowlist = self.settings.network_allowlist
        if mode == "network" and allowlist is not None and status.layer != "bubblewrap":
            raise SandboxUnavailable(
                user_text(
                    "the administrator's network allowlist needs bubblewrap (the %1 layer cannot filter by "
                    "host); this command would need the network",
                    status.layer,
                )
            )
        dirs: OverlayDirs | None = None
        no_overlay: str | None = None
        if status.layer == "bubblewrap":
            env = {**sandbox_environment(base_env, root, SCRATCH_HOME, "/tmp"), **(extra_env or {})}
            shell: tuple[str, ...] = ("bash", "-c")
            proxy_dir: str | None = None
            if mode == "network" and allowlist is not None:
                scratch = proxy_dir = tempfile.mkdtemp(prefix="hdsp-proxy-")
                shutil.copy(BRIDGE, os.path.join(proxy_dir, BRIDGE.name))
                spec["proxy"] = {"socket": os.path.join(proxy_dir, "proxy.sock"), "allow": list(allowlist)}
                inside = f"{PROXY_DIR}/{BRIDGE.name}"
                shell = (_bridge_python(), "-I", "-S", inside, f"{PROXY_DIR}/proxy.sock", str(PROXY_PORT))
                shell += ("bash", "-c")
                env.update(_proxy_variables())
            plan = BwrapPlan(
                root=str(root),
                cwd=str(cwd),
                command=command,
                env=env,
                network=mode == "network" and allowlist is None,
                real_home=os.path.realpath(os.path.expanduser("~")),
                guarded=tuple(guarded),
                masked=tuple(masked),
                home_paths=tuple((real, f"{SCRATCH_HOME}/{rel}") for real, rel in self._home_paths()),
                tmpfs_bytes=limits.tmpfs_bytes,
                disable_userns=bubblewrap_disables_userns(),
                bwrap=shutil.which("bwrap") or "bwrap",
                shell=shell,
                proxy_dir=proxy_dir,
            )
            spec["argv"] = bwrap_argv(plan)
            created = [item for item in guarded if not item.exists]
            if overlay:
                dirs, no_overlay = _overlay_for(str(root))
                if dirs is not None:
                    spec["overlay"] = {
                        "root": str(root),
                        "upper": dirs.upper,
                        "work": dirs.work,
                        "failed": os.path.join(dirs.scratch, "failed"),
                    }
        else:
            scratch = tempfile.mkdtemp(prefix="hdsp-sandbox-")
            home, tmp = os.path.join(scratch, "home"), os.path.join(scratch, "tmp")
            os.mkdir(home)
            os.mkdir(tmp)
            env = {**sandbox_environment(base_env, root, home, tmp), **(extra_env or {})}
            extra = []
            for real, rel in self._home_paths():  # shown in the scratch home as links, readable only
                link = Path(home) / rel
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(real)
                extra.append(real)
            rules = landlock_rules(root, (home, tmp), guarded, masked, extra)
            spec["argv"] = ["bash", "-c", command]
            spec["landlock"] = {"rules": rules, "deny_tcp": mode != "network"}
            if overlay:
                no_overlay = "the Landlock layer cannot give the command an overlay"
        argv = [sys.executable, "-I", "-S", str(SUPERVISOR), json.dumps(spec)]
        prepared = PreparedCommand(argv, env, root, status.layer, created, scratch, limits=limits)
        prepared.overlay, prepared.no_overlay_reason = dirs, no_overlay
        return prepared

    def _home_paths(self) -> list[tuple[str, str]]:
        """(real path, path relative to the home) for each existing ``home_paths`` entry inside the home."""
        home = Path(os.path.expanduser("~")).resolve()
        pairs: list[tuple[str, str]] = []
        for text in self.settings.home_paths:
            real = Path(os.path.expanduser(text)).resolve()
            if real == home or home not in real.parents or not real.exists():
                continue
            pairs.append((str(real), str(real.relative_to(home))))
        return pairs


def _overlay_for(root: str) -> tuple[OverlayDirs | None, str | None]:
    """Scratch dirs for an overlay of ``root``, or None and why an overlay cannot be used here."""
    base = scratch_base(root)
    if base is None:
        return None, "no writable place for the overlay's scratch directory"
    broken = overlay_works(root, base)
    if broken is not None:
        return None, broken
    return make_overlay_dirs(base), None


def _bridge_python() -> str:
    """An interpreter the sandbox can see for the proxy bridge: the server's own unless it lives in a home."""
    hidden = ("/home/", "/root/", os.path.realpath(os.path.expanduser("~")) + "/")
    for candidate in (os.path.realpath(sys.executable), *_SYSTEM_PYTHONS):
        if os.access(candidate, os.X_OK) and not candidate.startswith(hidden):
            return candidate
    raise SandboxUnavailable(
        user_text(
            "the network allowlist's bridge needs a Python outside the home directories (install python3)"
        )
    )


def _proxy_variables() -> dict[str, str]:
    url = f"http://127.0.0.1:{PROXY_PORT}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "npm_config_proxy")
    return {**dict.fromkeys(names, url), "npm_config_https_proxy": url, "NO_PROXY": "", "no_proxy": ""}


def settings_from_config(config: object) -> SandboxSettings:
    """The administrator's ``HdspAgentApp.sandbox*`` traits (defaults for what a config object lacks)."""
    defaults = SandboxSettings()
    limits = SandboxLimits(
        max_processes=int(getattr(config, "sandbox_max_processes", defaults.limits.max_processes)),
        max_file_bytes=int(getattr(config, "sandbox_max_file_bytes", defaults.limits.max_file_bytes)),
        cpu_seconds=int(getattr(config, "sandbox_cpu_seconds", defaults.limits.cpu_seconds)),
    )
    return SandboxSettings(
        layer=getattr(config, "sandbox", defaults.layer),
        required=bool(getattr(config, "sandbox_required", False)),
        read_only_paths=tuple(getattr(config, "sandbox_read_only_paths", ())),
        masked_paths=tuple(getattr(config, "sandbox_masked_paths", ())),
        home_paths=tuple(getattr(config, "sandbox_home_paths", ())),
        limits=limits,
        network_allowlist=_allowlist(getattr(config, "sandbox_network_allowlist", None)),
    )


def _allowlist(value: object) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(host) for host in value)  # type: ignore[attr-defined]


def sandbox_from_config(config: object) -> Sandbox:
    return Sandbox(settings_from_config(config))
