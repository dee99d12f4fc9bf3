"""The gateway's configuration: the ``mcpServers`` document hosts already use, plus the gateway's own.

```json
{
  "mcpServers": {
    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]},
    "issues": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ..."},
               "rules": "rules.json", "style": "any-of", "logDir": "logs/issues"}
  },
  "gateway": {"host": "127.0.0.1", "port": 8765, "tokenFile": "token.txt"}
}
```

A server is a ``command`` (with ``args`` and ``env``) started as a stdio child, or a ``url`` (with
``headers``) reached over Streamable HTTP; ``rules``, ``style`` and ``logDir`` are the proxy's
``--rules``, ``--style`` and ``--log-dir``. Host files carry a ``type`` (``stdio``, ``http``,
``streamable-http``), checked against the rest; ``sessions`` is the gateway's own (``per-client``:
an upstream connection for each handshake-era client session). Other members hosts add are refused, so a
typing mistake is one clear line, not a setting silently ignored. No error quotes a value: ``env``
and ``headers`` hold credentials.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from pydantic_lenient.schema.styles import DEFAULT_STYLE, STYLES, Style

__all__ = (
    "ConfigError",
    "GatewayConfig",
    "GatewaySettings",
    "RateLimits",
    "ServerConfig",
    "is_loopback",
    "load_config",
)

_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # a path segment and a tool-name prefix, as is
_REMOTE_TYPES = ("http", "streamable-http", "streamableHttp")


class ConfigError(Exception):
    """The configuration cannot be used: one line, naming where and why, never a value."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True)


class ServerConfig(_Model):
    """One upstream server: ``command``/``args``/``env`` (stdio) or ``url``/``headers`` (Streamable HTTP)."""

    type: Literal["stdio", "http", "streamable-http", "streamableHttp"] | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    rules: str | None = None
    style: Style = DEFAULT_STYLE
    log_dir: str | None = None
    sessions: Literal["shared", "per-client"] = "shared"
    """``shared``: every client of a worker and era on one upstream connection, stateless. ``per-client``:
    each handshake-era (2025-11-25 and older) client session gets an upstream connection of its own
    (a stdio process, or a remote session), so the server's own requests (elicitation, sampling,
    roots) and its notifications reach that client; a load balancer must then route on
    ``Mcp-Session-Id`` (docs/gateway.md, "Sessions of their own")."""

    @field_validator("style", mode="before")
    @classmethod
    def _known_style(cls, style: object) -> object:
        if style not in STYLES:  # the one list, whatever styles it grows; one line naming them all
            raise ValueError(f"style must be one of {', '.join(STYLES)}")
        return style

    @model_validator(mode="after")
    def _one_transport(self) -> ServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give a command (stdio) or a url (Streamable HTTP), not both")
        if self.url is not None and (self.args or self.env or self.cwd is not None):
            raise ValueError("args, env and cwd go with a command, not with a url")
        if self.command is not None and self.headers:
            raise ValueError("headers go with a url, not with a command")
        if self.type is not None and (self.type == "stdio") != (self.command is not None):
            raise ValueError(f"type {self.type!r} does not match the {'command' if self.command else 'url'} given")
        if self.url is not None and not re.match(r"^https?://[^/?#]+", self.url):
            raise ValueError("url must be an http:// or https:// URL")
        return self

    @property
    def remote(self) -> bool:
        return self.url is not None


class RateLimits(_Model):
    """Requests a second each worker lets through: from one client address, and to one tool."""

    per_client: float | None = Field(None, gt=0)
    per_tool: float | None = Field(None, gt=0)


# Signature algorithms an access token may use: asymmetric only, so a key published in a JWKS can
# never serve as an HMAC secret (algorithm confusion), and never "none".
TOKEN_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


class OAuthSettings(_Model):
    """The gateway as an OAuth 2.1 resource server (the MCP authorization spec): each request carries
    an access token, a JWT its authorization server signed, for this ``resource``."""

    resource: str
    """The gateway's canonical URI (``https://gateway.example``): the audience a token must name
    (RFC 8707), and where its protected-resource metadata (RFC 9728) says it is."""
    issuer: str
    """The authorization server's issuer identifier: a token's ``iss``."""
    jwks_uri: str | None = None
    """Where the issuer publishes its signing keys (fetched when a key is first needed, then cached)."""
    jwks_file: str | None = None
    """Or a JWKS document on disk: the keys, pinned, with nothing fetched."""
    authorization_servers: tuple[str, ...] = ()
    """Listed in the metadata for clients to find (the issuer when none are given)."""
    required_scopes: tuple[str, ...] = ()
    """Scopes every token must carry (``scope`` or ``scp``); 403 ``insufficient_scope`` otherwise."""
    algorithms: tuple[str, ...] = ("RS256", "ES256")
    leeway: float = Field(30.0, ge=0, le=300)
    """Seconds of clock difference allowed on ``exp`` and ``nbf``."""

    @field_validator("resource", "issuer", "jwks_uri")
    @classmethod
    def _https_or_loopback(cls, value: str | None) -> str | None:
        if value is not None and not _secure_url(value):
            raise ValueError("must be an https:// URL (http:// only for a loopback host)")
        return value

    @field_validator("algorithms")
    @classmethod
    def _asymmetric(cls, algorithms: tuple[str, ...]) -> tuple[str, ...]:
        if not algorithms or not set(algorithms) <= set(TOKEN_ALGORITHMS):
            raise ValueError(f"algorithms must be some of {', '.join(TOKEN_ALGORITHMS)}")
        return algorithms

    @model_validator(mode="after")
    def _one_key_source(self) -> OAuthSettings:
        if (self.jwks_uri is None) == (self.jwks_file is None):
            raise ValueError("give jwksUri or jwksFile, one of them")
        return self


class GatewaySettings(_Model):
    """The gateway's own options: where it listens, who may call it, and its caps."""

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    token_file: str | None = None
    token_env: str | None = None
    oauth: OAuthSettings | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    max_concurrency: int = Field(512, ge=1)
    call_timeout: float = Field(300.0, gt=0)
    aggregate: bool = True
    max_sessions: int = Field(100, ge=1)
    """Client sessions of ``per-client`` servers each worker holds at once (each its own upstream)."""
    session_idle_seconds: float = Field(600.0, gt=0)
    """Seconds a ``per-client`` session may go without a request (and without an open stream) before
    its upstream is stopped; the client then initializes again."""
    rate_limits: RateLimits = RateLimits()

    @model_validator(mode="after")
    def _one_token_source(self) -> GatewaySettings:
        if self.token_file is not None and self.token_env is not None:
            raise ValueError("give tokenFile or tokenEnv, not both")
        if self.oauth is not None and (self.token_file is not None or self.token_env is not None):
            raise ValueError("give a token or oauth, not both")
        return self

    @property
    def authenticated(self) -> bool:
        """Whether every request must show a credential (a wider bind than loopback needs one)."""
        return self.token_file is not None or self.token_env is not None or self.oauth is not None


class GatewayConfig(_Model):
    """A whole configuration: the servers, each at ``/servers/NAME/mcp``, and the gateway's settings."""

    mcp_servers: dict[str, ServerConfig] = Field(alias="mcpServers", min_length=1)
    gateway: GatewaySettings = GatewaySettings()

    @field_validator("mcp_servers")
    @classmethod
    def _names(cls, servers: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        for name in servers:
            if not _SERVER_NAME.match(name):
                raise ValueError(f"server name {name[:64]!r} must be 1-64 letters, digits, '_' or '-'")
        return servers

    def token(self) -> str | None:
        """The bearer token clients must send, read from its file or variable (None: no auth)."""
        settings = self.gateway
        if settings.token_file is not None:
            try:
                token = Path(settings.token_file).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as error:
                raise ConfigError(f"cannot read the token file {settings.token_file}: {type(error).__name__}") from None
        elif settings.token_env is not None:
            token = os.environ.get(settings.token_env, "").strip()
        else:
            return None
        if len(token) < 16:
            raise ConfigError("the gateway's token must be at least 16 characters")
        return token


def load_config(path: str | os.PathLike[str]) -> GatewayConfig:
    """Read and check the configuration at ``path``; `ConfigError` (one line) when it cannot be used."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read the gateway config {path}: {type(error).__name__}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}: not JSON (line {error.lineno}, column {error.colno})") from None
    return config_from_document(document, str(path))


def config_from_document(document: object, where: str = "config") -> GatewayConfig:
    """`load_config` for a document already read."""
    try:
        return GatewayConfig.model_validate(document)
    except ValidationError as error:
        first = error.errors(include_input=False, include_url=False)[0]
        location = ".".join(str(part) for part in first["loc"]) or "(top level)"
        more = error.error_count() - 1
        suffix = f" (and {more} more)" if more else ""
        raise ConfigError(f"{where}: {location}: {first['msg']}{suffix}") from None


def _secure_url(value: str) -> bool:
    parts = urlsplit(value)
    if parts.scheme == "https" and parts.hostname:
        return True
    return parts.scheme == "http" and parts.hostname is not None and is_loopback(parts.hostname)


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` listens on this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
