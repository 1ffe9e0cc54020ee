"""What inspect_variables runs in a Python kernel, and how its answer is shown to the model.

By default it lists data: modules, classes and functions are left out (their code is in the cells). The
introspection is one user expression: it runs silently (no execution count, no history, no output in the
notebook) and leaves nothing behind in the user's namespace, because the helper is defined in a scratch dict.
"""

from __future__ import annotations

import ast
import json
from typing import Any

MAX_VARIABLES = 100

# Runs inside the kernel. Only builtins and duck typing: pandas/numpy need not be installed.
_DESCRIBE = r"""
def describe(user_ns, wanted, limit):
    import json, types
    hidden = {"In", "Out", "exit", "quit", "get_ipython", "open"}
    code = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)
    names = list(wanted) if wanted else sorted(
        name for name, value in user_ns.items()
        if not name.startswith("_") and name not in hidden and not isinstance(value, code)
    )
    rows = []
    for name in names[:limit]:
        if name not in user_ns:
            rows.append({"name": name, "missing": True})
            continue
        value = user_ns[name]
        kind = type(value)
        row = {"name": name, "type": kind.__qualname__ if kind.__module__ == "builtins"
               else kind.__module__.split(".")[0] + "." + kind.__qualname__}
        if isinstance(value, type):
            rows.append(row)
            continue
        try:
            shape = getattr(value, "shape", None)
            if isinstance(shape, tuple):
                row["shape"] = [dim if isinstance(dim, int) else str(dim) for dim in shape]
            elif hasattr(kind, "__len__"):
                row["length"] = len(value)
            dtypes = getattr(value, "dtypes", None)
            if dtypes is not None and hasattr(value, "columns") and hasattr(dtypes, "items"):
                columns = list(dtypes.items())
                row["columns"] = [[str(column), str(dtype)] for column, dtype in columns[:50]]
                row["column_count"] = len(columns)
            elif getattr(value, "dtype", None) is not None:
                row["dtype"] = str(value.dtype)
            if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
                row["value"] = repr(value)[:80]
            elif callable(value):
                row["callable"] = True
        except Exception as error:
            row["error"] = type(error).__name__
        rows.append(row)
    return json.dumps({"variables": rows, "total": len(names)})
"""


def inspection_expression(names: list[str] | None) -> str:
    """A self-contained expression (for ``user_expressions``) whose value is the JSON description."""
    return (
        f"(lambda scratch: (exec({_DESCRIBE!r}, scratch), "
        f"scratch['describe'](globals(), {list(names or [])!r}, {MAX_VARIABLES}))[1])({{}})"
    )


class InspectionError(Exception):
    pass


def parse_inspection(result: dict[str, Any]) -> dict[str, Any]:
    """The JSON the expression returned, from its user_expressions entry (text/plain: the string's repr)."""
    if result.get("status") != "ok":
        raise InspectionError(f"{result.get('ename', 'error')}: {result.get('evalue', '')}")
    text = result.get("data", {}).get("text/plain", "")
    try:
        parsed: dict[str, Any] = json.loads(ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError) as error:
        raise InspectionError(f"unexpected answer from the kernel: {text[:200]}") from error
    return parsed


def _shape(dims: list[Any]) -> str:
    return "(" + ", ".join(str(dim) for dim in dims) + ("," if len(dims) == 1 else "") + ")"


def format_variables(described: dict[str, Any]) -> str:
    rows = described.get("variables", [])
    if not rows:
        return "No user variables are defined in the kernel."
    lines = []
    for row in rows:
        if row.get("missing"):
            lines.append(f"{row['name']}: not defined")
            continue
        facts = [row["type"]]
        if "shape" in row:
            facts.append(f"shape {_shape(row['shape'])}")
        if "length" in row:
            facts.append(f"len {row['length']}")
        if "dtype" in row:
            facts.append(f"dtype {row['dtype']}")
        if "value" in row:
            facts.append(f"= {row['value']}")
        line = f"{row['name']}: " + ", ".join(facts)
        if "columns" in row:
            shown = ", ".join(f"{column} ({dtype})" for column, dtype in row["columns"])
            more = row["column_count"] - len(row["columns"])
            line += f"\n    columns: {shown}" + (f" … +{more} more" if more > 0 else "")
        lines.append(line)
    total = described.get("total", len(rows))
    if total > len(rows):
        lines.append(f"[{total - len(rows)} more variables not shown; pass names to inspect specific ones]")
    return "\n".join(lines)
