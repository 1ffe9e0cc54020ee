"""``view_repo_map`` and ``view_subdirectory``: the project's files with the top-level definitions in each
(Continue's names and parameters).

Python files and notebooks are read with ``ast`` (classes with their methods, functions with signatures,
top-level assignments); other languages get a best-effort outline from per-line patterns.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import Field

from ....permissions.paths import (
    display_path,
    is_inside,
    is_sensitive,
    read_action,
    resolve_in_root,
    secret_filter,
)
from ....tools.facts import ToolFacts, ToolWords
from ....user_text import user_template, user_text
from ...base import PermissionAction, Tool, ToolArgs, ToolContext, ToolError
from .ignore import GitignoreWalker

MAX_MAP_CHARS = 20_000
MAX_PARSE_BYTES = 512 * 1024
MAX_SIGNATURE_CHARS = 120
MAX_DEFINITIONS_PER_FILE = 60
_PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
_OUTLINED_SUFFIXES = frozenset(
    {
        ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".kts", ".scala", ".rb",
        ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".r", ".jl", ".lua", ".sh", ".bash",
    }
)  # fmt: skip
# Unindented lines that start a definition in most languages.
_DEFINITION_LINE = re.compile(
    r"^(?:export\s+(?:default\s+)?|pub(?:\([\w:]+\))?\s+|public\s+|private\s+|protected\s+|internal\s+|static\s+|"
    r"abstract\s+|final\s+|async\s+|unsafe\s+|extern\s+|local\s+|declare\s+)*"
    r"(?:def|class|function\*?|fn|func|interface|struct|enum|trait|impl|type|module|object|record|const|let|var|"
    r"namespace|macro)\b"
)
# Slightly indented lines that start a method: `def`/`fn`/`func`/`function`, or JS/TS/Java-style
# `name(args) {` / `protected name(args): T {` (control statements excluded).
_MEMBER_LINE = re.compile(
    r"^(?:pub(?:\([\w:]+\))?\s+|public\s+|private\s+|protected\s+|static\s+|async\s+)*(?:def|fn|func|function)\b"
    r"|^(?!(?:if|for|while|switch|catch|return|else|do|try)\b)(?:(?:public|private|protected|static|async|"
    r"readonly|override|get|set)\s+)*[A-Za-z_$][\w$]*\s*\([^;]*\)\s*(?::\s*[^;{=]+)?\{"
)
_R_FUNCTION = re.compile(r"^[A-Za-z_.][\w.]*\s*(?:<-|=)\s*function\b")
_EXPORT_LIST = re.compile(r"^export\s*\{")


def python_outline(source: str) -> list[str]:
    """Classes (with methods), functions (with signatures) and assigned names at the top level of
    ``source``."""
    tree = ast.parse(source)
    lines: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            bases = ", ".join(ast.unparse(base) for base in node.bases)
            lines.append(_clip(f"class {node.name}" + (f"({bases})" if bases else "")))
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines.append("  " + _signature(member))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines.append(_signature(node))
        elif isinstance(node, ast.Assign):
            lines.append(_clip(" = ".join(ast.unparse(target) for target in node.targets)))
        elif isinstance(node, ast.AnnAssign):
            lines.append(_clip(f"{ast.unparse(node.target)}: {ast.unparse(node.annotation)}"))
    return lines


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return _clip(f"{prefix} {node.name}({ast.unparse(node.args)}){returns}")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SIGNATURE_CHARS else text[: MAX_SIGNATURE_CHARS - 3] + "..."


def notebook_outline(raw: str) -> list[str]:
    """The Python outline of a notebook's code cells (cells that do not parse, e.g. with magics, are
    skipped)."""
    notebook = json.loads(raw)
    lines: list[str] = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        try:
            lines += python_outline(source)
        except (SyntaxError, ValueError):
            continue
    return lines


def pattern_outline(source: str) -> list[str]:
    """Best effort for other languages: unindented lines that open a definition, and slightly indented
    methods,
    each cut where its body starts."""
    lines: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent == 0 and (
            _DEFINITION_LINE.match(stripped) or _R_FUNCTION.match(stripped) or _EXPORT_LIST.match(stripped)
        ):
            lines.append(_clip(_head_of(stripped)))
        elif 0 < indent <= 4 and _MEMBER_LINE.match(stripped):
            lines.append("  " + _clip(_head_of(stripped)))
    return lines


def _head_of(line: str) -> str:
    return line if line.startswith("export {") else line.split("{", 1)[0].rstrip(" =:")


def outline(path: Path) -> list[str]:
    """The definitions in one file, or [] when it is not source code we can read."""
    suffix = path.suffix.lower()
    if suffix not in _PYTHON_SUFFIXES and suffix not in _OUTLINED_SUFFIXES and suffix != ".ipynb":
        return []
    try:
        if path.stat().st_size > MAX_PARSE_BYTES:
            return ["(file too large to outline)"]
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    try:
        if suffix in _PYTHON_SUFFIXES:
            return python_outline(source)
        if suffix == ".ipynb":
            return notebook_outline(source)
    except (SyntaxError, ValueError):
        return ["(could not be parsed)"]
    return pattern_outline(source)


def _files(directory: Path, root: Path) -> Iterator[Path]:
    base = (
        root if is_inside(directory, root) else directory
    )  # a directory outside the root (allowed by policy)
    is_secret = secret_filter(base)
    for path, is_dir in GitignoreWalker(directory, base).walk():
        relative = path.relative_to(base)
        if is_dir or ".hdsp" in relative.parts:  # our own cache and rules
            continue
        if is_secret(relative.as_posix()):  # a secret's outline is still its contents
            continue
        if path.is_symlink() and _links_away(path, base):
            continue
        yield path


def _links_away(link: Path, base: Path) -> bool:
    """A link to a file outside ``base`` or to a secret: outlining it would read what the policy guards."""
    try:
        target = link.resolve()
    except (OSError, RuntimeError):
        return True
    return not is_inside(target, base.resolve()) or is_sensitive(target)


def build_map(directory: Path, root: Path, budget: int = MAX_MAP_CHARS) -> str:
    """Each file under ``directory`` (relative to ``root``) followed by its indented outline, within
    ``budget``."""
    blocks: list[str] = []
    used = 0
    files = _files(directory, root)
    for path in files:
        definitions = outline(path)
        shown = definitions[:MAX_DEFINITIONS_PER_FILE]
        if len(definitions) > len(shown):
            shown.append(f"[... {len(definitions) - len(shown)} more definitions]")
        block = "\n".join([display_path(path, root), *("  " + line for line in shown)])
        if used + len(block) + 1 > budget:
            remaining = 1 + sum(1 for _ in files)
            blocks.append(
                f"[... {remaining:,} more files not shown; use view_subdirectory on a subdirectory to see "
                "them]"
            )
            break
        blocks.append(block)
        used += len(block) + 1
    return (
        "\n".join(blocks) if blocks else f"{display_path(directory, root)} has no files (outside .gitignore)."
    )


class ViewRepoMapArgs(ToolArgs):
    pass


class ViewRepoMapTool(Tool[ViewRepoMapArgs]):
    name = "view_repo_map"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full"}),
        words=ToolWords(
            question=user_template("Look at an outline of the project's code?"),
            statement=user_template("Look at an outline of the project's code"),
        ),
    )
    description = "Map the whole project: every file with its classes, functions and signatures."
    args_model = ViewRepoMapArgs
    read_only = True
    paging_hint = "use view_subdirectory on a subdirectory"

    async def run(self, args: ViewRepoMapArgs, ctx: ToolContext) -> str:
        root = ctx.root_dir.resolve()
        return await asyncio.to_thread(build_map, root, root)


class ViewSubdirectoryArgs(ToolArgs):
    directory_path: str = Field(description="Directory relative to the project root.")


class ViewSubdirectoryTool(Tool[ViewSubdirectoryArgs]):
    name = "view_subdirectory"
    facts = ToolFacts(
        level="allow",
        profiles=frozenset({"full"}),
        words=ToolWords(
            question=user_template("List a folder?"),
            statement=user_template("List a folder"),
            question_with_subject=user_template("List the folder %1?"),
            statement_with_subject=user_template("List %1"),
        ),
    )
    description = "Map one directory: its files with their classes, functions and signatures."
    args_model = ViewSubdirectoryArgs
    read_only = True
    paging_hint = "map a smaller subdirectory"

    def permission(self, args: ViewSubdirectoryArgs, ctx: ToolContext) -> PermissionAction | None:
        return read_action(ctx.root_dir, args.directory_path)

    async def run(self, args: ViewSubdirectoryArgs, ctx: ToolContext) -> str:
        root = ctx.root_dir.resolve()
        directory = resolve_in_root(root, args.directory_path, allow_outside=True)
        if not directory.exists():
            raise ToolError(
                "E_PATH_NOT_FOUND",
                user_text("%1 does not exist", repr(args.directory_path)),
                user_text("Check the path with ls."),
            )
        if not directory.is_dir():
            raise ToolError(
                "E_NOT_A_DIRECTORY",
                user_text("%1 is a file", repr(args.directory_path)),
                user_text("Read it with read_file instead."),
            )
        return await asyncio.to_thread(build_map, directory, root)
