"""Who may call the gateway: one shared bearer token, or OAuth 2.1 access tokens.

* `SharedToken`: ``Authorization: Bearer TOKEN``, compared in constant time (`hmac.compare_digest`).
* `OAuthResource`: the gateway as the resource server of the MCP authorization spec
  (2025-06-18 and later). A request carries an access token, a JWT that the authorization server
  signed; PyJWT checks its signature against the server's published keys (a JWKS, fetched when a
  key is first needed and cached, or a file), its issuer, its audience (the gateway's ``resource``:
  a token minted for another server is refused, RFC 8707) and its lifetime, and the gateway checks
  its scopes. The gateway publishes its protected-resource metadata (RFC 9728) at
  `METADATA_PATH`, and every 401 names it in ``WWW-Authenticate``, so a client can find the
  authorization server.

Neither ever puts a token, or anything read from one, in an answer or a log line.
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from .config import ConfigError, OAuthSettings

__all__ = ("KEY_LIFESPAN", "METADATA_PATH", "Authenticator", "OAuthResource", "Refusal", "SharedToken")

METADATA_PATH = "/.well-known/oauth-protected-resource"
"""Where the protected-resource metadata is served (and under it, for a resource with a path)."""

KEY_LIFESPAN = 300
"""Seconds a fetched key set is trusted before it is fetched again (a key the issuer drops goes then)."""

Refusal = tuple[int, str, list[tuple[bytes, bytes]]]
"""An answer instead of the request: status, a line of text, and headers."""

_BEARER = b"bearer "
_REFRESH_GAP = 5.0  # seconds between two fetches for a kid not in the key set


class Authenticator(Protocol):
    """What the `Guard` asks about each request but ``/healthz`` (and `public` paths)."""

    async def refusal(self, authorization: bytes) -> Refusal | None:
        """The answer for a request whose ``Authorization`` header is ``authorization`` (``b""``
        when it has none), or None when it may go on."""
        ...

    def public(self, path: str) -> bool:
        """Whether ``path`` is served without a credential."""
        ...


class SharedToken:
    """One bearer token, shared by every client."""

    def __init__(self, token: str) -> None:
        self.expected = f"Bearer {token}".encode()

    async def refusal(self, authorization: bytes) -> Refusal | None:
        if hmac.compare_digest(authorization, self.expected):
            return None
        return 401, "a bearer token is required", [(b"www-authenticate", b'Bearer realm="pydantic-lenient"')]

    def public(self, path: str) -> bool:
        return False


class OAuthResource:
    """Access tokens checked as the MCP authorization spec's resource server checks them."""

    def __init__(self, settings: OAuthSettings) -> None:
        try:
            import jwt
        except ImportError:  # pragma: no cover - the gateway extra brings it
            raise ConfigError(
                "oauth needs PyJWT: pip install 'pydantic-lenient[gateway]' (in a clone: pip install -e '.[gateway]')"
            ) from None
        self.jwt = jwt
        self.settings = settings
        self.metadata_url = _metadata_url(settings.resource)
        self.keys: Any = _key_set(settings.jwks_file) if settings.jwks_file is not None else None
        self.client: Any = (
            jwt.PyJWKClient(settings.jwks_uri, cache_jwk_set=True, lifespan=KEY_LIFESPAN, timeout=10)
            if settings.jwks_uri is not None
            else None
        )
        self.keys_until = 0.0  # when the fetched key set is old
        self.next_refresh = 0.0  # when a kid not in the set may make it fetch the set again

    def metadata(self) -> dict[str, Any]:
        """The protected-resource metadata document (RFC 9728)."""
        document: dict[str, Any] = {
            "resource": self.settings.resource,
            "authorization_servers": list(self.settings.authorization_servers or (self.settings.issuer,)),
            "bearer_methods_supported": ["header"],
        }
        if self.settings.required_scopes:
            document["scopes_supported"] = list(self.settings.required_scopes)
        return document

    def public(self, path: str) -> bool:
        return path == METADATA_PATH or path.startswith(METADATA_PATH + "/")

    async def refusal(self, authorization: bytes) -> Refusal | None:
        if authorization[: len(_BEARER)].lower() != _BEARER:
            return self._unauthorized(None, "an OAuth access token is required")
        token = authorization[len(_BEARER) :].decode("latin-1").strip()
        try:
            key = await self._key(token)
        except _KeysUnavailable:
            return 503, "the authorization server's keys cannot be fetched now", [(b"retry-after", b"5")]
        except self.jwt.PyJWTError:
            return self._unauthorized("invalid_token", "the access token is not valid")
        try:
            claims = self.jwt.decode(
                token,
                key,
                algorithms=list(self.settings.algorithms),
                audience=self.settings.resource,
                issuer=self.settings.issuer,
                leeway=self.settings.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except self.jwt.PyJWTError:
            return self._unauthorized("invalid_token", "the access token is not valid")
        missing = set(self.settings.required_scopes) - _scopes(claims)
        if missing:
            scope = " ".join(self.settings.required_scopes)
            challenge = f'Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{self.metadata_url}"'
            return 403, "the access token lacks a required scope", [(b"www-authenticate", challenge.encode())]
        return None

    async def _key(self, token: str) -> Any:
        """The key that signed ``token``, by its ``kid`` (or the one key there is). With a ``jwksUri``,
        the key set is fetched when it is older than `KEY_LIFESPAN`, and again at once for a ``kid``
        it lacks (the issuer may have rotated its keys), but not more than once every few seconds:
        made-up kids cannot make the gateway fetch on every request."""
        kid = self.jwt.get_unverified_header(token).get("kid")
        if self.client is not None:
            now = time.monotonic()
            if self.keys is None or now >= self.keys_until:
                await self._fetch(refresh=False)
            if self._find(kid) is None and now >= self.next_refresh:
                self.next_refresh = now + _REFRESH_GAP
                await self._fetch(refresh=True)
        key = self._find(kid)
        if key is None:
            raise self.jwt.InvalidTokenError("no single key matches the token")
        return key

    def _find(self, kid: Any) -> Any:
        if self.keys is None:
            return None
        keys = [key for key in self.keys.keys if kid is None or key.key_id == kid]
        return keys[0].key if len(keys) == 1 else None

    async def _fetch(self, *, refresh: bool) -> None:
        """The issuer's key set, fetched in a worker thread (PyJWT reads it with urllib). A fetch that
        fails keeps the keys already known; with none, the request gets 503."""
        import anyio.to_thread

        try:
            self.keys = await anyio.to_thread.run_sync(self.client.get_jwk_set, refresh)
        except self.jwt.PyJWKClientError:
            if self.keys is None:
                raise _KeysUnavailable from None
        else:
            self.keys_until = time.monotonic() + KEY_LIFESPAN

    def _unauthorized(self, error: str | None, text: str) -> Refusal:
        challenge = f'Bearer resource_metadata="{self.metadata_url}"'
        if error is not None:
            challenge += f', error="{error}"'
        return 401, text, [(b"www-authenticate", challenge.encode())]


class _KeysUnavailable(Exception):
    """The JWKS could not be fetched: not the client's fault."""


def _metadata_url(resource: str) -> str:
    """Where a client finds the metadata of ``resource``: `METADATA_PATH` inserted after its host."""
    scheme, _, rest = resource.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}{METADATA_PATH}{slash + path if path else ''}"


def _key_set(path: str) -> Any:
    import jwt

    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        return jwt.PyJWKSet.from_dict(document)
    except (OSError, UnicodeDecodeError, ValueError, jwt.PyJWTError) as error:
        raise ConfigError(f"cannot read the JWKS file {path}: {type(error).__name__}") from None


def _scopes(claims: Mapping[str, Any]) -> set[str]:
    """The scopes a token carries: ``scope`` (space-separated, RFC 9068) or ``scp`` (a list)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return set(scope.split())
    listed = claims.get("scp")
    if isinstance(listed, list):
        return {item for item in listed if isinstance(item, str)}
    return set()
