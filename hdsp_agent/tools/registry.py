"""The registry holds every runnable tool; a catalog is the subset offered to the model for one step."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .base import Tool, ToolContext
from .naming import is_valid_name

ToolFilter = Callable[[Tool[Any]], bool]


class DuplicateToolError(ValueError):
    pass


class ToolRegistry:
    """Name → tool. Registration order is kept: it is the order the model sees tools in."""

    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool[Any], *, replace: bool = False) -> None:
        if not is_valid_name(tool.name):
            raise ValueError(f"invalid tool name {tool.name!r}: use [A-Za-z0-9_-], at most 64 characters")
        if tool.name in self._tools and not replace:
            raise DuplicateToolError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(list(self._tools.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def catalog(
        self,
        ctx: ToolContext | None = None,
        *,
        include: ToolFilter | None = None,
        disabled: Iterable[str] = (),
    ) -> ToolCatalog:
        """The tools offered for one step: available in ``ctx``, not disabled, and passing ``include``."""
        excluded = set(disabled)
        chosen = [
            tool
            for tool in self._tools.values()
            if tool.name not in excluded
            and (include is None or include(tool))
            and (ctx is None or tool.is_available(ctx))
        ]
        return ToolCatalog(chosen)


class ToolCatalog:
    """An ordered, immutable set of tools for one step. A call outside it is refused.

    ``callable_by_name``: tools allowed in this step but not offered (their schemas are not sent, to save the
    model's context); a call to one by name runs like any other.
    """

    def __init__(self, tools: Iterable[Tool[Any]], callable_by_name: Iterable[Tool[Any]] = ()) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._hidden = {tool.name: tool for tool in callable_by_name if tool.name not in self._tools}

    def __contains__(self, name: object) -> bool:
        return name in self._tools or name in self._hidden

    def offers(self, name: str) -> bool:
        """Whether the tool's schema is sent to the model (not only callable by name)."""
        return name in self._tools

    def hidden_names(self) -> list[str]:
        return list(self._hidden)

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def without(self, names: Iterable[str]) -> ToolCatalog:
        dropped = set(names)
        return ToolCatalog(
            (tool for tool in self if tool.name not in dropped),
            (tool for name, tool in self._hidden.items() if name not in dropped),
        )

    def offering(self, names: Iterable[str]) -> ToolCatalog:
        """The same callable tools, also offering the named ones that were callable by name only, appended
        in the order given (the tools offered before keep their places and bytes)."""
        added = [self._hidden[name] for name in dict.fromkeys(names) if name in self._hidden]
        return ToolCatalog([*self, *added], self._hidden.values())

    def narrowed(self, offer: Callable[[Tool[Any]], bool]) -> ToolCatalog:
        """The same callable tools, offering only those ``offer`` accepts; the rest stay callable by name."""
        tools = list(self) + list(self._hidden.values())
        return ToolCatalog(
            (tool for tool in tools if offer(tool)), (tool for tool in tools if not offer(tool))
        )
