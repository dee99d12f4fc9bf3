"""``pydantic-lenient proxy``'s host side over stdio: put any MCP server (any language) behind a lenient front.

The host speaks MCP's stdio framing (one JSON-RPC message per line) on this process's stdin and
stdout, whatever they are (`pydantic_lenient.proxy.streams`): stdout carries only JSON-RPC, and
everything else goes to stderr. `serve` opens the upstream (`pydantic_lenient.proxy.upstream`: a
child process, or a remote server over Streamable HTTP), makes the relay session between the two
(`pydantic_lenient.proxy.core`), and runs it to its exit code.

A child upstream is started first, with only the standard library loaded, so that pydantic, the
validators and the relay load while the server starts.

Faults: an upstream that cannot start is one line on stderr and exit code 2, at once; one that fails
mid-session is one line and exit code 1, every waiting request answered with a JSON-RPC error. A
client that closes stdin, SIGTERM, SIGINT or SIGHUP stop the upstream (for a child, the MCP
specification's stdio shutdown).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable

from .core import Proxy, ProxyOptions
from .streams import ClientError, Lines, client_input, client_output
from .transports import UpstreamSpec, open_upstream
from .upstream import StartError

__all__ = ("run_proxy", "serve")

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_CLOSE_WAIT = 2.0  # seconds what is left for stdout may take to drain at exit
_HOST_TRANSPORT = "pipe"  # OpenTelemetry's network.transport for stdio


async def serve(upstream: UpstreamSpec, options: ProxyOptions | None = None) -> int:
    """Serve MCP on this process's stdin/stdout in front of ``upstream`` with ``options``; returns
    the exit code: 0, 1 when the upstream failed mid-session, 2 when it could not be started or
    reached, or stdin or stdout cannot be used. A corrupt ``outcomes.json`` in the options'
    ``log_dir`` raises `pydantic_lenient.observe.logdir.LogDirError` (a child upstream, started
    first, is stopped again). Runs on asyncio.
    """
    options = options if options is not None else ProxyOptions()
    opened = open_upstream(upstream)  # a missing extra (httpx2 for a url) is an ImportError here
    stop_asked = asyncio.Event()
    if upstream.url is None:
        # Started first: a server takes longer to start than the rest of the proxy takes to load,
        # and the two overlap. Its output waits in the pipe until the session reads it; a signal
        # that comes meanwhile stops the session as soon as it begins.
        _on_stop_signals(stop_asked.set)
        try:
            await opened.start()
        except StartError as error:
            print(f"pydantic-lenient proxy: {error}", file=sys.stderr)
            _on_stop_signals(None)
            return 2
    try:
        proxy = Proxy(opened, options, host_transport=_HOST_TRANSPORT)
    except BaseException:  # a corrupt log directory, say: the upstream started early is stopped
        if upstream.url is None:
            await opened.stop()
            _on_stop_signals(None)
        raise
    return await _run(proxy, stop_asked)


async def _run(proxy: Proxy, stop_asked: asyncio.Event) -> int:
    """The session on stdin and stdout, to its exit code. ``stop_asked``: set by a signal that came
    before it began."""
    loop = asyncio.get_running_loop()
    try:
        client_out, writer = await client_output(loop, proxy.pause_upstream_output, lambda: proxy.finish(None))
    except ClientError as error:
        print(f"pydantic-lenient proxy: {error}", file=sys.stderr)
        await proxy.upstream.stop()  # a child may have been started already
        _on_stop_signals(None)
        return 2
    proxy.client_out = client_out
    # Before the upstream starts: a signal that comes while it starts must still stop it.
    _on_stop_signals(lambda: proxy.finish(None))
    asked = asyncio.ensure_future(stop_asked.wait())  # a signal may be set now, or still be on its way
    asked.add_done_callback(lambda waited: None if waited.cancelled() else proxy.finish(None))
    try:
        await proxy.start()
    except StartError as error:
        print(f"pydantic-lenient proxy: {error}", file=sys.stderr)
        client_out.close()
        asked.cancel()
        _on_stop_signals(None)
        return 2
    try:
        try:
            # Read the client only now, so no message arrives before there is somewhere to send it.
            proxy.client_in = await client_input(loop, Lines(proxy.client_lines, proxy.client_ended))
        except ClientError as error:
            proxy.finish(str(error))
        await proxy.done.wait()
    finally:
        asked.cancel()
        if proxy.client_in is not None:
            proxy.client_in.close()
        await proxy.close()
        client_out.close()
        if writer is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(writer.closed), _CLOSE_WAIT)
        _on_stop_signals(None)
    if proxy.failure is not None:
        print(f"pydantic-lenient proxy: {proxy.failure}", file=sys.stderr)
        return 1
    return 0


def _on_stop_signals(handler: Callable[[], object] | None) -> None:
    """Call ``handler`` on SIGTERM, SIGINT and SIGHUP, or (None) give them back their defaults."""
    loop = asyncio.get_running_loop()
    for number in _STOP_SIGNALS:
        if handler is None:
            loop.remove_signal_handler(number)
        else:
            loop.add_signal_handler(number, handler)


def run_proxy(upstream: UpstreamSpec, options: ProxyOptions | None = None) -> int:
    """`serve` on a new event loop (what the ``proxy`` command runs)."""
    return asyncio.run(serve(upstream, options))
