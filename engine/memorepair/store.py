"""The only module that talks to Neo4j, and only through the named files in `cypher/`.

Reads go through `execute_query` routed to readers; multi-statement work (the barrier,
staging, publication) runs as one managed transaction function, which the driver retries
on transient errors, so every write in `cypher/` is written to be safe to run twice.
Driver errors are translated once, here, into the package's own errors.

On a cluster or Aura (`neo4j://`), a read routed to a follower may not yet hold a commit
the leader acknowledged. Every query and transaction of one Store therefore shares one
bookmark manager, so this process's reads are causally after its own writes (the
barrier included). Serving reads go to the writer by default (MEMOREPAIR_SERVING_READS,
docs/scaling.md); other processes chain themselves to a commit with `bookmarks()` and
`await_bookmarks()`.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TypeVar

import neo4j
from neo4j import GraphDatabase, ManagedTransaction, RoutingControl
from neo4j import exceptions as neo4j_errors

from memorepair import queries
from memorepair.errors import ConfigError, DatabaseError, InputError, MemoRepairError
from memorepair.queries import Query

T = TypeVar("T")
Row = dict[str, Any]

log = logging.getLogger(__name__)

#: Every constraint and index of `cypher/schema/`, each IF NOT EXISTS (`apply_schema`).
SCHEMA = tuple(queries.named(n) for n in queries.all_names() if n.startswith("schema/"))
SCHEMA_CONSTRAINTS = queries.named("store/schema_constraints")
PING = queries.named("store/ping")
#: The current version of each key, and the same with a write lock on each: recording,
#: the barrier and a correction's replacement all start from them.
HEADS = queries.named("store/heads")
LOCK_HEADS = queries.named("store/lock_heads")
SEARCH_INDEX_SYNCHRONOUS = queries.named("store/search_index_synchronous")
DROP_SEARCH_INDEX = queries.named("store/drop_search_index")
#: The vector index's statement, whose HNSW shape is a parameter (`VectorShape`).
VECTOR_INDEX = next(q for q in SCHEMA if q.name == "schema/index_artifact_embedding")
SHOW_VECTOR_INDEX = queries.named("store/show_vector_index")

#: Content bytes one write transaction holds at most (besides its rows): the server keeps
#: a transaction's changes on its heap. Imports and a repair's batches close at it.
TX_BYTES = 64 << 20

#: Constraints from `cypher/schema/` that writes rely on: without `head_key` a uid could
#: have two current versions, and without them every lookup by vid or key scans a label;
#: without `publish_lock_key` a barrier and a repair's batch writer creating a namespace's
#: publication lock at once could each create, and lock, a node of their own.
REQUIRED_CONSTRAINTS = ("artifact_vid", "event_key", "head_key", "publish_lock_key")


def _text(query: Query) -> str:
    """A loaded query file's text; anything else is refused (queries are never strings)."""
    if not isinstance(query, Query):
        raise MemoRepairError(f"queries are loaded files (queries.named), not {type(query)}")
    return query.text


class Tx:
    """A transaction handed to transaction functions: runs named queries only."""

    def __init__(self, tx: ManagedTransaction) -> None:
        self._tx = tx
        self._after_commit: list[Callable[[], None]] = []

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run `callback` once this attempt has committed (never for a retried attempt)."""
        self._after_commit.append(callback)

    def run(self, query: Query, **params: Any) -> list[Row]:
        result = self._tx.run(_text(query), query.params(params))
        # keys()+values(), not data(): our queries return maps and scalars only, and data()'s
        # recursive conversion was a third of the client's time on large cascades.
        return [dict(zip(record.keys(), record.values(), strict=True)) for record in result]


def rest(seconds: float, pace: float) -> None:
    """Pacing: after a write that took `seconds`, wait so that such writes take a `pace`
    share of the time (MEMOREPAIR_REPAIR_PACE; 1: no wait). A repair's batches then leave
    the server's cores to serving reads the rest of the time."""
    if pace < 1.0:
        time.sleep(seconds * (1.0 - pace) / pace)


class _Calls(threading.local):
    """The Store whose driver call runs on this thread (the driver retries in the caller's
    thread, so its retry log record is this Store's)."""

    store: Store | None = None


_CALLS = _Calls()
#: The driver's messages for a transaction it runs again after a transient error.
_RETRIED = ("Transaction failed and will be retried", "Auto-commit transaction failed")


class _RetryLog(logging.Filter):
    """Turns the driver's retry warnings into a count and a debug line.

    A deadlock between two writers (Neo4j aborts one, the driver runs it again) or a
    leader switch is routine and, retried, succeeds: its five-line WARNING looked like a
    failure in the middle of a repair. The Store counts it (`retried_transactions`, which
    `--json` reports show) and logs it at debug; a retry that fails in the end still
    raises, as before."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(_RETRIED):
            return True
        store = _CALLS.store
        if store is not None:
            store._count_retry()
        log.debug("the driver retried a transaction: %s", record.getMessage())
        return False


_RETRY_FILTER = _RetryLog()
logging.getLogger("neo4j.session").addFilter(_RETRY_FILTER)


def batched(values: Sequence[T], size: int) -> Iterator[list[T]]:
    """`values` in consecutive lists of at most `size` (the last may be shorter)."""
    for start in range(0, len(values), size):
        yield list(values[start : start + size])


#: A repair's first batch, in rows: its batches double from here up to the batch size, so
#: its writer starts after a short build and later batches commit seldom (`ramped`).
RAMP_FIRST = 2_500


def ramp(size: int, first: int = RAMP_FIRST) -> Iterator[int]:
    """Batch sizes: `first`, then twice as many, and so on up to `size`, then `size` on."""
    step = min(first, size)
    while True:
        yield step
        step = min(step * 2, size)


def ramped(values: Sequence[T], size: int, first: int = RAMP_FIRST) -> Iterator[list[T]]:
    """`values` in consecutive lists of the `ramp`'s sizes (the last may be shorter)."""
    start = 0
    for step in ramp(size, first):
        if start >= len(values):
            return
        yield list(values[start : start + step])
        start += step


#: Where serving reads go on a cluster: the writer, or any member (MEMOREPAIR_SERVING_READS).
ServingReads = Literal["writer", "any"]


@dataclass(frozen=True)
class VectorShape:
    """The vector index's HNSW graph (Lucene's): each vector keeps `m` links, chosen among
    the `ef_construction` nearest that its insertion's search found. Denser graphs hold
    more of the exact nearest within the same search width (docs/decisions.md, 19), and
    take longer to build. Fixed when the index is built: a change takes effect when it is
    built again (`memorepair reindex --compact`)."""

    m: int
    ef_construction: int

    def params(self) -> dict[str, int]:
        return {"m": self.m, "ef_construction": self.ef_construction}

    def __str__(self) -> str:
        return f"m {self.m}, ef_construction {self.ef_construction}"


@dataclass
class _Tally:
    """What a Store and its resized views count together."""

    writes: int = 0
    retried: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Store:
    """One Neo4j database through one driver, handed in with the few knobs it runs by."""

    def __init__(
        self,
        driver: neo4j.Driver,
        uri: str,
        *,
        database: str,
        batch_size: int,
        serving_reads: ServingReads,
        unreachable_hint: str,
    ) -> None:
        self.driver = driver
        self.uri = uri
        self.database = database
        #: Rows per statement and transaction for work that does not fit one (bounded
        #: server memory per transaction; MEMOREPAIR_BATCH_SIZE).
        self.batch_size = batch_size
        #: What to do when the server does not answer (said with the error).
        self.unreachable_hint = unreachable_hint
        self._schema_seen = False
        #: One per Store: every read carries the bookmarks of every write before it.
        self._bookmarks = GraphDatabase.bookmark_manager()
        self._serving_route = (
            RoutingControl.WRITE if serving_reads == "writer" else RoutingControl.READ
        )
        self._tally = _Tally()  # shared with every `resized` view of this Store

    @classmethod
    def open(
        cls,
        uri: str,
        auth: tuple[str, str] | None,
        *,
        database: str,
        batch_size: int,
        serving_reads: ServingReads,
        unreachable_hint: str,
    ) -> Store:
        """A driver on the server at `uri` (the API resolves which, and the password),
        checked to answer before it is handed out."""
        try:
            driver = GraphDatabase.driver(
                uri,
                auth=auth,
                max_connection_pool_size=50,
                # Planner hints (unknown label on an empty database...) are not errors;
                # they would only flood the operator's terminal.
                notifications_min_severity="OFF",
            )
        except (ValueError, neo4j_errors.ConfigurationError) as exc:
            raise ConfigError(f"NEO4J_URI {uri!r} is not usable: {exc}") from exc
        store = cls(
            driver,
            uri,
            database=database,
            batch_size=batch_size,
            serving_reads=serving_reads,
            unreachable_hint=unreachable_hint,
        )
        store.verify()
        return store

    def close(self) -> None:
        self.driver.close()

    def resized(self, batch_size: int) -> Store:
        """This Store with batches of `batch_size` rows: the same driver, bookmarks and
        tallies, so what either writes the other reads and counts. A repair writes its
        batches through one (MEMOREPAIR_REPAIR_BATCH): fewer, larger commits delay serving
        reads less than many small ones. Closing the original closes both."""
        if batch_size <= 0:
            raise InputError(f"a batch holds at least one row, not {batch_size}")
        view = copy.copy(self)
        view.batch_size = batch_size
        return view

    @property
    def writes(self) -> int:
        """Write statements and transactions this Store (or a resized view) has run:
        search awaits the eventually consistent full-text index only when this changed
        since it last did."""
        return self._tally.writes

    @writes.setter
    def writes(self, value: int) -> None:
        self._tally.writes = value

    @property
    def retried_transactions(self) -> int:
        """Transactions the driver ran again after a transient error (a deadlock, a leader
        switch) on this Store so far; each one succeeded or its error was raised."""
        return self._tally.retried

    def _count_retry(self) -> None:
        with self._tally.lock:
            self._tally.retried += 1

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---- running queries ------------------------------------------------------------
    def verify(self) -> str:
        """The server's version; a clear error when it is unreachable or refuses us."""
        with self._translated():
            info = self.driver.get_server_info()
            return str(info.agent)

    def apply_schema(self, vector: VectorShape) -> list[str]:
        """Create every constraint and index in `cypher/schema/` (each is IF NOT EXISTS),
        the vector index with the HNSW shape `vector` if it does not exist yet (an existing
        one keeps its own: `vector_shape()` tells, a rebuild changes it).

        A database set up by an earlier build has the full-text index updated inside each
        commit; it is dropped first, so the eventually consistent one replaces it.
        """
        if self.read(SEARCH_INDEX_SYNCHRONOUS)[0]["synchronous"]:
            self.write(DROP_SEARCH_INDEX)
        for query in SCHEMA:
            self.write(query, **(vector.params() if query is VECTOR_INDEX else {}))
        self._schema_seen = True
        return [query.name for query in SCHEMA]

    def vector_shape(self) -> VectorShape | None:
        """The HNSW shape the vector index was built with (None: there is no such index)."""
        rows = self.read(SHOW_VECTOR_INDEX)
        if not rows:
            return None
        config = rows[0]["config"] or {}
        return VectorShape(int(config["vector.hnsw.m"]), int(config["vector.hnsw.ef_construction"]))

    def require_schema(self) -> None:
        """Refuse to write memory into a database whose schema was never applied.

        Checked once per Store. A user who may not list constraints (an Enterprise role
        without SHOW CONSTRAINT) is trusted to have applied them.
        """
        if self._schema_seen:
            return
        try:
            names = set(self.read(SCHEMA_CONSTRAINTS)[0]["names"])
        except DatabaseError as exc:
            if isinstance(exc.__cause__, neo4j_errors.Forbidden):
                self._schema_seen = True
                return
            raise
        missing = [name for name in REQUIRED_CONSTRAINTS if name not in names]
        if missing:
            raise ConfigError(
                f"the database at {self.uri} lacks MemoRepair's constraints {missing}; apply "
                "the schema once per database: `memorepair schema apply` (from Python: "
                "MemoryStore.apply_schema())"
            )
        self._schema_seen = True

    def read(self, query: Query, **params: Any) -> list[Row]:
        return self._execute(query, params, RoutingControl.READ)

    def serve(self, query: Query, **params: Any) -> list[Row]:
        """A serving read (what agents read): on the writer when MEMOREPAIR_SERVING_READS
        is `writer`, so it sees every barrier committed before it, else on any member."""
        return self._execute(query, params, self._serving_route)

    def bookmarks(self) -> list[str]:
        """The bookmarks of everything this Store has committed or read (opaque strings),
        for a reader elsewhere to pass to its own `await_bookmarks`."""
        return sorted(self._bookmarks.get_bookmarks())

    def await_bookmarks(self, bookmarks: Sequence[str]) -> None:
        """Chain this Store's later reads after the commits `bookmarks` name, and wait
        until the serving member holds them (the server blocks the read until then)."""
        if isinstance(bookmarks, str):
            raise InputError("bookmarks are a list of strings (from bookmarks()), not one string")
        self._bookmarks.update_bookmarks([], list(bookmarks))
        self.serve(PING)

    def batched(self, values: Sequence[T]) -> Iterator[list[T]]:
        """`values` in batches of the store's batch size."""
        return batched(values, self.batch_size)

    def ramped(self, values: Sequence[T]) -> Iterator[list[T]]:
        """`values` in batches growing from `RAMP_FIRST` up to the store's batch size."""
        return ramped(values, self.batch_size)

    def read_batches(
        self, query: Query, param: str, values: Sequence[Any], **fixed: Any
    ) -> Iterator[list[Row]]:
        """`query` once per batch of `values` (passed as `param`), results in batch order.

        Two batches are read at once, so the caller decodes batch k while the server
        answers k+1 (each query runs on one server core).
        """
        chunks = list(self.batched(values))
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="memorepair-read") as pool:
            pending: deque[Future[list[Row]]] = deque()
            for chunk in chunks:
                pending.append(pool.submit(self.read, query, **fixed, **{param: chunk}))
                if len(pending) == 2:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()

    def write(self, query: Query, **params: Any) -> list[Row]:
        return self._execute(query, params, RoutingControl.WRITE)

    def write_unindexed(self, query: Query, **params: Any) -> list[Row]:
        """A write to nodes that neither search index holds (use counts, exposure
        records): it leaves `writes` as it was, so the next search does not await the
        full-text index for it (a round trip, every use flush)."""
        return self._execute(query, params, RoutingControl.WRITE, counted=False)

    def transaction(self, work: Callable[[Tx], T]) -> T:
        """Run `work` as one managed write transaction (retried on transient errors)."""
        attempts: list[Tx] = []

        def attempt(tx: ManagedTransaction) -> T:
            attempts.append(Tx(tx))
            return work(attempts[-1])

        try:
            with self._translated(), self._session() as session:
                result = session.execute_write(attempt)
        finally:
            self.writes += 1  # after the commit: a search that starts later awaits it
        for callback in attempts[-1]._after_commit:  # the last attempt is the one that committed
            callback()
        return result

    def autocommit(self, query: Query, **params: Any) -> None:
        """For `CALL { } IN TRANSACTIONS` statements, which only run in auto-commit."""
        try:
            with self._translated(), self._session() as session:
                session.run(_text(query), query.params(params)).consume()
        finally:
            self.writes += 1

    def read_capped(self, query: Query, timeout_s: float, **params: Any) -> list[Row]:
        """A read the server abandons after `timeout_s` (benchmarks of deliberately slow
        baselines); the server's timeout error surfaces as `DatabaseError`."""
        with self._translated(), self._session() as session:
            result = session.run(neo4j.Query(_text(query), timeout=timeout_s), query.params(params))
            return [dict(zip(record.keys(), record.values(), strict=True)) for record in result]

    def explain(self, query: Query, params: Mapping[str, Any]) -> dict[str, Any]:
        """The planner's plan for a query file (tests check reach queries stay linear)."""
        text = "EXPLAIN " + _text(query)
        with self._translated(), self._session() as session:
            summary = session.run(text, query.params(params)).consume()
        return dict(summary.plan or {})

    def _session(self) -> neo4j.Session:
        return self.driver.session(database=self.database, bookmark_manager=self._bookmarks)

    def _execute(
        self,
        query: Query,
        params: Mapping[str, Any],
        routing: RoutingControl,
        *,
        counted: bool = True,
    ) -> list[Row]:
        text = _text(query)
        if query.mode == "write" and routing is RoutingControl.READ:
            raise MemoRepairError(f"query {query.name} writes; it cannot be routed to readers")
        try:
            with self._translated():
                records, _, _ = self.driver.execute_query(
                    text,
                    query.params(params),
                    database_=self.database,
                    routing_=routing,
                    bookmark_manager_=self._bookmarks,
                )
        finally:
            if query.mode == "write" and counted:
                self.writes += 1  # after the commit: a search that starts later awaits it
        return [dict(zip(record.keys(), record.values(), strict=True)) for record in records]

    @contextmanager
    def _translated(self) -> Iterator[None]:
        outer, _CALLS.store = _CALLS.store, self  # whose retries the driver logs meanwhile
        try:
            yield
        except neo4j_errors.AuthError as exc:
            raise ConfigError(
                f"Neo4j at {self.uri} refused the credentials (NEO4J_USERNAME/NEO4J_PASSWORD); "
                "for the local server the password is in <state>/neo4j/password"
            ) from exc
        except neo4j_errors.ServiceUnavailable as exc:
            raise DatabaseError(
                f"Neo4j at {self.uri} is unreachable ({self.unreachable_hint})"
            ) from exc
        except neo4j_errors.ConstraintError as exc:
            raise InputError(f"the database refused a write: {exc.message}") from exc
        except neo4j_errors.Neo4jError as exc:
            raise DatabaseError(f"Neo4j error {exc.code}: {exc.message}") from exc
        except neo4j_errors.DriverError as exc:
            raise DatabaseError(f"Neo4j driver error: {exc}") from exc
        finally:
            _CALLS.store = outer


class WriteBehind:
    """Writes rows in batches of one query (`$rows`) on background threads while the
    caller builds the next.

    Execution alternates Python work (building successors) with server work (staging
    them); overlapping the two keeps a small machine's cores busy, and two batches in
    flight let the server run two transactions at once (each runs on one core). `add`
    queues a row and hands each full batch over; at most `in_flight` batches are pending,
    so handing one over first waits for the oldest and re-raises its error: a failure stops
    the caller within `in_flight` batches and memory stays bounded. Batches in flight may
    commit in any order: use this only for writes keyed by id whose order does not matter
    (staged successors, verdicts). Leaving the `with` block writes the last, partial batch
    and waits for every batch; after an error in the block it only waits. `prepare`, if
    given, completes each batch's rows on the writer thread before they are written
    (staging computes the successors' embeddings there, behind the builds).
    """

    def __init__(
        self,
        store: Store,
        query: Query,
        *,
        batch_size: int | None = None,
        in_flight: int = 2,
        prepare: Callable[[list[Row]], list[Row]] | None = None,
        **fixed: Any,
    ) -> None:
        self._store = store
        self._prepare = prepare
        self._query = query
        self._fixed = fixed
        self._size = batch_size or store.batch_size
        self._in_flight = in_flight
        self._rows: list[Row] = []
        self._pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="memorepair")
        self._pending: deque[Future[list[Row]]] = deque()

    def add(self, row: Row) -> bool:
        """Queue one row; True when it completed a batch, which was handed to the writers."""
        self._rows.append(row)
        if len(self._rows) < self._size:
            return False
        self._hand_over()
        return True

    def _hand_over(self) -> None:
        rows, self._rows = self._rows, []
        while len(self._pending) >= self._in_flight:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(self._write, rows))

    def _write(self, rows: list[Row]) -> list[Row]:
        if self._prepare is not None:
            rows = self._prepare(rows)
        return self._store.write(self._query, **self._fixed, rows=rows)

    def __enter__(self) -> WriteBehind:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            if error is None:
                if self._rows:
                    self._hand_over()
                while self._pending:
                    self._pending.popleft().result()
            else:  # the caller's error wins; the writes in flight still end
                for pending in self._pending:
                    pending.exception()
        finally:
            self._pool.shutdown(wait=True)
