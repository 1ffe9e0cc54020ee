"""A tool of an MCP server as one of ours: ``{server}__{tool}``, its input schema, results as ``ToolOutput``.

The call passes our executor and policy like any tool: by default it asks (``PermissionKind.CUSTOM`` with the
full tool name as target); tools the server's ``autoApprove`` lists behave like read-only tools and run
without asking. The server's own annotations (``readOnlyHint``) are hints from a third party and are not
trusted for that.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp.types as types

from ..events import ToolProgressEvent
from ..tools.base import PermissionAction, PermissionKind, ToolContext, ToolError, ToolOutput
from ..tools.declared import PassThroughArgs, SchemaTool
from ..tools.jupyter.outputs import image_dimensions
from ..tools.naming import group_tool_name
from ..user_text import user_text
from .client import E_MCP_TOOL_ERROR, McpConnection

# The connection stops a call after the server's timeout without a result or progress; this only ends a call
# that keeps reporting progress for longer than anyone waits.
MAX_CALL_SECONDS = 3600.0


class McpTool(SchemaTool):
    """A tool of one MCP server. Build with ``mcp_tool``."""

    connection: McpConnection
    remote_name: str = ""
    # The server's own description, without our suffix (for the status report).
    remote_description: str = ""
    auto_approved: bool = False
    on_demand = True
    paging_hint = "ask the tool for less (a narrower query, a smaller page)"

    def time_limit(self, args: PassThroughArgs) -> float | None:
        return MAX_CALL_SECONDS

    def permission(self, args: PassThroughArgs, ctx: ToolContext) -> PermissionAction | None:
        action = (
            None
            if self.auto_approved
            else PermissionAction(
                PermissionKind.CUSTOM,
                self.name,
                f"MCP server {self.connection.name!r}, tool {self.remote_name!r}",
            )
        )
        # The arguments are checked against the server's schema first: a malformed call (often a tool
        # called by name from the mcp_tools index) is answered at once, the user is not asked about it.
        return self.guarded_action(args, action)

    async def run(self, args: PassThroughArgs, ctx: ToolContext) -> ToolOutput:
        def progress(done: float, total: float | None, message: str | None) -> None:
            amount = f"{done:g}/{total:g}" if total else f"{done:g}"
            ctx.emit(ToolProgressEvent(call_id=ctx.call_id, message=f"{message or 'working'} ({amount})"))

        result = await self.connection.call_tool(self.remote_name, self.arguments(args), on_progress=progress)
        return tool_output(result, self.name)


def mcp_tool(connection: McpConnection, remote: types.Tool) -> McpTool:
    spec = connection.spec
    name = group_tool_name(spec.name, remote.name)
    auto_approved = remote.name in spec.auto_approve or name in spec.auto_approve
    description = (remote.description or remote.title or remote.name).strip()
    return McpTool.create(
        name=name,
        description=f"{description}\n(From the MCP server {spec.name!r}.)",
        read_only=auto_approved,
        schema=dict(remote.input_schema),
        connection=connection,
        remote_name=remote.name,
        remote_description=description,
        auto_approved=auto_approved,
    )


def tool_output(result: types.CallToolResult, tool_name: str) -> ToolOutput:
    """Text for the model, images in ``details["images"]``; an ``isError`` result becomes a ``ToolError``."""
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for block in result.content:
        texts.append(_block_text(block, images))
    if not result.content and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    text = "\n".join(part for part in texts if part)
    if result.is_error:
        raise ToolError(
            E_MCP_TOOL_ERROR,
            text or f"{tool_name} reported an error without a message",
            user_text("Read the error; fix the arguments or try another way."),
        )
    details: dict[str, Any] = {"images": images} if images else {}
    if result.structured_content is not None:
        details["structured_content"] = result.structured_content
    return ToolOutput(content=text or "(the tool returned no content)", details=details)


def _block_text(block: Any, images: list[dict[str, Any]]) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        return _image(block.mime_type, block.data, images)
    if isinstance(block, types.AudioContent):
        return f"[audio: {block.mime_type}, {_decoded_size(block.data):,} bytes, not shown]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        mime = resource.mime_type or "application/octet-stream"
        if mime.startswith("image/"):
            return f"[resource {resource.uri}] " + _image(mime, resource.blob, images)
        return f"[resource {resource.uri}: {mime}, {_decoded_size(resource.blob):,} bytes, not shown]"
    if isinstance(block, types.ResourceLink):
        about = f" — {block.description}" if block.description else ""
        return f"[resource link {block.uri}: {block.name}{about}]"
    return f"[{getattr(block, 'type', type(block).__name__)} content, not shown]"


def _image(mime_type: str, data: str, images: list[dict[str, Any]]) -> str:
    try:
        raw = base64.b64decode(data, validate=False)
    except ValueError:
        raw = b""
    size = image_dimensions(raw)
    width, height = size if size else (None, None)
    images.append({"mime_type": mime_type, "data": data, "width": width, "height": height})
    shape = f", {width}x{height}" if size else ""
    return f"[image {len(images)}: {mime_type}{shape}, {len(raw):,} bytes]"


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4
