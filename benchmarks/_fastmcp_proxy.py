"""FastMCP's proxy (`fastmcp.server.create_proxy`) served over Streamable HTTP by uvicorn, in front of
the remote upstream at URL (sent ``Authorization: Bearer TOKEN``): the peer `bench_gateway.py`
measures the gateway against. Prints ``port N`` on stderr once it listens on 127.0.0.1.

python benchmarks/_fastmcp_proxy.py URL TOKEN
"""

from __future__ import annotations

import socket
import sys

import uvicorn
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server import create_proxy


def main() -> None:
    url, token = sys.argv[1], sys.argv[2]
    proxy = create_proxy(StreamableHttpTransport(url, headers={"Authorization": f"Bearer {token}"}))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(2048)
    print(f"port {listener.getsockname()[1]}", file=sys.stderr, flush=True)
    config = uvicorn.Config(proxy.http_app(path="/mcp"), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[listener])


if __name__ == "__main__":
    main()
