"""``pydantic-lenient serve CONFIG.json``: the gateway (`pydantic_lenient.gateway`) under uvicorn.

The command binds the socket itself (so ``--port 0`` prints the port it got, and every worker
shares one listening socket), with ``TCP_NODELAY`` set on it: Linux copies it to each accepted
connection, which stock uvicorn does not set with more than one worker (a response written in two
parts would wait for a delayed ACK). The workers build the app from the config file's path in
``PYDANTIC_LENIENT_GATEWAY_CONFIG`` (`pydantic_lenient.gateway.app.app_from_environment`).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

from ._io import CommandError

__all__ = ("_serve",)

_FACTORY = "pydantic_lenient.gateway.app:app_from_environment"


def _serve(arguments: argparse.Namespace) -> int:
    try:
        import uvicorn

        from pydantic_lenient.gateway.app import AUTH_OPTIONS, CONFIG_VARIABLE, HOST_VARIABLE, _authenticator
        from pydantic_lenient.gateway.config import ConfigError, is_loopback, load_config
    except ImportError as error:
        raise CommandError(
            "serve needs uvicorn and starlette: pip install 'pydantic-lenient[gateway]'"
            f" (in a clone: pip install -e '.[gateway]') ({error})"
        ) from None
    try:
        config = load_config(arguments.config)
        host = arguments.host or config.gateway.host
        # An unreadable or short token, or an unreadable JWKS file, is one line now, not a worker's traceback.
        _authenticator(config)
        if not is_loopback(host) and not config.gateway.authenticated:
            raise CommandError(f"refusing to listen on {host} without auth: {AUTH_OPTIONS}")
    except ConfigError as error:
        raise CommandError(str(error)) from None
    if arguments.workers < 1:
        raise CommandError("--workers must be 1 or more")
    port = arguments.port if arguments.port is not None else config.gateway.port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        listener.bind((host.strip("[]"), port))
    except OSError as error:
        raise CommandError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    listener.listen(2048)
    listener.set_inheritable(True)
    os.environ[CONFIG_VARIABLE] = os.path.abspath(arguments.config)
    os.environ[HOST_VARIABLE] = host
    bound = listener.getsockname()[1]
    print(
        f"pydantic-lenient gateway on http://{host}:{bound} ({arguments.workers} worker(s))",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(
        _FACTORY,
        factory=True,
        fd=listener.fileno(),
        workers=arguments.workers,
        log_level=arguments.log_level,
        timeout_graceful_shutdown=5,
        server_header=False,
    )
    return 0
