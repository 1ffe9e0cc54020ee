"""The administrator's settings for everyone: ``hdsp_agent/admin.json`` in a system config dir.

Why a file of its own: Jupyter reads ``jupyter_server_config.*`` from every dir of ``jupyter_config_path()``:
``$JUPYTER_CONFIG_PATH`` first, then the user's dirs (``~/.jupyter`` or ``$JUPYTER_CONFIG_DIR``, and
``~/.local/etc/jupyter``) and ``{sys.prefix}/etc/jupyter`` (which of the two first depends on
``JUPYTER_PREFER_ENV_PATH``), then ``/usr/local/etc/jupyter`` and ``/etc/jupyter`` last. So
``c.HdspAgentApp.deny_rules`` in ``/etc/jupyter`` is only a default a user replaces with ``[]`` in their own
config, and even where the admin's dir comes first a list set there is replaced, not extended, by another.
``admin.json`` is read only from the dirs of ``jupyter_config_path()`` that are not the user's, after the
ordinary config, and applied over it:

- the floor adds up: ``disabled_tools``, ``deny_rules``, ``ask_rules``, ``mcp_denied_servers``,
  ``v1_disabled_tools`` and ``secret_env_names`` are the union of the admin's and the user's lists (a user can
  add to them, never remove from them); so are ``allow_rules`` and ``url_allowlist``, which the admin grants;
- every other setting it names is fixed: the admin's value replaces the user's (``model``, ``base_url``,
  ``api_key_file``, ``sandbox_required``, ``max_steps``, the quotas, ``v1_enabled``, the audit log, ...);
- a fixed part holds whole (``held_settings``). Naming ``model``, ``base_url`` or ``models`` fixes the model:
  the user's own values of those three go back to their defaults, their sidebar's saved model is not used
  (``allow_user_models`` False) and ``/v1`` names no other model (``v1_pass_through_models`` False), unless
  admin.json sets those two itself. Naming ``audit_enabled``, or running under JupyterHub
  (``$JUPYTERHUB_USER`` set), holds the audit: on unless admin.json says ``false``, and the user's
  ``audit_log_path``, ``audit_log_max_bytes`` and ``audit_log_backups`` go back to their defaults unless
  admin.json names them. Without an admin.json and without a hub nothing is held.

Keys are ``HdspAgentApp`` trait names. One this version does not know is reported and skipped, and a file
that is not valid JSON is reported and ignored: a typo must not stop the server.

What it does not do: a user who can run code in their own server (a kernel, a terminal, a Python config file)
can always start a server of their own. The floor binds the agent and every sanctioned way of configuring it
(settings, the user's config files, ``permissions.json``, approvals); hard limits for hostile users belong
outside the user's process (the model gateway's keys and quotas, read-only mounts, the sandbox).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traitlets import TraitError

if TYPE_CHECKING:
    from .config import HdspAgentConfig

ADMIN_FILENAME = "admin.json"
# Lists the user may extend but never shorten.
UNION_TRAITS = frozenset(
    {
        "disabled_tools",
        "deny_rules",
        "ask_rules",
        "allow_rules",
        "url_allowlist",
        "mcp_denied_servers",
        "v1_disabled_tools",
        "secret_env_names",
    }
)


# Naming one of these fixes the model: the user's values of the others are dropped too (an admin model with
# the user's base_url would send the admin's model name, and the user's conversations, to the user's server).
MODEL_TRAITS = ("model", "base_url", "models")
# Held with the model unless admin.json names them: the sidebar's own model, and /v1 naming any model.
MODEL_IMPLIED = {"allow_user_models": False, "v1_pass_through_models": False}
AUDIT_TRAITS = ("audit_log_path", "audit_log_max_bytes", "audit_log_backups")


def under_hub() -> bool:
    """Spawned by JupyterHub: the hub sets ``JUPYTERHUB_USER`` for every server it starts."""
    return bool(os.environ.get("JUPYTERHUB_USER"))


def held_settings(admin: dict[str, Any], hub: bool) -> dict[str, Any]:
    """What the floor holds beyond the settings admin.json names: ``{trait: value}``, where the value
    ``DEFAULT`` means the trait's own default (the user's value dropped)."""
    held: dict[str, Any] = {}
    if any(name in admin for name in MODEL_TRAITS):
        held.update({name: DEFAULT for name in MODEL_TRAITS if name not in admin})
        held.update({name: value for name, value in MODEL_IMPLIED.items() if name not in admin})
    if "audit_enabled" in admin or hub:
        if "audit_enabled" not in admin:
            held["audit_enabled"] = True
        held.update({name: DEFAULT for name in AUDIT_TRAITS if name not in admin})
    return held


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()


@dataclass
class AdminSettings:
    """What the admin files said, merged (the first dir of the search path wins on a fixed setting)."""

    values: dict[str, Any] = field(default_factory=dict)
    sources: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def user_config_dirs() -> set[Path]:
    """The user's config dirs: ``$JUPYTER_CONFIG_DIR`` (else ``~/.jupyter``) and ``~/.local/etc/jupyter``."""
    import site

    from jupyter_core.paths import jupyter_config_dir

    dirs = {Path(jupyter_config_dir())}
    if site.ENABLE_USER_SITE and site.getuserbase():
        dirs.add(Path(site.getuserbase()) / "etc" / "jupyter")
    return {directory.expanduser().resolve() for directory in dirs}


def admin_config_dirs() -> list[Path]:
    """The dirs an administrator controls: ``jupyter_config_path()`` without the user's own."""
    from jupyter_core.paths import jupyter_config_path

    users = user_config_dirs()
    return [
        Path(directory)
        for directory in jupyter_config_path()
        if Path(directory).expanduser().resolve() not in users
    ]


def load_admin_settings(dirs: list[Path] | None = None) -> AdminSettings:
    settings = AdminSettings()
    # Lowest precedence first, so a dir earlier in the search path overrides a later one (as Jupyter does).
    for directory in reversed(dirs if dirs is not None else admin_config_dirs()):
        path = directory / "hdsp_agent" / ADMIN_FILENAME
        if not path.is_file():
            continue
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            settings.problems.append(f"{path}: not read ({error}); its settings are not applied")
            continue
        if not isinstance(loaded, dict):
            settings.problems.append(f"{path}: must hold a JSON object of HdspAgentApp settings")
            continue
        settings.sources.append(path)
        if os.access(path, os.W_OK) and os.geteuid() != 0:
            # E.g. a conda env the user owns ({sys.prefix}/etc/jupyter in the docker-stacks images).
            settings.problems.append(f"{path}: the user running this server can edit it (mount it read-only)")
        for name, value in loaded.items():
            if name in UNION_TRAITS and isinstance(value, list):
                earlier = settings.values.get(name, [])
                settings.values[name] = earlier + [item for item in value if item not in earlier]
            else:
                settings.values[name] = value
    return settings


def apply_admin_settings(
    target: HdspAgentConfig,
    settings: AdminSettings,
    log: logging.Logger | None = None,
    *,
    hub: bool | None = None,
) -> list[str]:
    """Lay the admin's settings over ``target``'s traits, and hold what they imply (``held_settings``;
    ``hub``: whether JupyterHub spawned this server, default ``under_hub()``). Records the names it set in
    ``target.admin_fixed``; returns the problems (also logged as warnings)."""
    problems = list(settings.problems)
    held = held_settings(settings.values, under_hub() if hub is None else hub)
    fixed: set[str] = set()
    for name, value in held.items():
        if target.has_trait(name):
            setattr(target, name, target.trait_defaults(name) if value is DEFAULT else value)
            fixed.add(name)
    for name, value in settings.values.items():
        if not target.has_trait(name):
            problems.append(f"admin setting {name!r} is not an HdspAgentApp setting of this version: skipped")
            continue
        if name in UNION_TRAITS and isinstance(value, list):
            current = list(getattr(target, name))
            value = current + [item for item in value if item not in current]
        try:
            setattr(target, name, value)
            fixed.add(name)
        except TraitError as error:
            problems.append(f"admin setting {name!r}: {error}")
    # Not a trait: who may change what (the CLI's --model, the sidebar's save) asks it.
    target.admin_fixed = frozenset(fixed)
    for problem in problems:
        (log or logging.getLogger("hdsp_agent")).warning("hdsp-agent admin config: %s", problem)
    return problems
