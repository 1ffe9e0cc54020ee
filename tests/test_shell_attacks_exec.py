"""Attacks on the shell analyser, run for real: each payload would create a marker file, and through
``hdsp-agent tools call run_terminal_command ... --approve none`` it must not.

Every payload is first run with plain ``bash -c`` in the same scratch project to prove it is live (the
marker appears), so "the marker stayed absent" means the analyser stopped it, not that the payload was
broken. Payloads only ever ``touch`` a marker inside a scratch directory, with a scratch HOME; they are
Python data handed to subprocess argv lists, never written into a shell here-document.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hdsp_agent.tools.builtin.search.ripgrep import find_rg

MARK = "@MARKER@"
# (name, payload); ``@MARKER@`` becomes the marker's absolute path.
ATTACKS: list[tuple[str, str]] = [
    ("here-document body", f"cat <<EOF\n$(touch {MARK})\nEOF"),
    ("here-document body, backticks", f"cat > out.txt <<EOF\nx `touch {MARK}` y\nEOF"),
    ("array subscript", f"echo ${{a[$(touch {MARK})]}}"),
    ("arithmetic on a variable's value", f"x='a[$(touch {MARK})]'; echo $((x))"),
    ("(( )) subscript", f"(( a[$(touch {MARK})] ))"),
    ("test -v subscript", f"test -v 'a[$(touch {MARK})]'"),
    ("printf -v subscript", f"printf -v 'a[$(touch {MARK})]' x"),
    ("let subscript", f"let 'a[$(touch {MARK})]=1'"),
    ("exported function via env", f"env 'BASH_FUNC_ls%%=() {{ touch {MARK}; }}' bash -c ls"),
    ("BASH_ENV prefix", "BASH_ENV=payload.sh bash -c true"),
    ("bash --rcfile", "bash --rcfile payload.sh -ic true"),
    (
        "git config from the environment",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./payload.sh git status",
    ),
    ("git -c", "git -c core.fsmonitor=./payload.sh status"),
    ("git global config file", "GIT_CONFIG_GLOBAL=evil.gitconfig git status"),
    ("rg --pre", "rg --pre ./payload.sh foo"),
    # getopt takes a prefix of a long option: sort runs the "compressor" for its temporary files.
    ("sort --compress-program cut short", "seq 200000 | sort -S 1K --compress-prog=./payload.sh > /dev/null"),
    ("ripgrep config file", "RIPGREP_CONFIG_PATH=evil.rgrc rg foo"),
    ("python -m pip shadowed by the project", "python3 -m pip --version"),
    ("write outside through cd", "cd .. && echo pwned > outside-marker.txt"),
    ("the parent's environment", f"tr '\\0' '\\n' < /proc/$PPID/environ > {MARK}"),
    ("a process's command line", f"cat /proc/self/cmdline > {MARK}"),
]


@pytest.fixture()
def scratch(tmp_path: Path) -> dict[str, Path]:
    """A project (a git repository with hostile files in it), a scratch HOME, and where markers land."""
    root = tmp_path / "project"
    home = tmp_path / "home"
    root.mkdir()
    home.mkdir()
    marker = root / "marker"
    payload = root / "payload.sh"
    payload.write_text(f"#!/bin/sh\ntouch {marker}\n")
    payload.chmod(0o755)
    (root / "a.txt").write_text("foo\n")
    (root / "pip.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (root / "evil.gitconfig").write_text("[core]\n\tfsmonitor = ./payload.sh\n")
    (root / "evil.rgrc").write_text("--pre=./payload.sh\n")
    env = _env(home)
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env, capture_output=True)
    return {"root": root, "home": home, "marker": marker, "outside": tmp_path / "outside-marker.txt"}


def _env(home: Path) -> dict[str, str]:
    keep = {
        key: value
        for key, value in os.environ.items()
        if key in ("PATH", "LANG", "PYTHONPATH", "VIRTUAL_ENV")
    }
    # The ripgrep wheel's rg (the payloads that abuse rg must find it, as the agent's own commands would).
    rg_dir = str(Path(find_rg()).parent)
    keep["PATH"] = rg_dir + os.pathsep + keep.get("PATH", "")
    return {**keep, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}


def _markers(scratch: dict[str, Path]) -> list[Path]:
    return [path for path in (scratch["marker"], scratch["outside"]) if path.exists()]


def _clear(scratch: dict[str, Path]) -> None:
    for path in (scratch["marker"], scratch["outside"]):
        path.unlink(missing_ok=True)


@pytest.mark.parametrize(("name", "payload"), ATTACKS, ids=[name for name, _ in ATTACKS])
def test_attack_is_live_in_bash_and_does_not_run_through_the_agent(
    scratch: dict[str, Path], name: str, payload: str
) -> None:
    command = payload.replace(MARK, str(scratch["marker"]))
    env = _env(scratch["home"])
    subprocess.run(["bash", "-c", command], cwd=scratch["root"], env=env, capture_output=True, timeout=30)
    assert _markers(scratch), f"the payload {name!r} is not live: bash ran it and no marker appeared"
    _clear(scratch)

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hdsp_agent.cli",
            "tools",
            "call",
            "run_terminal_command",
            json.dumps({"command": command}),
            "--root",
            str(scratch["root"]),
            "--approve",
            "none",
        ],
        cwd=scratch["root"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    result = json.loads(done.stdout)
    assert result["status"] in ("denied", "error"), f"{name}: {result}"
    assert not _markers(scratch), f"{name}: the payload ran through the agent"


def test_an_allowed_command_does_run_through_the_agent(scratch: dict[str, Path]) -> None:
    """The harness itself: a harmless allowed command runs, so the attacks' absence of markers means
    something."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hdsp_agent.cli",
            "tools",
            "call",
            "run_terminal_command",
            json.dumps({"command": "echo made > made.txt"}),
            "--root",
            str(scratch["root"]),
            "--approve",
            "none",
        ],
        cwd=scratch["root"],
        env=_env(scratch["home"]),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert json.loads(done.stdout)["status"] == "ok", done.stdout
    assert (scratch["root"] / "made.txt").read_text() == "made\n"
