"""The OS sandbox (layer 2 of the permissions design): what runs without asking runs confined.

- ``status``: the layer in force, run modes, the administrator's settings;
- ``detect``: which layer works here (bubblewrap, else Landlock, else none);
- ``runner``: a command → the process that runs it sandboxed (``Sandbox.prepare``);
- ``bwrap`` / ``landlock_rules``: the pure builders of the bubblewrap argv and the Landlock allowlist;
- ``protect``: guarded and masked paths; ``environment``: the allowlisted environment;
- ``supervisor`` (a script) and ``landlock`` (raw syscalls): what runs in the child, standard library only;
- ``overlay`` (run by the supervisor) and ``overlay_setup`` (scratch dirs, probe): the overlay a sandboxed
  command writes into, whose changes ``tools/builtin/shell_changes.py`` applies afterwards;
- ``network_proxy`` (the allowlist proxy the supervisor serves) and ``addresses`` (the address classes it
  shares with the web tools' URL guard): standard library only too.
"""

from __future__ import annotations

from .runner import PreparedCommand, Sandbox, SandboxUnavailable, sandbox_from_config, settings_from_config
from .status import RUN_MODES, Layer, RunMode, SandboxLimits, SandboxSettings, SandboxStatus

__all__ = [
    "RUN_MODES",
    "Layer",
    "PreparedCommand",
    "RunMode",
    "Sandbox",
    "SandboxLimits",
    "SandboxSettings",
    "SandboxStatus",
    "SandboxUnavailable",
    "sandbox_from_config",
    "settings_from_config",
]
