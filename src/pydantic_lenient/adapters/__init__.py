"""Adapters for the MCP SDKs, each behind its extra: `adapters.mcp` (the official SDK),
`adapters.fastmcp` (FastMCP) and `adapters.clients` (a client that repairs arguments).

Nothing is imported here, so that importing one adapter never needs the other SDK.
"""
