"""Bearer tokens to principals, against a real issuer on loopback (keys made here, JWKS
over HTTP) and a real principals file: every forgery and stale credential is refused."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from jwt_issuer import Issuer

from memorepair.bearer import Authenticator, JwtConfig
from memorepair.credentials import KeyFile
from memorepair.errors import ConfigError

AUDIENCE = "http://127.0.0.1:8765/mcp"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer(AUDIENCE) as running:
        yield running


@pytest.fixture
def keys(tmp_path: Path) -> KeyFile:
    return KeyFile(tmp_path / "principals.json")


@pytest.fixture
def auth(issuer: Issuer, keys: KeyFile) -> Authenticator:
    return Authenticator(keys, JwtConfig(issuer.url, issuer.jwks_url, AUDIENCE))


def test_valid_tokens_name_their_principal(auth: Authenticator, issuer: Issuer) -> None:
    for alg in ("RS256", "ES256"):
        found = auth.authenticate(issuer.token("agent-7", alg=alg))
        assert found is not None, alg
        assert found.principal.name == "agent-7" and found.principal.via == "jwt"
        assert found.scopes == ("memory",) and found.expires_at is not None


def test_forged_stale_and_foreign_tokens_are_refused(
    auth: Authenticator, issuer: Issuer, keys: KeyFile
) -> None:
    now = int(time.time())
    refused = {
        "expired": issuer.token("a", exp=now - 600, iat=now - 900),
        "not yet valid": issuer.token("a", nbf=now + 600),
        "wrong audience": issuer.token("a", aud="http://elsewhere.example/mcp"),
        "wrong issuer": issuer.token("a", iss="http://127.0.0.1:1"),
        "no expiry": issuer.token("a", exp=None),
        "no subject": issuer.token("a", sub=None),
        "alg none": issuer.unsigned("a"),
        "HMAC with the public key": issuer.hmac_with_public_key("a"),
        "tampered": issuer.tampered("a", as_sub="admin"),
        "unknown key": issuer.token("a", kid="rsa-9"),
        "alg not the key's": issuer.token("a", alg="RS384"),
        "garbage": "not.a.token",
        "unknown API key": "mrk_0123456789abcdef_" + "A" * 43,
    }
    for why, token in refused.items():
        assert auth.authenticate(token) is None, why
    keys.revoke("bob")
    assert auth.authenticate(issuer.token("bob")) is None  # a revoked principal's JWT
    assert auth.authenticate(issuer.token("carol")) is not None


def test_key_set_refetches_are_bounded(auth: Authenticator, issuer: Issuer) -> None:
    assert auth.authenticate(issuer.token("a")) is not None
    before = issuer.fetches
    for n in range(20):  # unknown key ids must not each fetch the key set
        assert auth.authenticate(issuer.token("a", kid=f"nope-{n}")) is None
    assert issuer.fetches - before <= 1


def test_api_keys_verify_until_revoked(auth: Authenticator, keys: KeyFile) -> None:
    key_id, key = keys.add("svc", by="root")
    found = auth.authenticate(key)
    assert found is not None and found.principal.name == "svc" and found.principal.via == "api-key"
    assert auth.authenticate(key[:-1] + ("B" if key[-1] != "B" else "C")) is None
    other = KeyFile(keys.path)  # another process's view of the same file
    other.revoke("svc", key_id=key_id)
    assert auth.authenticate(key) is None


def test_only_asymmetric_algorithms_and_tls_key_sets(issuer: Issuer) -> None:
    with pytest.raises(ConfigError, match="asymmetric"):
        JwtConfig(issuer.url, issuer.jwks_url, AUDIENCE, algorithms=("HS256",))
    with pytest.raises(ConfigError, match="asymmetric"):
        JwtConfig(issuer.url, issuer.jwks_url, AUDIENCE, algorithms=("none",))
    with pytest.raises(ConfigError, match="https"):
        JwtConfig(issuer.url, "http://idp.example.com/jwks.json", AUDIENCE)
