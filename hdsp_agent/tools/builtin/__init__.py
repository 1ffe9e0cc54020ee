"""Built-in tools outside the notebook: files, search, shell, web and rules (Continue's names and parameters)."""

from __future__ import annotations

from typing import Any

from ..base import Tool
from .ls import ListDirectoryTool


def builtin_tools() -> list[Tool[Any]]:
    return [ListDirectoryTool()]
