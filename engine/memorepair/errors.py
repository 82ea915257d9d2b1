"""One exception hierarchy, caught once by the CLI and turned into a one-line message.

Every message names the item at fault (which uid, which line, which field) and, where
it helps, what to do next: operators read these at 3 a.m.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only the type: the sandbox child imports this module and stays light
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


#: How many offending ids an error message names; the rest are counted, not listed.
SHOWN_IDS = 3
#: Longest id shown whole in a message (uids may be 200 characters, meta keys any).
_SHOWN_ID_CHARS = 80


def some(items: Iterable[object], noun: str, plural: str | None = None) -> str:
    """`items` for an error message, bounded whatever their number.

    "1 unknown root ('a')", "2 unknown roots ('a', 'b')", or "100,000 unknown roots (e.g.
    'a', 'b', 'c')": a message stays a line, not megabytes, when the input is large.
    """
    listed = list(items)
    count = len(listed)
    name = noun if count == 1 else plural or f"{noun}s"
    shown = ", ".join(_short(repr(item)) for item in listed[:SHOWN_IDS])
    if count <= SHOWN_IDS:
        return f"{count:,} {name} ({shown})"
    return f"{count:,} {name} (e.g. {shown})"


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN_ID_CHARS else text[: _SHOWN_ID_CHARS - 3] + "..."


def describe_validation(
    exc: ValidationError, where: Callable[[Sequence[int | str]], str] | None = None
) -> str:
    """pydantic's errors as `field 'x': message`, without its 'Value error, ' prefix.

    The one format for bad input wherever it enters (memory lines, event files, API
    arguments, settings); `where` names the location another way (settings name the
    environment variable to fix instead of the field). At most SHOWN_IDS problems are
    spelled out, then counted: a line with 100,000 bad inputs is still one short error.
    """
    errors = exc.errors()
    parts = []
    for err in errors[:SHOWN_IDS]:
        message = str(err["msg"]).removeprefix("Value error, ")
        loc = tuple(err["loc"])
        if where is not None:
            parts.append(f"{where(loc)}: {message}")
        elif loc:
            parts.append(f"field '{'.'.join(str(p) for p in loc)}': {message}")
        else:
            parts.append(message)
    if len(errors) > SHOWN_IDS:
        parts.append(f"and {len(errors) - SHOWN_IDS:,} more problems")
    return "; ".join(parts)


class EmbeddingError(MemoRepairError):
    """The embedder failed, or a query's model is not the one the namespace is embedded
    with (search never compares vectors of two models): `memorepair reindex` re-embeds."""


class AccessDeniedError(MemoRepairError):
    """The calling principal lacks the role an operation needs in a namespace; nothing
    was read or written. The message never depends on what the namespace holds."""


class AuthenticationError(MemoRepairError):
    """A credential could not be verified (bad, expired, revoked, or for another server)."""
