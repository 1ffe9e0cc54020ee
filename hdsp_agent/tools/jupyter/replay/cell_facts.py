"""What each code cell of a notebook defines, uses, reads and writes, from its source alone (``ast``).

Replay names the cause of a difference from these facts and the saved execution counts; nothing here runs
code. The analysis is deliberately shallow (module-level names, literal file names, well-known calls): a
cause is only named when the source shows it, never guessed.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from typing import Any

BUILTIN_NAMES = frozenset(dir(builtins)) | {"get_ipython", "display", "In", "Out", "__file__"}
# Calls whose result changes from run to run unless a seed was set earlier in the notebook.
RANDOM_CALLS = frozenset(
    {
        "random.random", "random.randint", "random.choice", "random.choices", "random.sample",
        "random.shuffle", "random.uniform", "random.gauss", "random.randrange", "random.normalvariate",
        "np.random.rand", "np.random.randn", "np.random.randint", "np.random.choice", "np.random.normal",
        "np.random.uniform", "np.random.permutation", "np.random.shuffle", "numpy.random.rand",
        "numpy.random.randn", "numpy.random.randint", "numpy.random.choice", "numpy.random.normal",
        "torch.rand", "torch.randn", "torch.randint", "uuid.uuid4", "secrets.token_hex", "os.urandom",
    }
)  # fmt: skip
SEED_CALLS = frozenset(
    {"random.seed", "np.random.seed", "numpy.random.seed", "torch.manual_seed", "tf.random.set_seed"}
)
# A default_rng()/Random() without a seed argument is unseeded; with one it seeds.
SEEDABLE_CONSTRUCTORS = frozenset(
    {"np.random.default_rng", "numpy.random.default_rng", "random.Random", "np.random.RandomState"}
)
ENVIRONMENT_CALLS = frozenset(
    {
        "os.getenv", "os.environ.get", "os.getcwd", "os.cpu_count", "os.getlogin", "os.getpid",
        "platform.node", "platform.platform", "platform.python_version", "platform.system",
        "platform.machine", "socket.gethostname", "getpass.getuser", "sys.getrecursionlimit",
    }
)  # fmt: skip
ENVIRONMENT_ATTRIBUTES = frozenset(
    {"os.environ", "sys.version", "sys.platform", "sys.executable", "sys.path"}
)
READ_CALLS = frozenset(
    {
        "pd.read_csv", "pd.read_parquet", "pd.read_json", "pd.read_excel", "pd.read_pickle",
        "pandas.read_csv", "np.load", "np.loadtxt", "numpy.load", "json.load", "pickle.load",
    }
)  # fmt: skip
WRITE_METHODS = frozenset(
    {"to_csv", "to_parquet", "to_json", "to_excel", "to_pickle", "write_text", "savefig"}
)
READ_METHODS = frozenset({"read_text", "read_bytes"})
WRITE_CALLS = frozenset({"np.save", "np.savetxt", "numpy.save"})
_IPYTHON_LINE = re.compile(r"^\s*[%!]")


@dataclass
class CellFacts:
    """One code cell, as the source shows it."""

    index: int
    cell_id: str
    execution_count: int | None
    defines: set[str] = field(default_factory=set)
    # Names read before this cell itself assigns them (a name the cell sets first is its own).
    uses: set[str] = field(default_factory=set)
    imports: set[str] = field(default_factory=set)
    reads_files: set[str] = field(default_factory=set)
    writes_files: set[str] = field(default_factory=set)
    random_calls: list[str] = field(default_factory=list)
    seeds: bool = False
    environment: list[str] = field(default_factory=list)
    parses: bool = True


def dotted_name(node: ast.AST) -> str | None:
    """``np.random.rand`` for the expression ``np.random.rand``; None for anything not a plain dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _literal_path(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Call) and dotted_name(node.func) in {"Path", "pathlib.Path"} and node.args:
        return _literal_path(node.args[0])
    return None


def _open_mode(call: ast.Call) -> str:
    mode: ast.AST | None = call.args[1] if len(call.args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else "r"


def python_source(source: str) -> str:
    """The cell's source with IPython's magics and shell lines blanked, so ``ast`` can parse the rest."""
    return "\n".join("" if _IPYTHON_LINE.match(line) else line for line in source.splitlines())


class _Visitor(ast.NodeVisitor):
    """Walks module-level statements in order: a name is a use when read before the cell assigns it."""

    def __init__(self, facts: CellFacts) -> None:
        self.facts = facts
        self.local_scopes: list[set[str]] = []

    # Names and scopes
    def visit_Name(self, node: ast.Name) -> None:
        if self.local_scopes and any(node.id in scope for scope in self.local_scopes):
            return
        if isinstance(node.ctx, ast.Load):
            if node.id not in self.facts.defines:
                self.facts.uses.add(node.id)
        elif not self.local_scopes:
            self.facts.defines.add(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)  # the right side is read before the targets are bound
        for target in node.targets:
            self.visit(target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name) and not self.local_scopes:
            if node.target.id not in self.facts.defines:
                self.facts.uses.add(node.target.id)
            self.facts.defines.add(node.target.id)
        else:
            self.visit(node.target)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        if not isinstance(node, ast.Lambda):
            for decorator in node.decorator_list:
                self.visit(decorator)
            if not self.local_scopes:
                self.facts.defines.add(node.name)
        arguments = node.args
        scope = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
        scope |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        body = node.body if isinstance(node.body, list) else [node.body]
        scope |= {
            n.id
            for stmt in body
            for n in ast.walk(stmt)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.local_scopes.append(scope)
        for stmt in body:
            self.visit(stmt)
        self.local_scopes.pop()

    visit_FunctionDef = _function  # type: ignore[assignment]
    visit_AsyncFunctionDef = _function  # type: ignore[assignment]
    visit_Lambda = _function  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            self.visit(base)
        if not self.local_scopes:
            self.facts.defines.add(node.name)
        self.local_scopes.append({n.id for n in ast.walk(node) if isinstance(n, ast.Name)})
        for stmt in node.body:
            self.visit(stmt)
        self.local_scopes.pop()

    def _comprehension(self, node: ast.AST) -> None:
        targets = {
            n.id
            for generator in getattr(node, "generators", [])
            for n in ast.walk(generator.target)
            if isinstance(n, ast.Name)
        }
        self.local_scopes.append(targets)
        self.generic_visit(node)
        self.local_scopes.pop()

    visit_ListComp = _comprehension  # type: ignore[assignment]
    visit_SetComp = _comprehension  # type: ignore[assignment]
    visit_DictComp = _comprehension  # type: ignore[assignment]
    visit_GeneratorExp = _comprehension  # type: ignore[assignment]

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            self.facts.imports.add(name)
            self.facts.defines.add(name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            name = alias.asname or alias.name
            self.facts.imports.add(name)
            self.facts.defines.add(name)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name and not self.local_scopes:
            self.facts.defines.add(node.name)
        self.generic_visit(node)

    # Calls that touch files, randomness or the environment
    def visit_Call(self, node: ast.Call) -> None:
        name = dotted_name(node.func) or ""
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        first = node.args[0] if node.args else None
        if name == "open" and first is not None:
            path = _literal_path(first)
            if path is not None:
                mode = _open_mode(node)
                (self.facts.writes_files if set(mode) & set("wax") else self.facts.reads_files).add(path)
        elif name in READ_CALLS or name.endswith(".read_csv"):
            path = _literal_path(first)
            if path is not None:
                self.facts.reads_files.add(path)
        elif name in WRITE_CALLS:
            path = _literal_path(first)
            if path is not None:
                self.facts.writes_files.add(path)
        elif method in WRITE_METHODS:
            path = _literal_path(node.func.value) if method == "write_text" else _literal_path(first)  # type: ignore[attr-defined]
            if path is not None:
                self.facts.writes_files.add(path)
        elif method in READ_METHODS:
            path = _literal_path(node.func.value)  # type: ignore[attr-defined]
            if path is not None:
                self.facts.reads_files.add(path)
        if name in SEED_CALLS or (name in SEEDABLE_CONSTRUCTORS and (node.args or node.keywords)):
            self.facts.seeds = True
        elif name in RANDOM_CALLS or (name in SEEDABLE_CONSTRUCTORS and not node.args and not node.keywords):
            self.facts.random_calls.append(name)
        if name in ENVIRONMENT_CALLS:
            self.facts.environment.append(name)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = dotted_name(node)
        if name in ENVIRONMENT_ATTRIBUTES:
            self.facts.environment.append(name)
        self.generic_visit(node)


def cell_facts(index: int, cell: Any) -> CellFacts:
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    facts = CellFacts(
        index=index, cell_id=str(cell.get("id") or index), execution_count=cell.get("execution_count")
    )
    try:
        tree = ast.parse(python_source(source))
    except SyntaxError:
        facts.parses = False
        return facts
    visitor = _Visitor(facts)
    for statement in tree.body:
        visitor.visit(statement)
    facts.uses -= BUILTIN_NAMES
    return facts


def notebook_facts(cells: list[Any]) -> list[CellFacts]:
    """Facts for each code cell; ``index`` is the cell's position among all cells (markdown included)."""
    return [cell_facts(index, cell) for index, cell in enumerate(cells) if cell.get("cell_type") == "code"]
