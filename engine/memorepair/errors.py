"""One exception hierarchy, caught once by the CLI and turned into a one-line message.

Every message names the item at fault (which uid, which line, which field) and, where
it helps, what to do next: operators read these at 3 a.m.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import ValidationError


class MemoRepairError(Exception):
    """Base of every error MemoRepair raises on purpose."""


class ConfigError(MemoRepairError):
    """A setting is missing or malformed; raised at start, before any work."""


class InputError(MemoRepairError):
    """An import line, event file or API argument is invalid; nothing was written."""


class UnknownArtifactError(InputError):
    """A uid named by the caller does not exist (or is not live) in the namespace."""


class CycleError(InputError):
    """INFLUENCES edges would form a cycle; provenance must be a DAG."""


class DatabaseError(MemoRepairError):
    """Neo4j is unreachable or refused the work; the event stays resumable."""


class ServerError(MemoRepairError):
    """The local Neo4j launcher could not start, stop or find the server."""


class CascadeBusyError(MemoRepairError):
    """Another open repair event holds part of this cascade; retry after it completes."""


class EventStateError(MemoRepairError):
    """An event id was reused with different content, or a phase ran out of order."""


def describe_validation(
    exc: ValidationError, where: Callable[[Sequence[int | str]], str] | None = None
) -> str:
    """pydantic's errors as `field 'x': message`, without its 'Value error, ' prefix.

    The one format for bad input wherever it enters (memory lines, event files, API
    arguments, settings); `where` names the location another way (settings name the
    environment variable to fix instead of the field).
    """
    parts = []
    for err in exc.errors():
        message = str(err["msg"]).removeprefix("Value error, ")
        loc = tuple(err["loc"])
        if where is not None:
            parts.append(f"{where(loc)}: {message}")
        elif loc:
            parts.append(f"field '{'.'.join(str(p) for p in loc)}': {message}")
        else:
            parts.append(message)
    return "; ".join(parts)
