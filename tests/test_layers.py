"""The layers of docs/architecture.md, as imports: web → agent → tools/permissions → jupyter/mcp.

HTTP (tornado, jupyter_server's handlers) only in ``hdsp_agent/web/`` (and in ``hdsp_agent/hub/``, the model
gateway: a process of its own the hub runs, which uses none of the agent); nothing below the web layer imports
it; the tools and the permission rules never reach up into the agent loop or the web. The frontend's twin of
the first rule is src/__tests__/layers.spec.ts (only api.ts calls the server's routes).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hdsp_agent"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "labextension" not in p.parts)


def imported(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    package = ".".join(("hdsp_agent", *path.relative_to(PACKAGE).with_suffix("").parts[:-1]))
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                names.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                names.add(node.module)
    return names


def layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def test_only_the_web_package_speaks_http() -> None:
    http = ("tornado", "jupyter_server.base")
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(name for name in imported(path) if name.startswith(http))
        for path in MODULES
        if layer(path) not in ("web", "hub")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        ("tools", "hdsp_agent.agent"),
        ("tools", "hdsp_agent.web"),
        ("permissions", "hdsp_agent.agent"),
        ("permissions", "hdsp_agent.web"),
        ("agent", "hdsp_agent.web"),
        ("mcp", "hdsp_agent.web"),
        ("documents", "hdsp_agent.agent"),
        ("documents", "hdsp_agent.web"),
        ("documents", "hdsp_agent.tools.jupyter"),
        ("documents", "hdsp_agent.tools.builtin"),
        ("documents", "hdsp_agent.mcp"),
        # The gateway holds the key and the quotas for everyone: it runs no agent and serves no sidebar.
        ("hub", "hdsp_agent.agent"),
        ("hub", "hdsp_agent.web"),
        ("hub", "hdsp_agent.tools"),
    ],
)
def test_a_lower_layer_does_not_import_a_higher_one(lower: str, upper: str) -> None:
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in MODULES
        if layer(path) == lower and any(name.startswith(upper) for name in imported(path))
    ]
    assert offenders == []
