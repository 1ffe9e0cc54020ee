"""The pytest suites of ``make soak``, run as a user would run them, with their figures counted.

- faults: every test marked ``fault`` injects one real fault (model 500/429/hang/drop, kernel killed, disk
  write failing, socket dropped, SIGTERM, corrupted store, MCP server killed, browser tab gone); passing means
  it was survived with nothing lost.
- hostile input: the hypothesis properties; their statistics give how many inputs were tried.
- prompt injection and access: the suites' checks.
- security: the OS sandbox (bubblewrap and Landlock, run for real), protected paths, secret files and the
  shell attacks run through ``hdsp-agent tools call``; with the size of the analyser's security corpus.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = [
    "tests/test_hostile_input.py",
    "tests/test_permissions_commands.py",
    "tests/test_textfile.py",
    "tests/test_shell_attacks_exec.py",
]
INJECTION = ["tests/test_prompt_injection.py"]
SECURITY = [
    "tests/test_sandbox.py",
    "tests/test_sandbox_exec.py",
    "tests/test_sandbox_server.py",
    "tests/test_tool_subprocesses.py",
    "tests/test_protected_paths.py",
    "tests/test_secret_files.py",
    "tests/test_api_key_file.py",
    "tests/test_shell_attacks_exec.py",
]
ACCESS = ["tests/test_routes.py", "tests/test_routes_sessions.py", "tests/test_ws_origin.py"]
_PASSING = re.compile(r"- (\d+) passing, (\d+) failing")


def _pytest(arguments: list[str]) -> tuple[dict[str, int], str]:
    """Run pytest; the counts from its JUnit report (tests, passed) and its output."""
    with tempfile.TemporaryDirectory(prefix="hdsp-soak-") as scratch:
        report = Path(scratch) / "report.xml"
        completed = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"]
            + arguments,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        counts = {"tests": 0, "passed": 0}
        if report.exists():
            for suite in ElementTree.parse(report).getroot().iter("testsuite"):
                tests = int(suite.get("tests", 0))
                bad = sum(int(suite.get(key, 0)) for key in ("failures", "errors", "skipped"))
                counts["tests"] += tests
                counts["passed"] += tests - bad
    if counts["passed"] != counts["tests"]:
        sys.stdout.write(completed.stdout[-4000:])
    return counts, completed.stdout


def run_suites() -> dict[str, Any]:
    faults, _ = _pytest(["-m", "fault"])
    hostile, output = _pytest([*HOSTILE, "--hypothesis-show-statistics"])
    passing = [int(match.group(1)) for match in _PASSING.finditer(output)]
    failing = sum(int(match.group(2)) for match in _PASSING.finditer(output))
    injection, _ = _pytest(INJECTION)
    access, _ = _pytest(ACCESS)
    security, _ = _pytest(SECURITY)
    tried = {"inputs_tried": sum(passing), "properties": len(passing), "inputs_failed": failing}
    return {
        "faults": faults,
        "hostile": {**hostile, **tried},
        "injection": injection,
        "access": access,
        "security": {**security, **corpus_sizes()},
    }


def corpus_sizes() -> dict[str, int]:
    """How many commands the analyser's security corpus holds, by the decision each must get."""
    sys.path.insert(0, str(ROOT / "tests"))
    import command_corpus  # noqa: PLC0415 (the tests' data, not a module of the package)

    return {
        "corpus_deny": len(command_corpus.DENY),
        "corpus_ask": len(command_corpus.ASK),
        "corpus_allow": len(command_corpus.ALLOW),
    }


def suites_lines(figures: dict[str, Any]) -> list[str]:
    faults, hostile = figures["faults"], figures["hostile"]
    injection, access = figures["injection"], figures["access"]
    return [
        f"faults injected for real: {faults['tests']}; survived with nothing lost: {faults['passed']}",
        f"hostile inputs tried: {hostile['inputs_tried']:,} over {hostile['properties']} properties "
        f"({hostile['inputs_failed']} broke one); suite {hostile['passed']}/{hostile['tests']} passed",
        f"prompt injection checks: {injection['passed']}/{injection['tests']} passed (policy unchanged, "
        "outputs enveloped)",
        f"access checks: {access['passed']}/{access['tests']} passed",
        security_line(figures["security"]),
    ]


def security_line(security: dict[str, int]) -> str:
    return (
        f"security checks (sandbox, protected paths, secrets, shell attacks run for real): "
        f"{security['passed']}/{security['tests']} passed; shell corpus {security['corpus_deny']} deny, "
        f"{security['corpus_ask']} ask, {security['corpus_allow']} allow"
    )


def suites_healthy(figures: dict[str, Any]) -> bool:
    return all(part["tests"] > 0 and part["passed"] == part["tests"] for part in figures.values())
