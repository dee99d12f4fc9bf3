"""The gateway as an OAuth 2.1 resource server (issue 37, item 4; the MCP authorization spec): access
tokens signed by a real key pair and checked by PyJWT, keys from a JWKS file or from a JWKS served
on loopback, and the protected-resource metadata (RFC 9728). Nothing leaves this machine."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import http.server
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jwt")

import httpx2
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send

from pydantic_lenient.gateway import app
from pydantic_lenient.gateway import auth as auth_module
from pydantic_lenient.gateway.auth import METADATA_PATH, OAuthResource
from pydantic_lenient.gateway.config import ConfigError, OAuthSettings, config_from_document
from pydantic_lenient.gateway.security import Guard
from tests.local_http import serving

RESOURCE = "https://gateway.example.com"
ISSUER = "https://auth.example.com"
METADATA_URL = f"{RESOURCE}{METADATA_PATH}"

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())


def _jwk(private: Any, kid: str) -> dict[str, Any]:
    algorithm = (
        jwt.algorithms.ECAlgorithm if isinstance(private, ec.EllipticCurvePrivateKey) else jwt.algorithms.RSAAlgorithm
    )
    jwk: dict[str, Any] = algorithm.to_jwk(private.public_key(), as_dict=True)
    return {**jwk, "kid": kid, "use": "sig"}


JWKS = {"keys": [_jwk(KEY, "rsa-1"), _jwk(EC_KEY, "ec-1")]}


def _token(
    key: Any = KEY, kid: str = "rsa-1", algorithm: str = "RS256", headers: dict[str, Any] | None = None, **claims: Any
) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": RESOURCE, "sub": "user-1", "iat": now, "exp": now + 300, **claims}
    body = {name: value for name, value in body.items() if value is not None}
    encoded: str = jwt.encode(body, key, algorithm=algorithm, headers={"kid": kid, **(headers or {})})
    return encoded


def _hmac_signed(header: dict[str, Any], claims: dict[str, Any], secret: bytes) -> str:
    """A JWT signed with HMAC by hand: PyJWT refuses to sign one with a public key (algorithm confusion)."""

    def part(value: dict[str, Any]) -> bytes:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=")

    signed = part(header) + b"." + part(claims)
    signature = base64.urlsafe_b64encode(hmac.new(secret, signed, hashlib.sha256).digest()).rstrip(b"=")
    return (signed + b"." + signature).decode()


def _settings(tmp_path: Path, **options: Any) -> OAuthSettings:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(JWKS), encoding="utf-8")
    document = {"resource": RESOURCE, "issuer": ISSUER, "jwksFile": str(path), **options}
    return OAuthSettings.model_validate(document)


class _Ok:
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _answers(settings: OAuthSettings, authorizations: Sequence[str | None]) -> list[tuple[int, str]]:
    guard = Guard(
        _Ok(),
        authenticator=OAuthResource(settings),
        loopback_bind=True,
        allowed_hosts=(),
        allowed_origins=(),
        max_body_bytes=1024,
        max_concurrency=8,
    )

    async def run() -> list[tuple[int, str]]:
        transport = httpx2.ASGITransport(guard)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
            found = []
            for authorization in authorizations:
                headers = {} if authorization is None else {"authorization": authorization}
                answer = await client.post("/mcp", headers=headers)
                found.append((answer.status_code, answer.headers.get("www-authenticate", "")))
            return found

    return asyncio.run(run())


def test_a_valid_access_token_passes_and_every_other_is_refused_naming_the_metadata(tmp_path: Path) -> None:
    public_pem = KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    hs256_with_the_public_key = _hmac_signed(
        {"alg": "HS256", "typ": "JWT", "kid": "rsa-1"},
        {"iss": ISSUER, "aud": RESOURCE, "exp": int(time.time()) + 300},
        public_pem,
    )
    unsigned = jwt.encode({"iss": ISSUER, "aud": RESOURCE, "exp": int(time.time()) + 300}, "", algorithm="none")
    cases: dict[str, tuple[str | None, int, str]] = {
        "valid": (f"Bearer {_token()}", 200, ""),
        "EC key": (f"Bearer {_token(EC_KEY, 'ec-1', 'ES256')}", 200, ""),
        "scheme in any case": (f"bearer {_token()}", 200, ""),
        "no header": (None, 401, f'Bearer resource_metadata="{METADATA_URL}"'),
        "another scheme": (f"Basic {_token()}", 401, f'Bearer resource_metadata="{METADATA_URL}"'),
        "expired": (f"Bearer {_token(exp=int(time.time()) - 120)}", 401, "invalid_token"),
        "not yet valid": (f"Bearer {_token(nbf=int(time.time()) + 600)}", 401, "invalid_token"),
        "no expiry": (f"Bearer {_token(exp=None)}", 401, "invalid_token"),
        "another audience": (f"Bearer {_token(aud='https://other.example.com')}", 401, "invalid_token"),
        "another issuer": (f"Bearer {_token(iss='https://evil.example.com')}", 401, "invalid_token"),
        "another key, same kid": (f"Bearer {_token(OTHER_KEY)}", 401, "invalid_token"),
        "an unknown kid": (f"Bearer {_token(kid='rsa-9')}", 401, "invalid_token"),
        "alg none": (f"Bearer {unsigned}", 401, "invalid_token"),
        "HS256 keyed with the public key": (f"Bearer {hs256_with_the_public_key}", 401, "invalid_token"),
        "garbage": ("Bearer " + "x." * 5000, 401, "invalid_token"),
    }
    answers = _answers(_settings(tmp_path), [authorization for authorization, _, _ in cases.values()])
    for (name, (_, status, challenge)), (got_status, got_challenge) in zip(cases.items(), answers, strict=True):
        assert got_status == status, name
        assert challenge in got_challenge, name
        if status == 401:
            assert f'resource_metadata="{METADATA_URL}"' in got_challenge, name


def test_a_required_scope_is_checked_in_either_claim(tmp_path: Path) -> None:
    settings = _settings(tmp_path, requiredScopes=["mcp:tools"])
    answers = _answers(
        settings,
        [
            f"Bearer {_token(scope='openid mcp:tools')}",
            f"Bearer {_token(scp=['mcp:tools'])}",
            f"Bearer {_token(scope='openid')}",
            f"Bearer {_token()}",
        ],
    )
    assert [status for status, _ in answers] == [200, 200, 403, 403]
    assert answers[2][1] == (
        f'Bearer error="insufficient_scope", scope="mcp:tools", resource_metadata="{METADATA_URL}"'
    )


@contextlib.contextmanager
def _jwks_server(document: dict[str, Any]) -> Iterator[tuple[str, list[int]]]:
    """A JWKS served on loopback, counting its fetches."""
    fetches: list[int] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetches.append(1)
            body = json.dumps(document).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    with serving(Handler) as url:
        yield f"{url}/jwks.json", fetches


def test_keys_are_fetched_from_the_jwks_uri_once_and_a_fetch_that_fails_is_503() -> None:
    with _jwks_server(JWKS) as (uri, fetches):
        settings = OAuthSettings.model_validate({"resource": RESOURCE, "issuer": ISSUER, "jwksUri": uri})
        made_up = [f"Bearer {_token(kid=f'made-up-{index}')}" for index in range(20)]
        answers = _answers(settings, [f"Bearer {_token()}"] * 3 + [f"Bearer {_token(OTHER_KEY)}", *made_up])
        assert [status for status, _ in answers] == [200, 200, 200, 401] + [401] * 20
        # The set once, then once more for the first kid it lacks (a rotation?): 20 made-up kids fetch no more.
        assert len(fetches) == 2
    closed = OAuthSettings.model_validate({"resource": RESOURCE, "issuer": ISSUER, "jwksUri": uri})
    assert [status for status, _ in _answers(closed, [f"Bearer {_token()}"])] == [503]


def test_a_key_the_issuer_rotates_in_is_found_by_fetching_the_set_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth_module, "_REFRESH_GAP", 0.0)
    document: dict[str, Any] = {"keys": [_jwk(KEY, "rsa-1")]}
    with _jwks_server(document) as (uri, fetches):
        settings = OAuthSettings.model_validate({"resource": RESOURCE, "issuer": ISSUER, "jwksUri": uri})
        resource = OAuthResource(settings)

        async def statuses() -> list[int | None]:
            found = []
            for token in (_token(), _token(OTHER_KEY, "rsa-2")):
                refusal = await resource.refusal(f"Bearer {token}".encode())
                found.append(None if refusal is None else refusal[0])
            document["keys"].append(_jwk(OTHER_KEY, "rsa-2"))  # the issuer rotates a key in
            refusal = await resource.refusal(f"Bearer {_token(OTHER_KEY, 'rsa-2')}".encode())
            return [*found, None if refusal is None else refusal[0]]

        assert asyncio.run(statuses()) == [None, 401, None]
        assert len(fetches) == 3


def _config(tmp_path: Path, **oauth: Any) -> Any:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(JWKS), encoding="utf-8")
    return config_from_document(
        {
            "mcpServers": {"mail": {"command": "python", "args": ["examples/mcp_server.py"]}},
            "gateway": {
                "host": "0.0.0.0",
                "oauth": {"resource": RESOURCE, "issuer": ISSUER, "jwksFile": str(path), **oauth},
            },
        }
    )


def test_the_metadata_is_served_without_a_token_and_a_wide_bind_with_oauth_is_allowed(tmp_path: Path) -> None:
    client = TestClient(app(_config(tmp_path, requiredScopes=["mcp:tools"])), base_url="http://127.0.0.1:8765")
    expected = {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp:tools"],
    }
    for path in (METADATA_PATH, f"{METADATA_PATH}/servers/mail/mcp"):
        answer = client.get(path)
        assert (answer.status_code, answer.json()) == (200, expected), path
    refused = client.post("/servers/mail/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == f'Bearer resource_metadata="{METADATA_URL}"'


@pytest.mark.parametrize(
    ("oauth", "message"),
    [
        ({"algorithms": ["HS256"]}, "algorithms must be some of"),
        ({"algorithms": []}, "algorithms must be some of"),
        ({"jwksUri": "https://auth.example.com/jwks"}, "give jwksUri or jwksFile"),
        ({"jwksFile": None}, "give jwksUri or jwksFile"),
        ({"issuer": "http://auth.example.com"}, "must be an https:// URL"),
        ({"resource": "gateway.example.com"}, "must be an https:// URL"),
    ],
)
def test_an_oauth_setting_that_cannot_be_safe_is_one_line(tmp_path: Path, oauth: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _config(tmp_path, **oauth)


def test_a_token_and_oauth_together_are_refused(tmp_path: Path) -> None:
    document = {
        "mcpServers": {"mail": {"command": "python"}},
        "gateway": {
            "tokenEnv": "GATEWAY_TOKEN",
            "oauth": {"resource": RESOURCE, "issuer": ISSUER, "jwksFile": str(tmp_path / "jwks.json")},
        },
    }
    with pytest.raises(ConfigError, match="give a token or oauth, not both"):
        config_from_document(document)


def test_an_unreadable_jwks_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "jwks.json").write_text('{"keys": "not keys"}', encoding="utf-8")
    config = config_from_document(
        {
            "mcpServers": {"mail": {"command": "python"}},
            "gateway": {"oauth": {"resource": RESOURCE, "issuer": ISSUER, "jwksFile": str(tmp_path / "jwks.json")}},
        }
    )
    with pytest.raises(ConfigError, match="cannot read the JWKS file"):
        app(config)
