"""API keys for small deployments: salted Argon2id hashes in an owner-only file.

`memorepair principals add NAME` makes a key `mrk_<id>_<secret>` (a random 8-byte id and
32 random bytes), prints it once and keeps only its Argon2id hash (argon2-cffi's
`PasswordHasher`, RFC 9106's low-memory profile: a salt per key, the parameters inside
the hash). The file (MEMOREPAIR_PRINCIPALS_FILE, by default `<state>/principals.json`) is
written 0600 through a temporary file and `os.replace`, under an exclusive lock, and
refused when another user owns it or others may read or write it.

The file also holds revocations: `principals revoke NAME` drops the principal's keys and
marks the name revoked, which refuses its JWTs too (`bearer.py`). The verifier re-reads
the file whenever it changes on disk, so a revocation holds from the next request on,
in every process.

A verification costs one Argon2id hash (about 0.1-0.2 s of one core here): the id picks
the one hash to check, and a key that verified once is remembered for the life of the
process as an HMAC under a random per-process key (never the key itself), so a client
pays the hash once. Verifications run one at a time, so keys that fail cannot take more
than one core.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memorepair.errors import ConfigError, InputError

PREFIX = "mrk_"
KEY = re.compile(r"^mrk_(?P<id>[0-9a-f]{16})_(?P<secret>[A-Za-z0-9_\-]{43})$")
FORMAT_VERSION = 1


@dataclass(frozen=True)
class KeyInfo:
    id: str
    added_at: str


@dataclass(frozen=True)
class PrincipalInfo:
    """A principal as `principals list` shows it: never a key or a hash."""

    name: str
    added_at: str
    added_by: str
    revoked_at: str | None
    keys: tuple[KeyInfo, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "added_at": self.added_at,
            "added_by": self.added_by,
            "revoked_at": self.revoked_at,
            "keys": [{"id": k.id, "added_at": k.added_at} for k in self.keys],
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _hasher() -> Any:
    from argon2 import PasswordHasher
    from argon2.profiles import RFC_9106_LOW_MEMORY

    return PasswordHasher.from_parameters(RFC_9106_LOW_MEMORY)


class KeyFile:
    """The principals file: add, list and revoke principals and their keys; verify a key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._hashing = threading.Lock()  # one Argon2 verification at a time
        self._seen: tuple[int, int, int] | None = None
        self._data: dict[str, Any] = {"version": FORMAT_VERSION, "principals": {}}
        self._verified: dict[tuple[str, str], bytes] = {}
        self._pepper = secrets.token_bytes(32)

    # ---- reading -------------------------------------------------------------------------
    def principals(self) -> list[PrincipalInfo]:
        data = self._current()
        return [_info(name, entry) for name, entry in sorted(data["principals"].items())]

    def revoked(self, name: str) -> bool:
        entry = self._current()["principals"].get(name)
        return bool(entry and entry.get("revoked_at"))

    def verify(self, key: str) -> str | None:
        """The principal a key belongs to, or None (malformed, unknown, revoked, wrong)."""
        match = KEY.fullmatch(key)
        if match is None:
            return None
        found = self._find(match["id"])
        if found is None:
            return None
        name, stored = found
        proof = hmac.new(self._pepper, key.encode(), hashlib.sha256).digest()
        remembered = self._verified.get((match["id"], stored))
        if remembered is not None:
            return name if hmac.compare_digest(remembered, proof) else None
        from argon2.exceptions import InvalidHashError, VerificationError

        with self._hashing:
            try:
                _hasher().verify(stored, key)
            except (VerificationError, InvalidHashError):
                return None
        self._verified[(match["id"], stored)] = proof
        return name

    def _find(self, key_id: str) -> tuple[str, str] | None:
        for name, entry in self._current()["principals"].items():
            if entry.get("revoked_at"):
                continue
            for key in entry.get("keys", []):
                if key["id"] == key_id:
                    return name, str(key["hash"])
        return None

    def _current(self) -> dict[str, Any]:
        """The file's content, re-read when it changed on disk (a revocation elsewhere)."""
        with self._lock:
            try:
                info = self.path.stat()
            except FileNotFoundError:
                self._seen = None
                self._data = {"version": FORMAT_VERSION, "principals": {}}
                return self._data
            seen = (info.st_ino, info.st_mtime_ns, info.st_size)
            if seen != self._seen:
                self._data = self._read()
                self._seen = seen
            return self._data

    def _read(self) -> dict[str, Any]:
        _check_private(self.path)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"principals file {self.path} is unreadable: {exc}") from exc
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise ConfigError(f"principals file {self.path} is not a version-1 principals file")
        return data

    # ---- changing ------------------------------------------------------------------------
    def add(self, name: str, *, by: str, another_key: bool = False) -> tuple[str, str]:
        """A new key for `name` (a new principal, or a revoked one re-admitted; with
        `another_key`, a further key of an active one): (key id, key). The key is shown
        to the caller once and is not kept."""
        key_id = secrets.token_hex(8)
        key = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        digest = _hasher().hash(key)
        with self._changing() as data:
            entry = data["principals"].get(name)
            active = entry is not None and not entry.get("revoked_at")
            if active and not another_key:
                raise InputError(
                    f"principal {name!r} already has a key; add --another-key to give it a "
                    "second one (e.g. to rotate), or revoke it first"
                )
            if entry is None or not active:
                entry = {"added_at": _now(), "added_by": by, "revoked_at": None, "keys": []}
                data["principals"][name] = entry
            entry["keys"].append({"id": key_id, "hash": digest, "added_at": _now()})
        return key_id, key

    def revoke(self, name: str, *, key_id: str | None = None) -> PrincipalInfo:
        """Revoke one key of `name`, or (no key id) the principal: all its keys go and its
        JWTs are refused from the next request on."""
        with self._changing() as data:
            entry = data["principals"].get(name)
            if entry is None:
                entry = {"added_at": _now(), "added_by": "", "revoked_at": None, "keys": []}
                data["principals"][name] = entry  # a JWT-only principal can be revoked too
            if key_id is None:
                entry["keys"] = []
                entry["revoked_at"] = entry.get("revoked_at") or _now()
            else:
                kept = [k for k in entry["keys"] if k["id"] != key_id]
                if len(kept) == len(entry["keys"]):
                    raise InputError(f"principal {name!r} has no key {key_id!r}")
                entry["keys"] = kept
            return _info(name, entry)

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, Any]]:
        """Read, change and atomically replace the file under an exclusive lock."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock_path = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = (
                self._read()
                if self.path.exists()
                else {"version": FORMAT_VERSION, "principals": {}}
            )
            yield data
            _write_private(self.path, data)
        finally:
            os.close(fd)
        with self._lock:
            self._seen = None


def _info(name: str, entry: dict[str, Any]) -> PrincipalInfo:
    keys = tuple(KeyInfo(k["id"], k["added_at"]) for k in entry.get("keys", []))
    return PrincipalInfo(
        name, entry.get("added_at", ""), entry.get("added_by", ""), entry.get("revoked_at"), keys
    )


def _check_private(path: Path) -> None:
    info = path.lstat()
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"principals file {path} is not a regular file")
    if info.st_uid != os.geteuid():
        raise ConfigError(
            f"principals file {path} belongs to another user (uid {info.st_uid}); it must be "
            "your own"
        )
    if info.st_mode & 0o077:
        raise ConfigError(
            f"principals file {path} is open to other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}); run `chmod 600 {path}`"
        )


def _write_private(path: Path, data: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
