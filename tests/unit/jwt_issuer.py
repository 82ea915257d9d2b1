"""A JWT issuer on loopback for the tests: keys generated here, its JWKS served over HTTP.

`token()` mints a valid token; its arguments make each kind of bad one (expired, not yet
valid, another audience or issuer, unknown key); `unsigned()`, `hmac_with_public_key()`
and `tampered()` make the classic forgeries by hand (PyJWT refuses to make them).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer:
    """An OAuth issuer's signing side: an RSA and an EC key, JWKS at `jwks_url`."""

    def __init__(self, audience: str = "http://127.0.0.1/mcp") -> None:
        self.audience = audience
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.fetches = 0
        keys = [
            {**json.loads(RSAAlgorithm.to_jwk(self.rsa.public_key())), "kid": "rsa-1"},
            {**json.loads(ECAlgorithm.to_jwk(self.ec.public_key())), "kid": "ec-1"},
        ]
        keys[0].update(alg="RS256", use="sig")
        keys[1].update(alg="ES256", use="sig")
        body = json.dumps({"keys": keys}).encode()
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path != "/jwks.json":
                    self.send_error(404)
                    return
                issuer.fetches += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{port}"
        self.jwks_url = f"{self.url}/jwks.json"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Issuer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def claims(self, subject: str, **changes: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": self.audience,
            "sub": subject,
            "iat": now,
            "exp": now + 300,
            "scope": "memory",
        }
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def token(
        self, subject: str, *, alg: str = "RS256", kid: str | None = None, **changes: Any
    ) -> str:
        """A token for `subject`; `changes` set claims (None drops one)."""
        key = self.ec if alg.startswith("ES") else self.rsa
        kid = kid or ("ec-1" if alg.startswith("ES") else "rsa-1")
        claims = self.claims(subject, **changes)
        return jwt.encode(claims, key, algorithm=alg, headers={"kid": kid})

    def unsigned(self, sub: str) -> str:
        """`alg: none`: no signature at all."""
        header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": "rsa-1"}).encode())
        return f"{header}.{_b64(json.dumps(self.claims(sub)).encode())}."

    def hmac_with_public_key(self, sub: str) -> str:
        """HS256 keyed with the issuer's public key (which the verifier holds)."""
        public = self.rsa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).encode())
        payload = _b64(json.dumps(self.claims(sub)).encode())
        signature = hmac.new(public, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{_b64(signature)}"

    def tampered(self, sub: str, as_sub: str) -> str:
        """A valid token for `sub` whose payload was changed to say `as_sub`."""
        header, _, signature = self.token(sub).split(".")
        payload = _b64(json.dumps(self.claims(as_sub)).encode())
        return f"{header}.{payload}.{signature}"
