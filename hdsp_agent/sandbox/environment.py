"""The environment a sandboxed command gets: built from an allowlist, never copied from the server's.

The server's environment holds model keys and the Jupyter token; a sandboxed command sees only the names
below, a scratch ``$HOME``, and the project's virtualenv first on ``PATH`` when there is one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..permissions.runs_later import PROJECT_VENV_NAMES

ALLOWED_NAMES = frozenset({"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME"})
ALLOWED_PREFIXES = ("LC_",)
# Keep commands from waiting on a pager or a credential prompt, and from colouring output that is stripped.
NON_INTERACTIVE = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "TERM": "dumb",
    "NO_COLOR": "1",
    # No __pycache__ in the project: compiled modules there run in place of their sources later, outside the
    # sandbox, so writing one asks (permissions/protected.py); Python run here must not trip that each time.
    "PYTHONDONTWRITEBYTECODE": "1",
}
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# The project's virtualenv: the write protection (``permissions/runs_later.py``) guards these names.
VENV_NAMES = PROJECT_VENV_NAMES


def sandbox_environment(base: Mapping[str, str], root: Path, home: str, tmp: str) -> dict[str, str]:
    """The allowlisted part of ``base``, with ``HOME``/``TMPDIR`` set and the project's venv activated."""
    env = {
        name: value
        for name, value in base.items()
        if name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)
    }
    env.update(NON_INTERACTIVE)
    env["HOME"] = home
    env["TMPDIR"] = tmp
    path = env.get("PATH") or DEFAULT_PATH
    venv = project_venv(root)
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        path = f"{venv / 'bin'}:{path}"
    env["PATH"] = path
    return env


def project_venv(root: Path) -> Path | None:
    """``<root>/.venv`` or ``<root>/venv`` when it is a virtualenv (has ``bin/``)."""
    for name in VENV_NAMES:
        if (root / name / "bin").is_dir():
            return root / name
    return None
