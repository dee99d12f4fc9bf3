"""Tests of `pydantic_lenient.adapters`: the MCP SDKs' servers and clients."""
