"""Builders shared by the operator tests, and test-only tool back-ends.

The back-ends live in a plain module (not a test file) so that the chain sandbox can
rebuild them in its subprocess from their import path.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memorepair.model import (
    Arch,
    Artifact,
    EventType,
    FunctionSpec,
    Interface,
    Kind,
    Recipe,
    Visibility,
)
from memorepair.operators.base import Origin, RepairContext, Support


def sup(
    uid: str,
    content: str,
    *,
    version: int = 1,
    kind: Kind = Kind.RECORD,
    arch: Arch | None = None,
    meta: Mapping[str, Any] | None = None,
    origin: Origin = "retained",
) -> Support:
    return Support(uid, version, kind, arch, content, dict(meta or {}), origin)


def art(
    uid: str,
    content: str = "",
    *,
    kind: Kind = Kind.RECORD,
    arch: Arch | None = None,
    version: int = 1,
    recipe: Recipe | None = None,
    meta: Mapping[str, Any] | None = None,
    inputs: Sequence[str] = (),
    visibility: Visibility = Visibility.WITHDRAWN,
) -> Artifact:
    return Artifact(
        uid=uid,
        version=version,
        ns="default",
        kind=kind,
        arch=arch,
        content=content,
        recipe=recipe,
        meta=dict(meta or {}),
        visibility=visibility,
        inputs=list(inputs),
    )


def as_artifact(item: Support) -> Artifact:
    """An invalidated old version with the same content and meta as a support item."""
    return art(
        item.uid, item.content, kind=item.kind, arch=item.arch, meta=item.meta, version=item.version
    )


def ctx(
    artifact: Artifact,
    support: Iterable[Support],
    invalidated: Iterable[Artifact] = (),
    *,
    event: EventType = EventType.DELETE,
    interface: Interface | None = None,
    options: Mapping[str, Any] | None = None,
) -> RepairContext:
    return RepairContext(
        event_type=event,
        artifact=artifact,
        support=tuple(support),
        invalidated=tuple(invalidated),
        interface=interface,
        options=dict(options or {}),
    )


class SpinBackend:
    """A tool whose ``spin`` never returns (for the sandbox timeout test)."""

    name = "spin"

    def schema(self) -> Interface:
        return Interface(
            tool="spin",
            functions={"spin": FunctionSpec(), "noop": FunctionSpec()},
        )

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        if function == "spin":
            while True:
                pass
        return None


class HogBackend:
    """A tool whose ``hog`` allocates far beyond the sandbox's address-space limit."""

    name = "hog"

    def schema(self) -> Interface:
        return Interface(tool="hog", functions={"hog": FunctionSpec()})

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        return len(bytearray(8 << 30))


def upper_join(support: Sequence[Support], args: Mapping[str, Any], interface: Any) -> str:
    """A plugin executor (loaded through a fake entry point in the registry tests)."""
    return " ".join(s.content.upper() for s in support)


class EscapeBackend:
    """A tool that tries to get out of the sandbox: each function is one attempt.

    Every process it leaves behind runs ``sleep <tag>``, so a test can find it by its
    command line from outside the sandbox's PID namespace.
    """

    name = "escape"

    def schema(self) -> Interface:
        tag = FunctionSpec(params={"tag": "string"}, required=["tag"])
        return Interface(
            tool="escape",
            functions={
                "setsid_grandchild": tag,
                "daemon": tag,
                "fork_bomb": FunctionSpec(
                    params={"tag": "string", "hang": "boolean"}, required=["tag", "hang"]
                ),
                "connect": FunctionSpec(params={"port": "integer"}, required=["port"]),
                "write": FunctionSpec(params={"path": "string"}, required=["path"]),
            },
        )

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        return getattr(self, f"_{function}")(**args)

    @staticmethod
    def _sleeper(tag: str, *, new_session: bool) -> None:
        """Fork; the child (in a session of its own if asked) becomes ``sleep <tag>``."""
        if os.fork() == 0:
            if new_session:
                os.setsid()
            os.execv("/bin/sleep", ["sleep", tag])

    def _setsid_grandchild(self, tag: str) -> None:
        if os.fork() == 0:  # the child starts a grandchild in a new session, then exits
            self._sleeper(tag, new_session=True)
            os._exit(0)
        os.wait()
        time.sleep(3600)  # and the step itself never ends: the timeout has to act

    def _daemon(self, tag: str) -> str:
        """A double-forked daemon that keeps stdout and stderr open; the call returns."""
        if os.fork() == 0:
            os.setsid()
            self._sleeper(tag, new_session=False)
            os._exit(0)
        os.wait()
        return "daemon started"

    def _fork_bomb(self, tag: str, hang: bool) -> dict[str, int]:
        forked = refused = 0
        while refused < 5 and forked < 10_000:
            try:
                self._sleeper(tag, new_session=True)
                forked += 1
            except OSError:
                refused += 1
        if hang:
            time.sleep(3600)
        return {"forked": forked, "refused": refused}

    def _connect(self, port: int) -> str:
        with socket.socket() as sock:
            sock.settimeout(2)
            try:
                sock.connect(("127.0.0.1", port))
            except OSError as exc:
                return f"refused: {exc}"
        return "connected"

    def _write(self, path: str) -> str:
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("written from the sandbox\n")
        except OSError as exc:
            return f"refused: {exc}"
        return "written"
