"""The principals file: keys shown once and kept only as salted Argon2id hashes, an
owner-only file, revocation seen by every reader of the file."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from memorepair.credentials import KEY, KeyFile
from memorepair.errors import ConfigError, InputError


def test_a_key_is_kept_only_as_a_salted_hash(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "state" / "principals.json")
    key_id, key = keys.add("agent-7", by="root")
    shape = KEY.fullmatch(key)
    assert shape and shape["id"] == key_id
    text = keys.path.read_text()
    # the secret by the key's own pattern: it may hold "_" itself, so a split on "_"
    # could check a one-letter tail that any JSON text contains
    assert key not in text and shape["secret"] not in text
    stored = json.loads(text)["principals"]["agent-7"]["keys"][0]["hash"]
    assert stored.startswith("$argon2id$")
    _, second = keys.add("agent-8", by="root")
    hashes = [
        p["keys"][0]["hash"] for p in json.loads(keys.path.read_text())["principals"].values()
    ]
    assert len({h.split("$")[4] for h in hashes}) == 2  # a salt of its own per key
    assert stat.S_IMODE(keys.path.stat().st_mode) == 0o600
    assert keys.verify(key) == "agent-7" and keys.verify(second) == "agent-8"
    assert keys.verify(key) == "agent-7"  # remembered: the hash is paid once
    assert keys.verify(second.replace(second[-5:], "xxxxx")) is None


def test_revoke_a_key_or_the_principal(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "principals.json")
    first_id, first = keys.add("svc", by="root")
    with pytest.raises(InputError, match="already has a key"):
        keys.add("svc", by="root")
    _, second = keys.add("svc", by="root", another_key=True)
    keys.revoke("svc", key_id=first_id)
    assert keys.verify(first) is None and keys.verify(second) == "svc"
    with pytest.raises(InputError, match="no key"):
        keys.revoke("svc", key_id=first_id)
    info = keys.revoke("svc")
    assert info.revoked_at and info.keys == ()
    assert keys.verify(second) is None and keys.revoked("svc")
    _, third = keys.add("svc", by="root")  # re-admitted with a new key
    assert keys.verify(third) == "svc" and not keys.revoked("svc")
    listed = {p.name: p for p in keys.principals()}
    assert "hash" not in json.dumps(listed["svc"].as_dict())


def test_the_file_must_be_private_and_ours(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "principals.json")
    _, key = keys.add("svc", by="root")
    os.chmod(keys.path, 0o644)
    fresh = KeyFile(keys.path)
    with pytest.raises(ConfigError, match="chmod 600"):
        fresh.verify(key)
    os.chmod(keys.path, 0o600)
    if os.geteuid() == 0:  # only root can hand the file to another user
        os.chown(keys.path, 65534, 65534)
        with pytest.raises(ConfigError, match="another user"):
            KeyFile(keys.path).verify(key)
