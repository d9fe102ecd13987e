"""The MCP server: every suite's tools for any MCP client (``discogym mcp SUITE``); needs the ``mcp`` extra."""
