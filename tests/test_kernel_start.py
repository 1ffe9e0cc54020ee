"""Kernels start without the notebook's folder on sys.path until the user's code runs
(``hdsp_agent/tools/jupyter/kernel_start.py``): real interpreters, a real Jupyter server and real ipykernel.

SAFETY: the planted modules only create marker files in a scratch directory under tmp_path.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpec
from test_kernel import run
from test_notebook_tools import write_notebook

from hdsp_agent.tools.jupyter.kernel import start_notebook_session
from hdsp_agent.tools.jupyter.kernel_start import BOOTSTRAP, bootstrapped_argv, bootstrapped_spec

STOCK_ARGV = ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"]


def plant(folder: Path, markers: Path) -> dict[str, Path]:
    """Modules in ``folder`` that stand in for what a kernel imports while it starts; each leaves a marker in
    ``markers`` when it runs. ``pathlib.py`` then loads the real pathlib, so a kernel that ran it still
    works (the attack is silent)."""
    folder.mkdir(parents=True, exist_ok=True)
    markers.mkdir(parents=True, exist_ok=True)
    planted = {
        name: markers / f"ran-{name}" for name in ("ipykernel_launcher", "pathlib", "traitlets", "zmq")
    }
    touch = "open({marker!r}, 'w').close()\n"
    (folder / "ipykernel_launcher.py").write_text(touch.format(marker=str(planted["ipykernel_launcher"])))
    (folder / "pathlib.py").write_text(
        touch.format(marker=str(planted["pathlib"]))
        + "import sys\ndel sys.modules['pathlib']\nsys.path = [p for p in sys.path if p not in ('', "
        + repr(str(folder))
        + ")]\nimport pathlib as _real\nsys.modules['pathlib'] = _real\n"
    )
    (folder / "traitlets.py").write_text(touch.format(marker=str(planted["traitlets"])))
    (folder / "zmq").mkdir(exist_ok=True)
    (folder / "zmq" / "__init__.py").write_text(touch.format(marker=str(planted["zmq"])))
    (folder / "utils.py").write_text("VALUE = 42\n")
    return planted


def ran(planted: dict[str, Path]) -> list[str]:
    return [name for name, marker in planted.items() if marker.exists()]


# -- the argv ------------------------------------------------------------------------------------------------


def test_the_stock_launch_runs_the_launcher_planted_in_the_folder(tmp_path: Path) -> None:
    # The attack the bootstrap closes, with Jupyter's own argv: the folder's ipykernel_launcher.py runs.
    planted = plant(tmp_path / "nb", tmp_path / "markers")
    subprocess.run(
        [sys.executable, "-m", "ipykernel_launcher", "--version"],
        cwd=tmp_path / "nb",
        timeout=60,
        check=False,
    )
    assert ran(planted) == ["ipykernel_launcher"]


def test_the_bootstrap_starts_ipykernel_without_running_anything_from_the_folder(tmp_path: Path) -> None:
    planted = plant(tmp_path / "nb", tmp_path / "markers")
    argv = bootstrapped_argv([sys.executable, "-m", "ipykernel_launcher", "--version"])
    assert argv is not None
    done = subprocess.run(argv, cwd=tmp_path / "nb", capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip()  # ipykernel's version: the real kernel app ran
    assert ran(planted) == []


def test_only_an_ipykernel_module_launch_is_rewritten_and_the_rest_of_the_spec_stays() -> None:
    assert bootstrapped_argv(STOCK_ARGV) == ["python", "-c", BOOTSTRAP, "-f", "{connection_file}"]
    python = "/opt/py/bin/python3"
    assert bootstrapped_argv([python, "-X", "frozen_modules=off", "-m", "ipykernel", "-f", "x"]) == [
        python, "-X", "frozen_modules=off", "-c", BOOTSTRAP, "-f", "x",
    ]  # fmt: skip
    for untouched in (
        ["R", "--slave", "-e", "IRkernel::main()", "--args", "{connection_file}"],
        ["python", "-m", "my_kernel", "-f", "{connection_file}"],
        ["python", "start.py", "-m", "ipykernel_launcher"],
        ["python", "-c", "import x", "-m", "ipykernel_launcher"],
    ):
        assert bootstrapped_argv(untouched) is None, untouched
    spec = KernelSpec(
        argv=STOCK_ARGV, env={"MY_SETTING": "1"}, display_name="Mine", language="python", metadata={"k": 1}
    )
    copy = bootstrapped_spec(spec)
    assert copy is not spec and spec.argv == STOCK_ARGV  # the manager's own object is not changed
    assert (copy.env, copy.display_name, copy.language, copy.metadata) == (
        {"MY_SETTING": "1"}, "Mine", "python", {"k": 1},
    )  # fmt: skip
    other = KernelSpec(argv=["R", "-e", "x"], language="R")
    assert bootstrapped_spec(other) is other


# -- a real server and kernel --------------------------------------------------------------------------------


async def test_a_kernel_started_next_to_planted_modules_runs_none_and_imports_utils(
    jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    planted = plant(jp_root_dir / "analysis", tmp_path / "markers")
    write_notebook(jp_root_dir / "analysis", "nb.ipynb", "import utils")
    spec = jp_serverapp.kernel_spec_manager.get_kernel_spec("python3")
    assert spec.argv[1:3] == ["-c", BOOTSTRAP]  # the extension installed the bootstrap at load
    kernels = jp_serverapp.kernel_manager
    try:
        kernel_id = await start_notebook_session(jp_serverapp.session_manager, "analysis/nb.ipynb", "python3")
        code = "import os, sys, utils\nprint(utils.VALUE, os.getcwd(), sys.path.index('') > 0)"
        reply, collector = await run(kernels, kernel_id, code)
        assert reply.status == "ok", collector.outputs
        value, cwd, after_stdlib = collector.outputs[0].text.split()
        # The folder's own modules import from every cell; IPython's place for it: after the standard library.
        assert value == "42" and Path(cwd) == (jp_root_dir / "analysis").resolve() and after_stdlib == "True"
        assert ran(planted) == []
    finally:
        await kernels.shutdown_all()


async def test_without_the_bootstrap_the_same_folder_runs_a_planted_module(
    jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    # The control: Jupyter's own argv for the same kernel runs pathlib.py from the folder while it starts.
    from jupyter_client.manager import AsyncKernelManager

    planted = plant(jp_root_dir / "analysis", tmp_path / "markers")
    (jp_root_dir / "analysis" / "ipykernel_launcher.py").unlink()  # else the kernel never starts at all
    del planted["ipykernel_launcher"]
    manager = AsyncKernelManager(kernel_name="python3")
    manager._kernel_spec = KernelSpec(argv=STOCK_ARGV, language="python", display_name="stock")
    await manager.start_kernel(cwd=str(jp_root_dir / "analysis"))
    try:
        client = manager.client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        client.stop_channels()
        assert ran(planted) == ["pathlib"]
    finally:
        await manager.shutdown_kernel(now=True)
