"""The docs point at what exists: README and docs/ links stay inside the repository and resolve, and every
module docs/architecture.md names is there (a move or a rename has to update the map)."""

from __future__ import annotations

import ast
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


# The "Where is X" map: each row names a module and what in it does the job; a rename or a move that
# leaves the map behind fails here.
PACKAGE = ROOT / "hdsp_agent"
TICKED = re.compile(r"`([^`]+)`")
MODULE = re.compile(r"^[\w./-]+\.(?:py|ts|tsx)$")
IDENTIFIER = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?$")


def _section(title: str) -> str:
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _rows(title: str) -> list[list[str]]:
    rows = []
    for line in _section(title).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and not set(cells[0]) <= {"-"} and len(cells) >= 2:
            rows.append(cells)
    return rows[1:]  # the header


def _module_file(name: str) -> Path:
    return ROOT / name if name.startswith("src/") else PACKAGE / name


def _python_defines(path: Path, name: str) -> bool:
    """``name`` (``f``, ``CONSTANT``, ``Class`` or ``Class.member``) is defined at the top of ``path``."""
    tree = ast.parse(path.read_text())

    def names(body: list[ast.stmt]) -> dict[str, ast.stmt]:
        found: dict[str, ast.stmt] = {}
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found[node.name] = node
            elif isinstance(node, ast.Assign):
                found.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found[node.target.id] = node
        return found

    outer, _, member = name.partition(".")
    top = names(tree.body).get(outer)
    if top is None or not member:
        return top is not None
    return isinstance(top, ast.ClassDef) and member in names(top.body)


def _typescript_defines(path: Path, name: str) -> bool:
    text = path.read_text()
    outer, _, member = name.partition(".")
    declared = re.search(rf"^(?:export )?(?:async )?(?:function|class|const|interface) {outer}\b", text, re.M)
    if declared is None or not member:
        return declared is not None
    body = text[declared.start() :]
    return re.search(rf"^  (?:(?:private|public|static|async|get) )*{member}\(", body, re.M) is not None


def _defines(path: Path, name: str) -> bool:
    return _python_defines(path, name) if path.suffix == ".py" else _typescript_defines(path, name)


def test_the_where_is_table_names_modules_that_exist_and_what_is_in_them() -> None:
    rows = _rows("Where is X")
    assert len(rows) >= 15
    problems = []
    for question, module, names in (row[:3] for row in rows):
        current = _module_file(module.strip("`"))
        if not current.is_file():
            problems.append(f"{question}: no module {module}")
            continue
        # Names follow the module they belong to; a path inside the names cell switches to that module.
        for token in TICKED.findall(names):
            if MODULE.match(token):
                current = _module_file(token)
                if not current.is_file():
                    problems.append(f"{question}: no module {token}")
                    break
            elif IDENTIFIER.match(token) and not _defines(current, token):
                problems.append(f"{question}: {token} is not defined in {current.relative_to(ROOT)}")
    assert problems == []


def test_every_folder_and_top_level_module_of_the_package_is_named() -> None:
    files = [Path(f) for f in tracked() if f.startswith("hdsp_agent/")]
    folders = {
        str(path.parent.relative_to("hdsp_agent")) + "/"
        for path in files
        if path.suffix == ".py" and path.parent != Path("hdsp_agent")
    }
    folders.add("locale/")
    top_modules = {path.name for path in files if path.parent == Path("hdsp_agent") and path.suffix == ".py"}
    named = {row[0].strip("`") for row in _rows("Module folders")}
    assert sorted((folders | top_modules) - named) == []
    assert sorted(named - folders - top_modules) == []
