"""What the agent's runs did to a kernel's variables in one turn: created, changed, deleted.

Before the first run of a turn on a kernel and once more when the turn ends, one silent user expression
(no execution count, no history, nothing left in the namespace, as inspect_variables does) summarizes each
user variable: its type, shape or length, a short preview, and a fingerprint that changes when the value
does. Only the summary leaves the kernel: a fingerprint is a hash computed in the kernel, for values small
enough to hash cheaply; a larger value counts as changed only when its identity, shape or length does.
"""

from __future__ import annotations

import ast
import json
import uuid
from dataclasses import asdict, dataclass
from typing import Any

from .executions import ExecutionRecord, ExecutionRegistry

SNAPSHOT_WAIT_SECONDS = 10.0
MAX_VARIABLES = 300
MAX_CHANGES = 50

# Runs inside the kernel. Only builtins and duck typing: pandas/numpy need not be installed.
_SUMMARIZE = r"""
def summarize(user_ns, limit):
    import hashlib, json, reprlib, types
    hidden = {"In", "Out", "exit", "quit", "get_ipython", "open"}
    code = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)
    short = reprlib.Repr()
    short.maxstring, short.maxother, short.maxlist, short.maxdict = 60, 60, 6, 4
    small = (bool, int, float, complex, str, bytes, type(None))
    rows = {}
    names = sorted(
        n for n, v in user_ns.items() if not n.startswith("_") and n not in hidden and not isinstance(v, code)
    )
    for name in names[:limit]:
        value = user_ns[name]
        kind = type(value)
        module = kind.__module__
        prefix = "" if module == "builtins" else module.split(".")[0] + "."
        row = {"type": prefix + kind.__qualname__}
        fingerprint = [row["type"], id(value)]
        try:
            shape = getattr(value, "shape", None)
            if isinstance(shape, tuple):
                row["shape"] = [d if isinstance(d, int) else str(d) for d in shape]
            elif hasattr(kind, "__len__"):
                row["length"] = len(value)
            size = getattr(value, "size", None)
            if isinstance(value, small):
                row["preview"] = short.repr(value)
                fingerprint.append(hashlib.sha1(repr(value).encode()).hexdigest())
            elif isinstance(value, (list, tuple, dict, set, frozenset)) and len(value) <= 200:
                row["preview"] = short.repr(value)
                fingerprint.append(hashlib.sha1(repr(value).encode()).hexdigest())
            elif isinstance(size, int) and size <= 200000 and hasattr(value, "to_numpy"):
                columns = repr(list(getattr(value, "columns", []))).encode()
                fingerprint.append(hashlib.sha1(value.to_numpy().tobytes() + columns).hexdigest())
            elif isinstance(size, int) and size <= 200000 and hasattr(value, "tobytes"):
                fingerprint.append(hashlib.sha1(value.tobytes()).hexdigest())
            fingerprint.append(row.get("shape") or row.get("length"))
        except Exception as error:
            row["error"] = type(error).__name__
        row["fingerprint"] = hashlib.sha1(repr(fingerprint).encode()).hexdigest()[:16]
        rows[name] = row
    return json.dumps(rows)
"""


def snapshot_expression() -> str:
    return (
        f"(lambda scratch: (exec({_SUMMARIZE!r}, scratch), "
        f"scratch['summarize'](globals(), {MAX_VARIABLES}))[1])({{}})"
    )


@dataclass
class VariableChange:
    """One variable the turn's runs created, changed or deleted, as the review bar lists it."""

    name: str
    change: str  # "created" | "changed" | "deleted"
    type: str
    shape: list[Any] | None = None
    length: int | None = None
    preview: str | None = None


def diff_snapshots(before: dict[str, Any], after: dict[str, Any]) -> list[VariableChange]:
    changes: list[VariableChange] = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old is not None and new is not None and old.get("fingerprint") == new.get("fingerprint"):
            continue
        change = "created" if old is None else "deleted" if new is None else "changed"
        row = new if new is not None else old
        assert row is not None
        changes.append(
            VariableChange(name, change, row["type"], row.get("shape"), row.get("length"), row.get("preview"))
        )
    return changes[:MAX_CHANGES]


async def take_snapshot(
    executions: ExecutionRegistry, kernel_manager: Any, path: str, kernel_id: str
) -> dict[str, Any] | None:
    """The kernel's variable summaries, or None when the kernel did not answer in time (busy, dead)."""
    record = ExecutionRecord(
        handle=f"snapshot-{uuid.uuid4().hex[:8]}",
        path=path,
        kernel_id=kernel_id,
        code="",
        cell_id=None,
        reported=True,
    )
    executions.start(
        record,
        kernel_manager,
        silent=True,
        store_history=False,
        user_expressions={"rows": snapshot_expression()},
    )
    if not await record.wait(SNAPSHOT_WAIT_SECONDS):
        return None
    answer = record.user_expressions.get("rows", {})
    if answer.get("status") != "ok":
        return None
    try:
        rows: dict[str, Any] = json.loads(ast.literal_eval(answer.get("data", {}).get("text/plain", "")))
    except (ValueError, SyntaxError, TypeError):
        return None
    return rows


class KernelChanges:
    """Per conversation: the snapshot each kernel had before the turn's first run on it."""

    def __init__(self, executions: ExecutionRegistry) -> None:
        self.executions = executions
        self._before: dict[str, dict[str, tuple[str, Any, dict[str, Any]]]] = {}

    async def before_run(self, session_id: str, path: str, kernel_id: str, kernel_manager: Any) -> None:
        kernels = self._before.setdefault(session_id, {})
        # A kernel still busy with an earlier run would hold the first run of this turn behind the snapshot.
        if kernel_id in kernels or self.executions.active_on(kernel_id):
            return
        snapshot = await take_snapshot(self.executions, kernel_manager, path, kernel_id)
        if snapshot is not None:
            kernels[kernel_id] = (path, kernel_manager, snapshot)

    async def forget_session(self, session_id: str) -> None:
        """The conversation was deleted mid-turn: its snapshots (each kernel's variables) go."""
        self._before.pop(session_id, None)

    async def end_turn(self, session_id: str) -> dict[str, list[dict[str, Any]]]:
        """Each notebook's variable changes since the turn's first run on its kernel (nothing: {})."""
        changed: dict[str, list[dict[str, Any]]] = {}
        for kernel_id, (path, kernel_manager, before) in self._before.pop(session_id, {}).items():
            if self.executions.active_on(kernel_id):
                continue  # a cell still running: its changes are not done, and the turn must not wait on it
            try:
                after = await take_snapshot(self.executions, kernel_manager, path, kernel_id)
            except Exception:  # the kernel went away (shut down, restarted): nothing to compare with
                after = None
            if after is None:
                continue
            changes = diff_snapshots(before, after)
            if changes:
                changed[path] = [asdict(change) for change in changes]
        return changed
