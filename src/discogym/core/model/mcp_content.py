"""Tool results as MCP content, for everything in discogym that serves tools over MCP (the MCP server, and the
bridge an agent CLI reaches an episode's tools through). Needs the ``mcp`` extra."""

from typing import Any

import mcp_types as types

from discogym.core.model.tools import ToolImage, ToolResult

MAX_REQUEST_BYTES = 1 << 20  # an HTTP request body, or a tool call's arguments, larger than this is refused


def image_content(images: list[ToolImage]) -> list[types.ImageContent]:
    """Pictures as MCP image content."""
    return [types.ImageContent(data=image.data_base64, mime_type=image.media_type) for image in images]


def tool_result_content(result: ToolResult) -> types.CallToolResult:
    """What the agent may see of a result: its text and images (never ``data``, which is for scorers)."""
    content: list[Any] = [types.TextContent(text=result.text), *image_content(result.images)]
    return types.CallToolResult(content=content, is_error=not result.ok)
