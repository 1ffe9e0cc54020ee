"""The docs point at what exists: README and docs/ links stay inside the repository and resolve, and every
module docs/architecture.md names is there (a move or a rename has to update the map)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
NAMED = re.compile(r"`([\w./-]+\.(?:py|ts|tsx|json|md)|[\w-]+(?:/[\w-]+)*/)`")


def tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return listed.split()


def test_relative_links_stay_in_the_repository_and_resolve() -> None:
    broken = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = (doc.parent / target).resolve()
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert broken == []


def test_every_module_the_architecture_page_names_exists() -> None:
    files = tracked()
    dirs = {str(Path(f).parent) + "/" for f in files}
    dirs |= {"/".join(d.split("/")[:i]) + "/" for d in dirs for i in range(1, d.count("/") + 1)}

    def exists(name: str) -> bool:
        if name.endswith("/"):
            return any(d == name or d.endswith("/" + name) for d in dirs)
        return any(f == name or f.endswith("/" + name) for f in files)

    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = sorted({name for name in NAMED.findall(text) if not exists(name)})
    assert missing == []
