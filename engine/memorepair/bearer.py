"""Bearer tokens to principals: API keys from the principals file, or JWTs from an issuer.

`memorepair mcp --http` is an OAuth 2.1 resource server: the MCP SDK's bearer middleware
hands each request's token to `Authenticator.authenticate` (through the `TokenVerifier`
in `integrations/mcp.py`) and answers 401 with `WWW-Authenticate` when it returns None.

A token shaped like an API key (`mrk_...`) is checked against the principals file
(`credentials.KeyFile`). Anything else is taken for a JWT and validated with PyJWT against
the issuer's JWKS (`PyJWKClient`, which caches the key set and refreshes it at most once
per cooldown when an unknown `kid` shows up): the signature with the key the `kid`
names, an algorithm from the allow-list that is also that key's own (so `none`, and an
HMAC "signed" with a public key, never verify), `iss`, `aud`, `exp` (required), `nbf`
and `iat` with a small leeway. The principal is the configured claim (`sub` by default);
a principal revoked in the principals file is refused with a valid token too.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from memorepair.access import Principal
from memorepair.credentials import PREFIX, KeyFile
from memorepair.errors import ConfigError
from memorepair.model import PRINCIPAL_PATTERN

log = logging.getLogger(__name__)

#: Asymmetric algorithms only: a verifier holding only public keys cannot check an HMAC,
#: and accepting one is the "HMAC with the public key" attack.
ASYMMETRIC = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
DEFAULT_ALGORITHMS = ("RS256", "ES256", "EdDSA")


@dataclass(frozen=True)
class JwtConfig:
    """How JWTs of one issuer are validated (MEMOREPAIR_AUTH_*)."""

    issuer: str
    jwks_url: str
    audience: str
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    principal_claim: str = "sub"
    leeway_s: float = 30.0
    jwks_cache_s: float = 300.0

    def __post_init__(self) -> None:
        bad = [a for a in self.algorithms if a not in ASYMMETRIC]
        if bad or not self.algorithms:
            raise ConfigError(
                f"MEMOREPAIR_AUTH_ALGORITHMS: only asymmetric algorithms are accepted "
                f"({', '.join(ASYMMETRIC)}), got {', '.join(self.algorithms) or 'none'}"
            )
        require_tls(self.jwks_url, "MEMOREPAIR_AUTH_JWKS_URL")


@dataclass(frozen=True)
class Authenticated:
    """A verified token: who, with which scopes, until when, and its claims (JWT)."""

    principal: Principal
    scopes: tuple[str, ...] = ()
    expires_at: int | None = None
    claims: dict[str, Any] = field(default_factory=dict)


def require_tls(url: str, setting: str) -> None:
    """Keys and tokens travel over https, except to this machine (tests, a local IdP)."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return
    if parts.scheme == "http" and loopback(parts.hostname or ""):
        return
    raise ConfigError(f"{setting} must be an https:// URL (http:// only on loopback), got {url!r}")


def loopback(host: str) -> bool:
    """Whether a host name or address stays on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Authenticator:
    """Turns a bearer token into a principal, or None (bad, expired, revoked, foreign)."""

    def __init__(self, keys: KeyFile | None, jwt: JwtConfig | None) -> None:
        if keys is None and jwt is None:
            raise ConfigError("authentication needs API keys or a JWT issuer (or both)")
        self.keys = keys
        self.jwt = jwt
        self._jwks: Any = None
        if jwt is not None:
            from jwt import PyJWKClient

            self._jwks = PyJWKClient(
                jwt.jwks_url, cache_jwk_set=True, lifespan=jwt.jwks_cache_s, timeout=10
            )

    def authenticate(self, token: str) -> Authenticated | None:
        """The principal `token` proves (blocking: may fetch the JWKS)."""
        if token.startswith(PREFIX):
            return self._api_key(token)
        if self.jwt is None:
            return None
        return self._jwt(token, self.jwt)

    def _api_key(self, token: str) -> Authenticated | None:
        if self.keys is None:
            return None
        name = self.keys.verify(token)
        return None if name is None else Authenticated(Principal(name, "api-key"))

    def _jwt(self, token: str, config: JwtConfig) -> Authenticated | None:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
            alg = header.get("alg")
            if alg not in config.algorithms:
                return _refused(f"algorithm {alg!r} is not allowed")
            key = self._jwks.get_signing_key_from_jwt(token)
            if key.algorithm_name != alg or key.key_type == "oct":
                return _refused(f"algorithm {alg!r} does not match the key ({key.key_type})")
            claims = jwt.decode(
                token,
                key=key,
                algorithms=[alg],
                audience=config.audience,
                issuer=config.issuer,
                leeway=config.leeway_s,
                options={"require": ["exp", "iss", "aud", config.principal_claim]},
            )
        except (jwt.PyJWTError, ValueError) as exc:
            return _refused(f"{type(exc).__name__}: {exc}")
        return self._principal_of(claims, config)

    def _principal_of(self, claims: dict[str, Any], config: JwtConfig) -> Authenticated | None:
        name = claims.get(config.principal_claim)
        if not isinstance(name, str) or not re.fullmatch(PRINCIPAL_PATTERN, name):
            return _refused(f"claim {config.principal_claim!r} is not a usable principal name")
        if self.keys is not None and self.keys.revoked(name):
            return _refused(f"principal {name!r} is revoked")
        scope = claims.get("scope", claims.get("scp", ""))
        scopes = tuple(scope.split() if isinstance(scope, str) else scope or ())
        expires = claims.get("exp")
        return Authenticated(
            Principal(name, "jwt"),
            scopes=tuple(str(s) for s in scopes),
            expires_at=int(expires) if isinstance(expires, int | float) else None,
            claims={k: v for k, v in claims.items() if k in ("iss", "sub", "aud", "exp", "iat")},
        )


def _refused(why: str) -> Authenticated | None:
    """A refusal is logged for the operator (never the token) and answered 401."""
    log.info("bearer token refused: %s", why)
    return None
