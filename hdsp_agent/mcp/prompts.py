"""MCP servers' prompts (``prompts/list``, ``prompts/get``): the sidebar offers each as a slash command,
``/mcp:<server>:<prompt>``, whose text becomes the user's message.

A prompt is a template the user picks, so getting one is the user's request, not the model's. Only servers
that may start without asking are asked (started before in this process, or allowed by a rule: the same
``McpManager.may_start`` as a turn's); listing prompts never starts a program the user has not approved.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..tools.base import ToolError
from ..user_text import user_text

if TYPE_CHECKING:
    from .client import McpConnection
    from .manager import McpManager

MAX_PROMPT_CHARS = 50_000


@dataclass
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass
class McpPrompt:
    server: str
    name: str
    description: str = ""
    arguments: list[PromptArgument] = field(default_factory=list)


async def list_prompts(manager: McpManager) -> tuple[list[McpPrompt], dict[str, str]]:
    """Every prompt of the servers that may start; per server that could not answer, why."""
    names = [name for name in manager.server_names() if manager.may_start(name)]
    answers = await asyncio.gather(*(_server_prompts(manager, name) for name in names))
    prompts: list[McpPrompt] = []
    problems: dict[str, str] = {}
    for name, (found, problem) in zip(names, answers, strict=True):
        prompts.extend(found)
        if problem:
            problems[name] = problem
    return prompts, problems


async def get_prompt(manager: McpManager, server: str, name: str, arguments: dict[str, str]) -> str:
    """The prompt's messages as one text; ``ToolError`` for an unknown server or one not started yet, or
    the server's refusal (a missing required argument, an unknown prompt)."""
    connection = _connection(manager, server)
    session = await connection.connect()
    try:
        result = await session.get_prompt(name, arguments or None)
    except Exception as error:  # the SDK raises MCPError for the server's refusal, OSError when it is gone
        raise ToolError(
            "E_MCP_ERROR", user_text("MCP server %1, prompt %2: %3", repr(server), repr(name), error)
        ) from None
    texts: list[str] = []
    for message in getattr(result, "messages", []):
        content = message.content
        text = getattr(content, "text", None)
        if text is None:  # an embedded resource's text; images and audio have no text to send
            text = getattr(getattr(content, "resource", None), "text", None)
        if text:
            texts.append(text)
    return "\n\n".join(texts)[:MAX_PROMPT_CHARS]


def _connection(manager: McpManager, server: str) -> McpConnection:
    connection = manager.connections.get(server)
    if connection is None:
        raise ToolError("E_TOOL_NOT_FOUND", user_text("no MCP server named %1", repr(server)))
    if not manager.may_start(server):
        raise ToolError(
            "E_MCP_ERROR",
            user_text("MCP server %1 is not started: start it from the MCP servers view", repr(server)),
        )
    manager.started.setdefault(server, connection.spec)
    return connection


async def _server_prompts(manager: McpManager, server: str) -> tuple[list[McpPrompt], str | None]:
    import mcp.types as types  # the SDK loads only when a server is configured

    try:
        session = await _connection(manager, server).connect()
        capabilities: Any = session.server_capabilities
        if capabilities is not None and getattr(capabilities, "prompts", None) is None:
            return [], None  # the server offers no prompts
        prompts: list[McpPrompt] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_prompts(params=params)
            for prompt in page.prompts:
                arguments = [
                    PromptArgument(arg.name, arg.description or "", bool(arg.required))
                    for arg in prompt.arguments or []
                ]
                prompts.append(McpPrompt(server, prompt.name, prompt.description or "", arguments))
            cursor = page.next_cursor
            if not cursor:
                return prompts, None
    except ToolError as error:
        return [], str(error.message)
    except Exception as error:  # one server's failure must not hide the others' prompts
        return [], f"{type(error).__name__}: {error}".splitlines()[0]
