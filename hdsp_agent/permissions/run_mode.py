"""How a shell command will run: the run mode the policy attaches to its decision.

- allowed without asking → "sandboxed" (the sandbox is what makes that safe), whatever allowed it (the
  analysis, an allow rule); only a session grant — the user approved this very command, in the mode shown —
  keeps the mode of that approval;
- asks → the mode the approval card shows, suggested from what the command is: package installs (they write
  into environments and caches outside the project) → "unsandboxed"; programs that need the network (curl,
  ssh, ``git fetch/pull/push/clone``, ``npx``, package managers' downloads) → "network"; everything else →
  "sandboxed". With ``sandbox_required`` nothing is "unsandboxed": installs get "network".
- no sandbox available → "unsandboxed", and only inert commands (``shell/inert.py``) skip the question; with
  ``sandbox_required`` every command is denied, with the reason.
"""

from __future__ import annotations

import os
from dataclasses import replace

from ..sandbox.status import RunMode, SandboxStatus
from ..user_text import user_text
from .decision import PolicyDecision
from .shell.analyser import CommandAnalysis
from .shell.tables import NETWORK_COMMANDS, PACKAGE_INSTALL_SUBCOMMANDS, PACKAGE_MANAGERS

GIT_NETWORK_SUBCOMMANDS = frozenset({"fetch", "pull", "push", "clone", "ls-remote", "submodule", "lfs"})
# Package-manager subcommands that download without installing.
DOWNLOAD_SUBCOMMANDS = frozenset({"download", "fetch", "view", "search", "outdated", "audit", "lock"})


def suggested_run_mode(analysis: CommandAnalysis | None) -> RunMode:
    """The mode an approval card proposes for ``analysis`` (see the module docstring)."""
    mode: RunMode = "sandboxed"
    for part in analysis.parts if analysis is not None else ():
        if not part.argv:
            continue
        name = os.path.basename(part.argv[0])
        words = [word for word in part.argv[1:] if not word.startswith("-")]
        subcommand = words[0] if words else ""
        if name == "uv" and subcommand == "pip" and len(words) > 1:
            subcommand = words[1]
        if name in PACKAGE_MANAGERS and subcommand in PACKAGE_INSTALL_SUBCOMMANDS:
            return "unsandboxed"
        if (
            name in NETWORK_COMMANDS
            or name == "npx"
            or (name == "git" and subcommand in GIT_NETWORK_SUBCOMMANDS)
            or (name in PACKAGE_MANAGERS and subcommand in DOWNLOAD_SUBCOMMANDS)
        ):
            mode = "network"
    return mode


def with_run_mode(
    decision: PolicyDecision,
    analysis: CommandAnalysis | None,
    sandbox: SandboxStatus | None,
    *,
    granted: bool,
) -> PolicyDecision:
    """``decision`` for a shell command, with its run mode (and stricter when no sandbox is available).

    ``sandbox`` None: a policy built without knowing the sandbox (unit tests): modes as if one were active.
    """
    if decision.decision == "deny":
        return decision
    suggested = suggested_run_mode(analysis)
    if sandbox is None or sandbox.active:
        if sandbox is not None and sandbox.required and suggested == "unsandboxed":
            suggested = "network"
        if decision.decision == "allow" and not granted:
            return replace(decision, run_mode="sandboxed")
        return replace(decision, run_mode=suggested)
    if sandbox.required:
        reason = user_text(
            "the administrator requires the OS sandbox, and none is available: %1", sandbox.reason
        )
        return PolicyDecision("deny", [reason], None, None)
    if decision.decision == "allow" and not granted and not (analysis is not None and analysis.inert):
        reason = user_text(
            "no OS sandbox is available (%1): only inert commands run without asking", sandbox.reason
        )
        return PolicyDecision("ask", [reason, *decision.reasons], decision.rule, "unsandboxed")
    return replace(decision, run_mode="unsandboxed")
