"""Adapters for the MCP SDKs, each behind its extra: `adapters.mcp` (the official SDK),
`adapters.fastmcp` (FastMCP) and `adapters.clients` (a client that repairs arguments); and the
one-line switches for agent frameworks (docs/frameworks.md): `adapters.pydantic_ai`,
`adapters.openai_agents`, `adapters.langchain`, `adapters.llama_index` and `adapters.google_adk`.

Nothing is imported here, so that importing one adapter never needs another's SDK or framework.
"""
