"""Python kernels start without the notebook's folder on ``sys.path`` until the user's code runs.

Jupyter starts a kernel in the notebook's folder with ``python -m ipykernel_launcher -f {connection_file}``.
``-m`` puts that folder first on ``sys.path`` before anything is imported, so an ``ipykernel_launcher.py``
there runs instead of ipykernel's, and a module the kernel imports while it starts (``pathlib.py``, before
the launcher drops the folder) can be stood in for by a file in the folder — code that runs outside the
sandbox, in every kernel the user opens there. IPython then adds the folder back itself
(``InteractiveShellApp.init_path``, before ``site-packages``), so what is imported after that during
start-up (configured extensions, say) can be shadowed too.

So, at extension load (``install``), the server's kernel spec manager hands out Python kernel specs whose
``-m ipykernel_launcher`` (or ``-m ipykernel``) is replaced by ``-c BOOTSTRAP``. The bootstrap drops the
folder ``-c`` put on ``sys.path``, holds back IPython's ``init_path`` while the kernel app initializes, and
calls it just before the start-up code the user configured (``exec_lines``, start-up files) — so
``import utils`` from the folder works in every cell, as before, and nothing from the folder runs before.
It is plain code for any Python 3 with ipykernel: the kernel's environment need not have hdsp-agent.

Everything else of the spec stays as the user wrote it (interpreter, other arguments, ``env``, metadata);
kernels of other languages, and Python kernels started another way, are left alone. The kernel spec listing
(``/api/kernelspecs``) shows what is started.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

# The modules ``python -m`` may name to start an IPython kernel.
LAUNCHER_MODULES = frozenset({"ipykernel_launcher", "ipykernel"})

# Interpreter options whose value is the next argument.
_OPTIONS_WITH_VALUE = frozenset({"-W", "-X", "-Q"})

# Runs as ``python -c BOOTSTRAP -f {connection_file} ...``: ``sys.argv[1:]`` are the kernel's arguments, as
# with ``-m``. ``-c`` puts '' (the working directory) first on sys.path after the interpreter's own start-up
# (``site``, ``.pth`` files), so it is dropped before the first import; under ``-P`` / PYTHONSAFEPATH nothing
# was added. IPython's ``init_path`` (which respects ``ignore_cwd`` and safe-path mode) runs late, once.
BOOTSTRAP = """\
import sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
from ipykernel.kernelapp import IPKernelApp
app = IPKernelApp.instance()
add_cwd = app.init_path
run_startup_code = app.init_code
app.init_path = lambda: None
def init_code():
    add_cwd()
    run_startup_code()
app.init_code = init_code
app.initialize()
add_cwd()
app.start()
"""


def bootstrapped_argv(argv: list[str]) -> list[str] | None:
    """``argv`` with ``-m ipykernel_launcher`` (or ``-m ipykernel``) replaced by the bootstrap, or None when
    it is not an IPython kernel started that way. The interpreter and every other argument stay."""
    index = 1
    while index < len(argv) - 1:
        option = argv[index]
        if option == "-m":
            if argv[index + 1] not in LAUNCHER_MODULES:
                return None
            return [*argv[:index], "-c", BOOTSTRAP, *argv[index + 2 :]]
        if not option.startswith("-") or option in ("-c", "--", "-"):
            return None  # a script or code runs, not a module: not ours to change
        index += 2 if option in _OPTIONS_WITH_VALUE else 1
    return None


def bootstrapped_spec(spec: KernelSpec) -> KernelSpec:
    """A copy of ``spec`` that starts through the bootstrap (``spec`` itself when it is not ours to change:
    the manager may cache and hand out the same object)."""
    argv = bootstrapped_argv(list(spec.argv))
    if argv is None:
        return spec
    copy = KernelSpec(resource_dir=spec.resource_dir, **spec.to_dict())
    copy.argv = argv
    if spec.name:
        copy.name = spec.name
    return copy


def install(manager: Any) -> bool:
    """Make ``manager`` (the server's kernel spec manager) hand out bootstrapped Python kernel specs.

    Only a local ``KernelSpecManager`` with a synchronous ``get_kernel_spec`` is wrapped (a gateway's kernels
    start on another machine, from its own specs); returns whether it was. Installing twice is harmless."""
    if not isinstance(manager, KernelSpecManager) or getattr(manager, "_hdsp_kernel_start", False):
        return False
    original = manager.get_kernel_spec
    if inspect.iscoroutinefunction(original):
        return False

    @functools.wraps(original)
    def get_kernel_spec(kernel_name: str, *args: Any, **kwargs: Any) -> KernelSpec:
        return bootstrapped_spec(original(kernel_name, *args, **kwargs))

    manager.get_kernel_spec = get_kernel_spec  # type: ignore[method-assign]
    manager._hdsp_kernel_start = True  # type: ignore[attr-defined]
    return True
