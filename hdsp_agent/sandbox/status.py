"""What the sandbox is and how a command runs: the layer in force, the run modes, the administrator's
settings.

Plain data shared by detection, the policy, the terminal tool, the CLI and ``GET /hdsp-agent/info``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..user_text import texts_for

Layer = Literal["bubblewrap", "landlock", "none"]
LayerChoice = Literal["auto", "bubblewrap", "landlock", "none"]
LAYER_CHOICES: tuple[LayerChoice, ...] = ("auto", "bubblewrap", "landlock", "none")

# How a shell command runs: in the sandbox; in the sandbox with the network; outside it (only after approval).
RunMode = Literal["sandboxed", "network", "unsandboxed"]
RUN_MODES: tuple[RunMode, ...] = ("sandboxed", "network", "unsandboxed")


@dataclass(frozen=True)
class SandboxStatus:
    """The layer that confines commands, and why it is that one (shown in the sidebar and by the CLI)."""

    layer: Layer
    reason: str
    required: bool = False

    @property
    def active(self) -> bool:
        return self.layer != "none"

    def public(self) -> dict[str, object]:
        """The wire form (``GET /hdsp-agent/info`` → ``sandbox``)."""
        return {
            "layer": self.layer,
            "active": self.active,
            "reason": self.reason,
            "required": self.required,
            "texts": texts_for(self.reason),
        }


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits for one sandboxed command and everything it starts."""

    # More processes than this at once and the whole command is stopped (a watchdog: RLIMIT_NPROC does not
    # bind uid 0, and CI runs as root).
    max_processes: int = 256
    # RLIMIT_FSIZE: a write past this size fails with SIGXFSZ / EFBIG.
    max_file_bytes: int = 1024 * 1024 * 1024
    # RLIMIT_CPU per process, in CPU seconds (wall time is the tool's timeout).
    cpu_seconds: int = 3600
    # Size of the private /tmp and scratch home (tmpfs) under bubblewrap.
    tmpfs_bytes: int = 512 * 1024 * 1024


@dataclass(frozen=True)
class SandboxSettings:
    """The administrator's choices (``HdspAgentApp.sandbox*`` traits)."""

    layer: LayerChoice = "auto"
    required: bool = False
    # Paths a sandboxed command may read but never write (inside the project they are bound read-only).
    read_only_paths: tuple[str, ...] = ()
    # Paths a sandboxed command cannot see at all (an empty directory or file stands in their place).
    masked_paths: tuple[str, ...] = ()
    # Paths of the real home shown read-only in the scratch home (e.g. ``~/.gitconfig``).
    home_paths: tuple[str, ...] = ()
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    # Hosts a command approved to run with network may reach (``pypi.org``, ``*.pythonhosted.org``), through
    # the allowlist proxy (``network_proxy.py``); None: the host's whole network.
    network_allowlist: tuple[str, ...] | None = None
