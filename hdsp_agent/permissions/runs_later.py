"""Project files that run or instruct later, found by what lies around them: a module that shadows what
Python imports (next to a notebook or at the root), anything inside a virtualenv or conda env, the rules and
instruction files the system prompt loads (and what their links lead to).

``protected.write_protection`` asks these questions after its by-name ones, for a path inside the project
root. They are asked for every path a tool writes and for every path a shell command changed, so each costs
a few ``stat`` calls at most: the module names are sets built once, a folder is listed only when a written
name is one of them.

Why these places: a sandboxed command runs contained, but what it leaves in the project runs later outside
the sandbox, with the server's environment — a kernel the user opens next to the notebook, a script the user
runs from the root, the project's virtualenv (first on ``PATH`` in every sandboxed command and used by the
user's terminal), the next conversation's system prompt.
"""

from __future__ import annotations

import functools
import os
import sys

from ..instruction_places import INSTRUCTION_FILES, RULE_DIRS
from .sensitive import normalize_name

# Modules an IPython kernel imports before the user's first cell, besides the standard library: a file of
# one of these names in the kernel's working directory would run inside every kernel started there (the
# kernel may live in another environment than the server, so they are listed, not only looked up).
# ``tools/jupyter/kernel_start.py`` keeps the kernel's own start from reading the folder; this keeps such
# files from being planted for the user's later imports and for kernels started some other way.
KERNEL_START_MODULES = frozenset({
    "ipykernel_launcher", "ipykernel", "ipython", "traitlets", "zmq", "tornado", "jupyter_client",
    "jupyter_core", "comm", "debugpy", "psutil", "nest_asyncio", "matplotlib_inline", "prompt_toolkit",
    "pygments", "jedi", "parso", "decorator", "pexpect", "ptyprocess", "wcwidth", "stack_data", "executing",
    "asttokens", "pure_eval", "pickleshare", "backcall", "dateutil", "platformdirs", "packaging",
    "typing_extensions", "exceptiongroup", "six", "appnope", "sitecustomize", "usercustomize",
})  # fmt: skip
# Names some distributions install as top-level packages by mistake that projects use for their own folders:
# nothing imports them from a library, so a project's ``tests/`` or ``scripts/`` shadows nothing that matters.
_PROJECT_FOLDER_NAMES = frozenset({
    "tests", "test", "testing", "docs", "doc", "examples", "example", "scripts", "benchmarks", "bench", "src",
    "lib", "utils", "util", "tools", "build", "data", "notebooks",
})  # fmt: skip
# How a file becomes an importable module (a package is a folder of that name with ``__init__``).
_SOURCE_SUFFIXES = (".py", ".pyc", ".pyw")
_EXTENSION_SUFFIXES = (".so", ".pyd")
# The project's virtualenv by the names ``sandbox/environment.py`` activates (its ``bin/`` goes first on
# every sandboxed command's PATH): protected whether it exists yet or not.
PROJECT_VENV_NAMES = (".venv", "venv")


@functools.cache
def shadowed_module_names() -> frozenset[str]:
    """Top-level module names a folder's file could stand in for: the kernel's start-up modules, the standard
    library, and every top-level module installed in the server's environment (lower case: a
    case-insensitive file system imports ``JSON.py`` as ``json``). Built once per process (~0.2 s)."""
    from importlib.metadata import packages_distributions

    installed = {
        name for name in packages_distributions() if name.isidentifier() and name not in _PROJECT_FOLDER_NAMES
    }
    return frozenset(n.lower() for n in (*KERNEL_START_MODULES, *sys.stdlib_module_names, *installed))


def module_name(file_name: str) -> str | None:
    """The top-level module a file called ``file_name`` is imported as (``json.py``, ``zmq.cpython-311-x86_64-
    linux-gnu.so``, ``json.pyc``), or None for a file Python does not import."""
    lowered = file_name.lower()
    if lowered.endswith(_SOURCE_SUFFIXES):
        return lowered.rsplit(".", 1)[0] or None
    if lowered.endswith(_EXTENSION_SUFFIXES):
        return lowered.split(".", 1)[0] or None
    return None


def _holds_notebook(folder: str) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(entry.name.lower().endswith(".ipynb") for entry in entries)
    except OSError:
        return False


def _notebooks_in(folder: str) -> int:
    try:
        with os.scandir(folder) as entries:
            return sum(1 for entry in entries if entry.name.lower().endswith(".ipynb"))
    except OSError:
        return 0


def _is_package(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, "__init__.py")) or os.path.exists(
        os.path.join(folder, "__init__.pyc")
    )


def _imported_as(part: str, inner: list[str], entry: str) -> str | None:
    """The module ``import`` finds at ``entry`` (named ``part``) once the write below it is done, or None.

    ``inner``: the components of the written path below ``entry`` (empty: ``entry`` itself is written). A
    folder without ``__init__`` shadows nothing (a namespace portion loses to any module found later on
    ``sys.path``), so a file inside one counts only when it is that ``__init__`` or the folder has one."""
    if not inner:
        # A module file, or a folder (or suffix-less name) put in place whole: ``mv pkg zmq``, ``cp -r``.
        return module_name(part) or (part.lower() if "." not in part else None)
    if module_name(inner[-1]) is None or part.lower() not in shadowed_module_names():
        return None  # (the name first: the folder is looked at only for a name that matters)
    if (len(inner) == 1 and module_name(inner[0]) == "__init__") or _is_package(entry):
        return part.lower()
    return None


def _shadows_in(folder: str) -> str | None:
    """The first entry of ``folder`` that shadows an imported module (a module file, or a package)."""
    names = shadowed_module_names()
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                module = module_name(entry.name)
                if module is None and entry.is_dir() and _is_package(entry.path):
                    module = entry.name.lower()
                if module is not None and module in names:
                    return entry.name
    except OSError:
        return None
    return None


def shadowing_reason(path: str, root: str) -> str | None:
    """Why writing ``path`` (absolute, below ``root``) plants a module Python imports instead of the real one.

    Where: a folder that holds a notebook (its kernels start there, with the folder on ``sys.path``) and the
    project root (where the user's terminal, ``python script.py`` and ``python -m`` start). Deeper source
    folders are left out on purpose: they are usually packages (``pkg/types.py`` is ``pkg.types``), and asking
    for every ``types.py`` in them would teach users to approve without reading.

    What: a module file (``json.py``, ``json.pyc``, an extension module), a package of that name or a module
    file inside one (``zmq/__init__.py``, ``zmq/sugar.py`` once ``zmq/__init__.py`` exists), or a folder of
    that name put in place whole — for a name of the kernel's start-up modules, the standard library or the
    installed packages. And the other way round: the first notebook in a folder makes it a notebook folder, so
    it asks when that folder already holds such a module.
    """
    relative = path[len(root) :].strip("/").split("/")
    names = shadowed_module_names()
    folder = root
    for index, part in enumerate(relative):
        entry = f"{folder}/{part}"
        module = _imported_as(part, relative[index + 1 :], entry)
        if module is not None and module in names and (folder == root or _holds_notebook(folder)):
            where = "the project root" if folder == root else "a folder that holds a notebook"
            return (
                f"it stands in for the Python module {module!r} in {where} (kernels, scripts and python -m "
                "started there import it instead of the real one)"
            )
        folder = entry
    if len(relative) > 1 and relative[-1].lower().endswith(".ipynb"):
        parent = os.path.dirname(path)
        if _notebooks_in(parent) <= 1 and (shadow := _shadows_in(parent)) is not None:
            return (
                f"the first notebook in a folder whose {shadow} stands in for a Python module (a kernel "
                "started for this notebook would import it)"
            )
    return None


def environment_reason(path: str, root: str) -> str | None:
    """Why ``path`` (absolute, below ``root``) is part of a Python environment: the project's ``.venv`` or
    ``venv`` (existing or not), or any folder with ``pyvenv.cfg`` or ``conda-meta/`` between the root and
    it. Its packages, scripts and ``bin/`` run in the user's terminal, kernels and the sandbox's PATH."""
    relative = path[len(root) :].strip("/").split("/")
    if relative and normalize_name(relative[0]) in PROJECT_VENV_NAMES:
        return "the project's virtualenv (its programs and packages run outside the sandbox later)"
    folder = root
    for part in relative[:-1]:
        folder = f"{folder}/{part}"
        if os.path.isfile(f"{folder}/pyvenv.cfg") or os.path.isdir(f"{folder}/conda-meta"):
            return "inside a Python environment in the project (its programs and packages run later)"
    return None


def instruction_link_reason(path: str, root: str) -> str | None:
    """Why ``path`` is what a rules or instruction file of the project reads through a link (``AGENTS.md ->
    docs/agents.md``, ``.hdsp/rules -> notes/``): writing it changes every later conversation's prompt."""
    for place, link in _instruction_places(root):
        if not os.path.islink(link):
            continue
        target = os.path.realpath(link)
        if path == target or path.startswith(target.rstrip("/") + "/"):
            return f"what the project's {place} (a link) reads: instructions for every later conversation"
    return None


@functools.lru_cache(maxsize=8)
def _instruction_places(root: str) -> tuple[tuple[str, str], ...]:
    """(name, absolute path) of every place the rules loader reads in ``root``."""
    places = (*INSTRUCTION_FILES, ".hdsp", ".continue", *(directory.as_posix() for directory in RULE_DIRS))
    return tuple((place, f"{root}/{place}") for place in places)
