"""A relay that only copies bytes between its stdin/stdout and a child's: the floor for any Python proxy.

python benchmarks/_copy_relay.py COMMAND [ARG ...]

`bench_proxy.py` runs it beside the proxy, so the cost of one more Python process between client and
server (two more pipe hops, and an event loop waking for each) is measured in the same run as the
proxy's. It reads with ``loop.add_reader`` and writes with ``os.write``: no transports, no framing,
no parsing. A write the pipe does not take at once blocks, which is fine for a benchmark's small
messages and nothing else.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def _relay(command: list[str]) -> int:
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None
    assert child.stdout is not None
    loop = asyncio.get_running_loop()
    ended = asyncio.Event()
    upstream_in, upstream_out = child.stdin.fileno(), child.stdout.fileno()
    for fd in (0, upstream_out):
        os.set_blocking(fd, False)

    def copy(source: int, target: int) -> None:
        data = os.read(source, 256 * 1024)
        if not data:
            loop.remove_reader(source)
            ended.set()
            return
        _write_all(target, data)

    loop.add_reader(0, copy, 0, upstream_in)
    loop.add_reader(upstream_out, copy, upstream_out, 1)
    try:
        await ended.wait()
    finally:
        os.set_blocking(0, True)  # stdin may be shared with the shell that started the relay
    child.stdin.close()
    return child.wait()


if __name__ == "__main__":
    raise SystemExit(asyncio.run(_relay(sys.argv[1:])))
