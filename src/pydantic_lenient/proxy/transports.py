"""Which upstream transport serves an address: the one place that picks among them.

`UpstreamSpec` says where the upstream is (a command, or a URL with its headers); `open_upstream`
makes the `pydantic_lenient.proxy.upstream.Upstream` for it, loading only that transport's module
(``remote`` needs httpx2, the ``proxy`` extra; ``child`` the standard library only). Compare
FastMCP's ``infer_transport``: a new transport is one module and one branch here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .remote import HttpUpstream
    from .upstream import Upstream

__all__ = ("UpstreamSpec", "http_upstream", "open_upstream")


@dataclass(frozen=True)
class UpstreamSpec:
    """Where the upstream is: a ``command`` to start as a child process speaking MCP's stdio, or a
    ``url`` to reach over Streamable HTTP, sent ``headers`` (for auth) with each request.

    >>> UpstreamSpec(("python", "server.py")).command
    ('python', 'server.py')
    >>> UpstreamSpec(url="https://example.com/mcp", headers=(("authorization", "Bearer x"),)).url
    'https://example.com/mcp'
    """

    command: Sequence[str] = ()
    url: str | None = None
    headers: Sequence[tuple[str, str]] = ()

    def __post_init__(self) -> None:
        if bool(self.command) == (self.url is not None):
            raise ValueError("give an upstream command or a url, not both")
        if self.headers and self.url is None:
            raise ValueError("headers go to a url, not to a command")
        from .addresses import header_problem, url_problem  # the standard library only

        problem = url_problem(self.url) if self.url is not None else None
        problem = problem or next(filter(None, (header_problem(*header) for header in self.headers)), None)
        if problem is not None:  # one line that never holds the URL or a header's value
            raise ValueError(problem)
        object.__setattr__(self, "command", tuple(self.command))
        object.__setattr__(self, "headers", tuple(self.headers))


def open_upstream(spec: UpstreamSpec) -> Upstream:
    """The upstream ``spec`` names, not started yet: the one place that picks a transport."""
    if spec.url is not None:
        return http_upstream()(spec.url, spec.headers)
    from .child import ChildUpstream  # the standard library only: it starts before pydantic loads

    return ChildUpstream(spec.command)


def http_upstream() -> type[HttpUpstream]:
    """The remote upstream's class, or an ImportError that says what to install: it needs httpx2
    (the ``proxy`` extra), and a stdio upstream does not."""
    try:
        from .remote import HttpUpstream
    except ImportError as error:
        raise ImportError(
            "a remote upstream (--url) needs httpx2: pip install 'pydantic-lenient[proxy]'"
            f" (in a clone: pip install -e '.[proxy]') ({error})"
        ) from None
    return HttpUpstream
