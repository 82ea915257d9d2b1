"""The Python API for agent frameworks: one object per namespace, mirroring the CLI.

    from memorepair.api import open_store

    with open_store(ns="team-a") as memory:
        memory.record({"uid": "pref-1", "kind": "record", "content": "Prefers EUR."})
        memory.record({"uid": "sum-1", "kind": "summary", "content": "...",
                       "inputs": ["pref-1"]})
        report = memory.repair({"id": "gdpr-17", "type": "delete", "roots": ["pref-1"]})
        memory.retrieve(uid="sum-1")      # [] until a validated successor is republished

Every CLI command is a thin shell over a method here, so whatever an operator does at
the terminal a program can do too. Every operation passes the access check first
(`access.py`): a store acts as one principal (`open_store(principal=...)`, by default
the OS account, which owns every namespace), and `acting_as` gives a view of the same
store for another principal or session (the MCP server makes one per request).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO, Unpack

from memorepair import (
    access,
    audit,
    embedding,
    events,
    importing,
    recording,
    repair,
    show,
    toolschema,
)
from memorepair import changes as specs
from memorepair.access import Access, Caller, Principal, check_principal, guarded
from memorepair.bearer import loopback
from memorepair.changes import EventLike
from memorepair.codec import canonical_json
from memorepair.credentials import KeyFile
from memorepair.embedding import (
    EMBED_META,
    Embedder,
    EmbeddingBacklog,
    Indexing,
    build_embedder,
    embeds,
)
from memorepair.errors import ConfigError, InputError
from memorepair.events import RepairReport
from memorepair.importing import Resumed
from memorepair.interchange import Memory, create_private, parse_artifact, parse_items
from memorepair.local import purge
from memorepair.local.server import LocalServer
from memorepair.model import (
    NS_PATTERN,
    PIN,
    Artifact,
    ArtifactIn,
    EdgeIn,
    Progress,
    RepairEventSpec,
)
from memorepair.operators.base import Executor, Operator, ToolBackend
from memorepair.operators.builtin import build_registry
from memorepair.operators.registry import OperatorRegistry
from memorepair.recording import OnStale
from memorepair.repair import Plan, Preview
from memorepair.sample.demo import DEMO_NAMESPACE, DemoResult, run_demo
from memorepair.selection import Selector
from memorepair.serving import reindex as reindexing
from memorepair.serving import retrieve as retrieving
from memorepair.serving import search as searching
from memorepair.serving.retrieve import Served
from memorepair.serving.search import Hit
from memorepair.serving.usage import UseRecorder
from memorepair.settings import OperatorConfig, RepairConfig, Settings, load_settings
from memorepair.store import Store, VectorShape
from memorepair.toolschema import Migration

#: What the surfaces (CLI, MCP, LangGraph) and programs type against: they import it from
#: here (or from `errors`, `model`, `settings`), never from the modules below.
__all__ = [
    "DEMO_NAMESPACE",
    "EMBED_META",
    "SEARCH_MAX_K",
    "Caller",
    "DemoResult",
    "EventLike",
    "Hit",
    "LocalServer",
    "MemoryStore",
    "Migration",
    "OnStale",
    "Plan",
    "Principal",
    "RepairReport",
    "Resumed",
    "SearchMode",
    "Selector",
    "Served",
    "authenticator",
    "canonical_json",
    "check_principal",
    "connect",
    "embedder_for",
    "embeds",
    "key_file",
    "local_principal",
    "local_server",
    "loopback",
    "open_store",
    "purge_local_server",
]

#: The search modes (`MemoryStore.search(mode=...)`), and the largest k one search takes.
SearchMode = searching.Mode
SEARCH_MAX_K = searching.MAX_K

#: What a serving read handed out: anything with `uid` and `version` (an Artifact, a
#: search Hit), a Served, a `(uid, version)` pair, or a `uid@N` pin or bare uid.
ServedLike = Any


def _quiet(step: str, done: int, total: int) -> None:
    """The default progress: nothing."""


class MemoryStore:
    """A namespace of agent memory in Neo4j, with repair, serving reads and audit."""

    def __init__(
        self,
        store: Store,
        ns: str,
        registry: OperatorRegistry,
        settings: Settings,
        *,
        config: RepairConfig | None = None,
        embedder: Embedder | None = None,
        access: Access | None = None,
        caller: Caller | None = None,
    ) -> None:
        self.store = store
        self.ns = ns
        self.registry = registry
        #: The configuration this store was opened with; only the API reads it, and hands
        #: each module below the few values it uses.
        self.settings = settings
        #: What every repair, resume and plan of this store runs with (built once).
        self.config = config or RepairConfig.from_settings(settings)
        #: The one embedder of this connection (None: embeddings are off).
        self.embedder = embedder
        #: The check every operation passes, and who this store acts as.
        self.access = access or Access(store, owner=access_owner(settings))
        self.caller = caller or Caller(local_principal(settings))
        #: What every write adds so search finds it (embedding, searchable meta terms).
        self.indexing = Indexing(embedder, tuple(settings.search_meta_fields))
        self._searcher = searching.Searcher(store, embedder, min_fetch=settings.search_vector_fetch)
        #: The HNSW shape the vector index is built with (schema apply, reindex --compact).
        self.vector_shape = VectorShape(
            settings.search_hnsw_m, settings.search_hnsw_ef_construction
        )
        #: Counts what serving reads return, off their latency path (shared by siblings),
        #: and records who was served which version (`exposure`).
        self.uses = UseRecorder(
            store,
            enabled=settings.use_recording,
            flush_s=settings.use_flush_s,
            half_life_s=settings.value_half_life_h * 3600.0,
            exposure=settings.exposure_recording,
            retention_s=settings.exposure_retention_days * 86400.0,
        )
        self._owns_store = True
        self._view = False
        #: Embeddings of fresh records written just after their commit (None: inline/off).
        self._backlog = (
            EmbeddingBacklog(store, embedder, settings.embedding_batch)
            if embedder is not None and settings.record_embedding == "deferred"
            else None
        )

    @property
    def _writes(self) -> recording.Writes:
        """What recording writes with: search fields, content cap, the backlog, this
        store's principal (kept on every version it writes), where fault markers go."""
        return recording.Writes(
            self.indexing,
            self.settings.max_content_bytes,
            self._backlog,
            by=self._by,
            state_dir=self.config.state_dir,
            tx_items=self.settings.import_tx_items,
        )

    def namespace(self, ns: str) -> MemoryStore:
        """Another namespace over the same connection, operators and configuration (a
        server answering for several namespaces keeps one driver). Closing it leaves the
        connection open: this store owns it."""
        if ns == self.ns:
            return self
        _check_namespace(ns)
        sibling = MemoryStore(
            self.store,
            ns,
            self.registry,
            self.settings,
            config=self.config,
            embedder=self.embedder,
            access=self.access,
            caller=self.caller,
        )
        sibling.uses = self.uses
        sibling._owns_store = False
        sibling._backlog = self._backlog  # one writer per connection
        return sibling

    def acting_as(
        self, principal: Principal | str | None = None, *, session: str | None = None
    ) -> MemoryStore:
        """A view of this store (same namespace, connection and recorders) that acts as
        another principal (a name is a local one) and/or session. Closing it does
        nothing: this store owns everything it uses."""
        view = copy.copy(self)
        who = principal if principal is not None else self.caller.principal
        view.caller = Caller(
            who if isinstance(who, Principal) else Principal(who), access.session_id(session)
        )
        view._owns_store = False
        view._view = True
        return view

    def whoami(self) -> dict[str, Any]:
        """Who this store acts as, and the roles it holds on its namespace."""
        principal = self.caller.principal
        return {
            "principal": principal.name,
            "via": principal.via,
            "session": self.caller.session,
            "owner": self.access.is_owner(principal),
            "namespace": self.ns,
            "roles": [r for r in access.ROLES if r in self.access.roles(principal, self.ns)],
        }

    def close(self) -> None:
        if self._view:
            return
        self._searcher.close()
        if self._owns_store:
            self.uses.close()  # the last buffered uses, before the driver goes
            if self._backlog is not None:
                self._backlog.close()
            self.store.close()

    def flush_embeddings(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Wait until every version recorded or republished so far by this store has its
        embedding (MEMOREPAIR_RECORD_EMBEDDING=deferred writes them just after each commit,
        a repair's successors just after its publication); `progress(written, of)`."""
        if self._backlog is not None:
            self._backlog.flush(progress)

    def embedding_lags(self) -> list[float]:
        """Seconds from each version's commit (a record, or a successor's publication) to
        its deferred embedding's commit, for the versions written since the last call:
        how long each took to become findable by meaning. Empty with embeddings inline."""
        return self._backlog.lags() if self._backlog is not None else []

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---- writing memory -----------------------------------------------------------
    @guarded("schema")
    def apply_schema(self) -> list[str]:
        """Create every constraint and index (each if it does not exist); the names of the
        statements. An existing vector index keeps its HNSW shape (`vector_index_drift`)."""
        return self.store.apply_schema(self.vector_shape)

    @guarded("schema")
    def vector_index_drift(self) -> str | None:
        """What to do when the vector index was built with another HNSW shape than the
        settings ask for (None: the same, or no index yet)."""
        built = self.store.vector_shape()
        if built is None or built == self.vector_shape:
            return None
        return (
            f"the vector index was built with {built}; the settings ask for "
            f"{self.vector_shape} (MEMOREPAIR_SEARCH_HNSW_M, _EF_CONSTRUCTION): run "
            "`memorepair reindex --compact` to build it again (search stays exact meanwhile)"
        )

    @guarded("clear")
    def clear(self) -> None:
        """Delete every artifact and event of this namespace (tests, benchmarks, demos); a
        failure of its deferred embeddings is forgotten with it."""
        if self._backlog is not None:
            self._backlog.discard(self.ns)
        recording.clear(self.store, self.ns)

    @guarded("record")
    def record(
        self, artifact: ArtifactIn | Mapping[str, Any], *, on_stale: OnStale = "withdraw"
    ) -> dict[str, Any]:
        """Record one artifact with its inputs; withdrawn at once if its support is.

        Inputs are uids (the versions served now) or `uid@N`, the version the writer read
        (every serving read says which version it served). An artifact whose pinned input
        is no longer served is recorded withdrawn (`on_stale="withdraw"`) or refused
        (`"refuse"`), never served.
        """
        item = artifact if isinstance(artifact, ArtifactIn) else parse_artifact(artifact)
        return recording.record(self.store, self.ns, item, writes=self._writes, on_stale=on_stale)

    @guarded("import")
    def record_many(
        self,
        items: Iterable[ArtifactIn | Mapping[str, Any]],
        *,
        on_stale: OnStale = "withdraw",
        progress: Callable[[int, int], None] = lambda done, total: None,
        import_id: str | None = None,
    ) -> recording.ImportReport:
        """Record many artifacts at once: the batch API (one transaction of UNWIND
        statements of MEMOREPAIR_BATCH_SIZE rows, up to MEMOREPAIR_IMPORT_TX_ITEMS items),
        with `record`'s rules for each.

        All or none, across crashes too: every item is validated first (a bad one is
        named by its position, `item N` counting from 1, its uid and field); a batch
        larger than one transaction is written staged (never served) under an import
        record, `import_id` (default: the digest of the items), and published in one
        final transaction, so a failure or a killed process leaves none of it served
        (`resume_imports` finishes or discards what a killed one left). Items stored
        already, identical, are skipped (`report.skipped`): calling again with the same
        items after a crash completes the batch; an item stored different is refused.
        Inputs may be earlier or later items of the same call, or current artifacts of
        the store (`uid` or `uid@N`).
        """
        return self.import_items(
            parse_items(items), progress, on_stale=on_stale, import_id=import_id
        )

    @guarded("import")
    def import_items(
        self,
        items: Iterable[ArtifactIn | EdgeIn],
        progress: Callable[[int, int], None] = lambda done, total: None,
        *,
        on_stale: OnStale = "withdraw",
        import_id: str | None = None,
    ) -> recording.ImportReport:
        """Artifacts and edges already parsed, with `import`'s rules: a uid given twice is
        refused (naming both items, counted from 1) before anything is written."""
        artifacts: list[ArtifactIn] = []
        edges: list[EdgeIn] = []
        lines: dict[str, int] = {}
        for number, item in enumerate(items, start=1):
            if not isinstance(item, ArtifactIn):
                edges.append(item)
                continue
            if item.uid in lines:
                raise InputError(
                    f"item {number}: uid {item.uid!r} is already item {lines[item.uid]}"
                )
            lines[item.uid] = number
            artifacts.append(item)
        memory = Memory(tuple(artifacts), tuple(edges), lines)
        return recording.import_memory(
            self.store,
            self.ns,
            memory,
            writes=self._writes,
            on_stale=on_stale,
            progress=progress,
            import_id=import_id,
            unit="item",
        )

    @guarded("import")
    def import_file(
        self,
        path: Path,
        progress: Callable[[int, int], None] = lambda done, total: None,
        *,
        on_stale: OnStale = "withdraw",
        import_id: str | None = None,
    ) -> recording.ImportReport:
        """Import a JSON Lines memory file, streamed: memory holds the graph, not the
        contents. All or none across crashes, and safe to run again, as `record_many`
        (the import id defaults to the file's digest)."""
        return recording.import_file(
            self.store,
            self.ns,
            path,
            writes=self._writes,
            on_stale=on_stale,
            progress=progress,
            import_id=import_id,
        )

    @guarded("import")
    def resume_imports(
        self, import_id: str | None = None, *, discard: bool = False
    ) -> list[Resumed]:
        """Finish or discard imports a killed process left open (or the one named): one
        whose every version was staged is published (unless `discard`), any other has its
        staged versions deleted, and running the same input again writes it whole. One
        still being written by a live process on this host is left alone."""
        return importing.resume(self.store, self.ns, import_id, discard_all=discard)

    @guarded("export")
    def export_file(
        self,
        path: Path,
        *,
        force: bool = False,
        progress: Callable[[int, int], None] = lambda done, total: None,
    ) -> int:
        """Write the served memory as JSON Lines (re-importable into an empty namespace).

        The file is created 0600 (it holds the memory). An existing file is refused unless
        `force`, and a symbolic link at `path` is refused always: the export never writes
        through a link someone else planted.
        """
        with create_private(path, force=force) as handle:
            return self.export_to(handle, progress=progress)

    @guarded("export")
    def export_to(
        self, handle: TextIO, progress: Callable[[int, int], None] = lambda done, total: None
    ) -> int:
        """Write the served memory as JSON Lines to an open text stream (e.g. stdout). What
        it hands out counts as exposure (not as use: values stay the readers')."""

        def served(versions: list[tuple[str, int]]) -> None:
            self._note(versions, session=None, use=False)

        return retrieving.export(self.store, self.ns, handle, progress, served)

    # ---- repair ---------------------------------------------------------------------
    def event(self, event: EventLike) -> RepairEventSpec:
        return specs.event_spec(event, self.ns)

    @guarded("plan")
    def plan(
        self, event: EventLike, *, lam: float | None = None, selector: Selector | None = None
    ) -> Plan:
        return repair.plan(
            self.store, self.registry, self.config, self.event(event), lam=lam, selector=selector
        )

    @guarded("plan")
    def preview(
        self, event: EventLike, *, lam: float | None = None, selector: Selector | None = None
    ) -> Preview:
        """`plan` with every selected successor built and validated in memory: what the
        repair would publish and what would stay withdrawn. Writes nothing."""
        return repair.preview(
            self.store, self.registry, self.config, self.event(event), lam=lam, selector=selector
        )

    @guarded("plan")
    def plan_view(
        self, event: EventLike, *, lam: float | None = None, selector: Selector | None = None
    ) -> show.CascadeView:
        """The cascade an event would get now, node by node, with each content change
        (`plan --diff`, `show --plan`). Writes nothing."""
        return show.from_preview(self.preview(event, lam=lam, selector=selector))

    @guarded("plan")
    def plan_diff(
        self, event: EventLike, *, lam: float | None = None, selector: Selector | None = None
    ) -> dict[str, Any]:
        """`plan`'s figures and, under "diff", each artifact's content change (current
        against successor) and what would stay withdrawn and why. Writes nothing."""
        preview = self.preview(event, lam=lam, selector=selector)
        return {**preview.plan.as_dict(), "diff": show.from_preview(preview).diff()}

    @guarded("repair")
    def repair(
        self,
        event: EventLike,
        *,
        selector: Selector | None = None,
        lam: float | None = None,
        progress: Progress = _quiet,
    ) -> RepairReport:
        self._require_embedder()
        self.uses.flush_safely()  # this process's reads before the barrier: on record
        return repair.run(
            self.store,
            self.registry,
            self.config,
            self.indexing,
            self.event(event),
            selector=selector,
            lam=lam,
            progress=progress,
            backlog=self._backlog,
            by=self._by,
        )

    @guarded("resume")
    def resume(
        self,
        event_id: str | None = None,
        progress: Progress = _quiet,
    ) -> list[RepairReport]:
        """Complete interrupted events; then queue the embeddings a killed process left
        unwritten in the namespace (deferred ones: served versions without a vector yet),
        which this store's writer adds (`flush_embeddings` waits for them)."""
        self._require_embedder()
        reports = repair.resume(
            self.store,
            self.registry,
            self.config,
            self.indexing,
            self.ns,
            event_id,
            progress=progress,
            backlog=self._backlog,
            by=self._by,
        )
        if self._backlog is not None:
            self._backlog.flush()  # what the resumed events queued, before looking again
            self._backlog.add(embedding.unindexed(self.store, self.ns))
        return reports

    @guarded("retry")
    def retry(self, event_id: str, progress: Progress = _quiet) -> RepairReport:
        """Re-attempt what `event_id` left failed or blocked (a follow-up event), e.g.
        after installing the tool back-end a migration needed."""
        self._require_embedder()
        return repair.retry(
            self.store,
            self.registry,
            self.config,
            self.indexing,
            self.ns,
            event_id,
            progress=progress,
            backlog=self._backlog,
            by=self._by,
        )

    @guarded("update")
    def update(
        self,
        uid: str,
        *,
        content: str | None = None,
        meta: Mapping[str, Any] | None = None,
        inputs: Sequence[str] | None = None,
        reason: str = "",
        event_id: str | None = None,
        erase: bool = False,
        progress: Progress = _quiet,
    ) -> RepairReport:
        """Change a served artifact as a `correct` event, with its cascade and barrier.

        What is not given is kept: the content, the meta and the inputs (`uid` or `uid@N`)
        of the served version. `erase=True` also erases the old text everywhere, as a
        delete does. Returns the event's report (the id is generated unless given).
        """
        change = specs.update(uid, content=content, meta=meta, inputs=inputs)
        return self.correct(
            [change],
            reason=reason or f"update of {uid}",
            event_id=event_id or specs.update_id(uid),
            erase=erase,
            progress=progress,
        )

    @guarded("correct")
    def correct(
        self,
        changes: Sequence[Mapping[str, Any]],
        *,
        reason: str = "",
        event_id: str | None = None,
        erase: bool = False,
        progress: Progress = _quiet,
    ) -> RepairReport:
        """Correct several served artifacts in one `correct` event (one barrier).

        Each change is `{"uid", "content"?, "meta"?, "inputs"?}`; what it leaves out is
        kept from the served version, as in `update`.
        """
        replacements = [
            specs.replacement(change, self._served_version(change), self.ns)
            for change in specs.requested(changes)
        ]
        spec = specs.correction(replacements, reason=reason, event_id=event_id, erase=erase)
        return self.repair(spec, progress=progress)

    def _served_version(self, change: Mapping[str, Any]) -> Artifact | None:
        """The served version a change keeps what it does not give from (not a use)."""
        found = self.retrieve(uid=specs.changed_uid(change), record_use=False)
        return found[0] if found else None

    @guarded("forget")
    def forget(
        self,
        uids: str | Sequence[str],
        *,
        reason: str = "",
        event_id: str | None = None,
        progress: Progress = _quiet,
    ) -> RepairReport:
        """Delete artifacts as one `delete` event: their cascade is withdrawn at once,
        what retained support can rebuild is republished, and their text is erased."""
        roots = specs.forget_roots(uids)
        unknown = [uid for uid in roots if not self.lineage(uid, missing_ok=True)]
        spec = specs.deletion(roots, unknown=unknown, ns=self.ns, reason=reason, event_id=event_id)
        return self.repair(spec, progress=progress)

    @guarded("record")
    def record_interface(self, tool: str, schema: Any, *, uid: str | None = None) -> dict[str, Any]:
        """Record a tool's interface (its schema) as an artifact, `tool:<name>` unless
        `uid` is given: what is derived from its calls lists it as an input, so a later
        `tool_migration` withdraws and repairs exactly that."""
        return self.record(specs.interface_record(tool, schema, uid=uid))

    @guarded("migrate")
    def tool_migration(
        self,
        tool: str,
        new_schema: Any,
        *,
        old_schema: Any = None,
        roots: Sequence[str] | None = None,
        renames: Mapping[str, str] | None = None,
        param_renames: Mapping[str, Mapping[str, str]] | None = None,
        reason: str = "",
        event_id: str | None = None,
    ) -> tuple[RepairEventSpec, toolschema.Migration]:
        """The `migrate` event for `tool` changing to `new_schema`, and how its maps were
        found: the old schema defaults to the served interface artifact's, the roots to
        every served interface artifact of the tool, the maps to what the two schemas
        show unambiguously. Run it with `repair` (or look first with `plan`)."""
        spec, migration = specs.tool_migration(
            tool,
            new_schema,
            self.retrieve(text=tool, limit=10_000, record_use=False),
            ns=self.ns,
            old_schema=old_schema,
            roots=roots,
            renames=renames,
            param_renames=param_renames,
            reason=reason,
            event_id=event_id,
        )
        return self.event(spec), migration

    @guarded("migrate")
    def migrate_tool(
        self,
        tool: str,
        new_schema: Any,
        *,
        dry_run: bool = False,
        **options: Unpack[specs.MigrationOptions],
    ) -> tuple[RepairEventSpec, Migration, Plan | RepairReport]:
        """`tool_migration` (same options), then its plan (`dry_run`) or its repair: MCP's
        tool_migrated."""
        spec, migration = self.tool_migration(tool, new_schema, **options)
        return spec, migration, self.plan(spec) if dry_run else self.repair(spec)

    @guarded("audit")
    def report(self, event_id: str) -> RepairReport:
        return audit.report_of(self.store, self.ns, event_id)

    # ---- serving reads ----------------------------------------------------------------
    @guarded("retrieve")
    def retrieve(
        self,
        *,
        uid: str | None = None,
        kind: str | None = None,
        text: str | None = None,
        related: bool = False,
        limit: int = 20,
        record_use: bool = True,
        session: str | None = None,
    ) -> list[Artifact]:
        """Live artifacts only: nothing withdrawn, staged, superseded or removed, ever.
        What it returns counts as served to this store's principal in `session` (default:
        the store's), for use recording (docs/values.md) and `exposure`, unless
        `record_use` is False (the engine's own reads: a correction's base, a tool's
        interface records)."""
        found = retrieving.retrieve(
            self.store,
            self.ns,
            uid=uid,
            kind=kind,
            text=text,
            related=related,
            limit=limit,
            scan=self.settings.retrieve_scan,
        )
        if record_use:
            self.record_use(found, session=session)
        return found

    @guarded("search")
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        kinds: Sequence[str] | None = None,
        meta: Mapping[str, Any] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        mode: searching.Mode = "hybrid",
        related: bool = False,
        uid_prefix: str | None = None,
        record_use: bool = True,
        session: str | None = None,
    ) -> list[searching.Hit]:
        """The k best served matches by meaning (`vector`), words (`text`) or both fused
        (`hybrid`), within the filters: never a withdrawn, staged, superseded or removed
        version. Each hit names the `uid@version` it ranked; `related=True` appends the
        served RELATED neighbours of the hits. `uid_prefix` keeps uids that start with it
        (exactly, in every path). `retrieve` stays for uid and substring reads. The hits
        count as served (`record_use`, to this store's principal in `session`); a caller
        that filters them further passes False and records what it hands on itself.
        """
        f = searching.filters(
            self.ns,
            kinds=kinds,
            meta=meta,
            since=since,
            until=until,
            searchable=self.settings.search_meta_fields,
            prefix=uid_prefix,
        )
        self.flush_embeddings()  # this process finds what it recorded
        hits = self._searcher.search(query, k, f, mode, related)
        if record_use:
            self.record_use(hits, session=session)
        return hits

    @guarded("retrieve")
    def record_use(self, served: Iterable[ServedLike], *, session: str | None = None) -> None:
        """Count one use of each served version, and that this store's principal was
        served it in `session` (default: the store's session). Buffered, written in the
        background (docs/values.md). Serving reads call it with what they returned: items
        with `uid` and `version`, `(uid, version)` pairs or `uid@N` pins (a bare uid
        counts its served version now)."""
        self._note(served, session=session, use=True)

    def _note(self, served: Iterable[ServedLike], *, session: str | None, use: bool) -> None:
        pairs, bare = _versions(served)
        if bare:
            now = retrieving.served(self.store, self.ns, bare)
            pairs += [(uid, s.artifact.version) for uid, s in now.items()]
        chosen = self.caller.session if session is None else access.session_id(session)
        self.uses.note(self.ns, pairs, (self.caller.principal.name, chosen), use=use)

    def flush_use(self) -> int:
        """Write the buffered use counts now (the background flush does it every
        MEMOREPAIR_USE_FLUSH_S seconds, and `close` at the end); identities written."""
        return self.uses.flush()

    def bookmarks(self) -> list[str]:
        """Bookmarks of every commit this store has made (after a repair: its barrier and
        publication). Hand them to readers in other processes: their `await_bookmarks`
        makes their serving reads causally after those commits on a cluster or Aura."""
        return self.store.bookmarks()

    def await_bookmarks(self, bookmarks: Sequence[str]) -> None:
        """Make this store's reads see the commits `bookmarks` name (another process's
        `bookmarks()`); returns once the server that serves reads holds them."""
        self.store.await_bookmarks(bookmarks)

    @guarded("retrieve")
    def served(self, uids: Sequence[str]) -> dict[str, Served]:
        """The served version of each uid that has one, with its uid's times (one read).
        Not a use: a caller that hands them on records that (`record_use`)."""
        return retrieving.served(self.store, self.ns, uids)

    @guarded("retrieve")
    def list_served(self, *, uid_prefix: str = "", skip: int = 0, limit: int = 100) -> list[Served]:
        """Served versions whose uid starts with `uid_prefix`, most recently published
        first, one page (`skip`, `limit`)."""
        return retrieving.listing(
            self.store, self.ns, uid_prefix=uid_prefix, skip=skip, limit=limit
        )

    @guarded("retrieve")
    def served_paths(self, uid_prefix: str = "") -> list[list[str]]:
        """The distinct '/'-separated paths above the served uids starting with `uid_prefix`
        (`a/b/key` lies under `[a, b]`)."""
        return retrieving.paths(self.store, self.ns, uid_prefix)

    @guarded("reindex")
    def reindex(
        self, *, force: bool = False, progress: Callable[[int, int], None] = lambda d, t: None
    ) -> reindexing.ReindexReport:
        """Re-embed the namespace with the configured embedder (after changing the model)
        and rewrite its meta terms (after changing MEMOREPAIR_SEARCH_META_FIELDS)."""
        self.flush_embeddings()
        return reindexing.reindex(
            self.store,
            self.ns,
            self.indexing,
            open_events=events.open_events(self.store, self.ns),
            force=force,
            progress=progress,
        )

    @guarded("schema")
    def compact_vector_index(self) -> float:
        """Rebuild the vector index in one bulk population (after bulk writes: fewer,
        larger segments answer faster); every namespace's, since the index is shared.
        Vector search stays exact meanwhile (the exhaustive path). Returns the seconds.
        Needs the admin role (as `apply_schema`): the index serves every namespace."""
        self.flush_embeddings()
        return reindexing.compact(self.store, self.vector_shape)

    def _require_embedder(self) -> None:
        """A repair embeds its successors: refuse before its barrier if the configured
        embedder is not the namespace's (the repair would mix two models)."""
        embedding.require_space(self.store, self.ns, self.indexing.space)

    # ---- audit ------------------------------------------------------------------------
    @guarded("status")
    def counts(self) -> dict[str, int]:
        return retrieving.counts(self.store, self.ns)

    @guarded("status")
    def status(self, event_id: str | None = None) -> dict[str, Any]:
        """Artifacts by visibility, the events not completed yet and the imports not
        published (nothing of them served: `resume` finishes or discards them; `memorepair
        status`);
        with `event_id`, that event's cascade by outcome too (under "event")."""
        data: dict[str, Any] = {
            "namespace": self.ns,
            "server": self.store.uri,
            "principal": self.caller.principal.name,
            "artifacts": self.counts(),
            "open_events": events.open_events(self.store, self.ns),
            "open_imports": importing.open_imports(self.store, self.ns),
            "withdrawn": self.still_withdrawn(),
        }
        if event_id is not None:
            data["event"] = {"id": event_id, "sets": self.audit_event(event_id)}
        return data

    @guarded("audit")
    def check(self, erasure_event_id: str | None = None) -> dict[str, Any]:
        """The barrier invariant (`ok`: nothing served depends on invalidated support);
        with `erasure_event_id`, also that event's proof that no copy of the erased text
        is left (`ok` then needs both)."""
        stale = self.stale_served()
        data: dict[str, Any] = {"ok": not stale, "stale_served": stale}
        if erasure_event_id is not None:
            erasure = self.audit_erasure(erasure_event_id)
            data["erasure"] = erasure
            data["ok"] = data["ok"] and bool(erasure["ok"])
        return data

    @guarded("audit")
    def audit_events(self) -> list[dict[str, Any]]:
        return audit.events(self.store, self.ns)

    @guarded("audit")
    def event_record(self, event_id: str) -> dict[str, Any]:
        """One event's record: type, status, phase, who asked (`by`), why, when."""
        record = events.record(self.store, self.ns, event_id)
        keep = ("id", "type", "status", "phase", "by", "reason", "created_at", "retry_of")
        return {k: _plain(record.get(k)) for k in keep}

    @guarded("audit")
    def audit_event(self, event_id: str) -> dict[str, list[dict[str, Any]]]:
        return audit.event_sets(self.store, self.ns, event_id)

    @guarded("show")
    def show(self, event_id: str) -> show.CascadeView:
        """A recorded event's cascade, node by node: outcome, facts and content change."""
        record, rows = audit.event_cascade(self.store, self.ns, event_id)
        return show.from_audit(record, rows)

    @guarded("lineage")
    def lineage(self, uid: str, *, missing_ok: bool = False) -> list[dict[str, Any]]:
        """Every version of `uid`, oldest first; an unknown uid is an error unless
        `missing_ok` (then [])."""
        try:
            return audit.lineage(self.store, self.ns, uid)
        except InputError:
            if missing_ok:
                return []
            raise

    @guarded("audit")
    def still_withdrawn(self) -> list[dict[str, Any]]:
        return audit.still_withdrawn(self.store, self.ns)

    @guarded("audit")
    def audit_erasure(self, event_id: str) -> dict[str, Any]:
        """An erasing event's record and its proof: no copy of the erased text anywhere in
        the namespace (every property of every node and relationship scanned)."""
        return audit.erasure(self.store, self.ns, event_id)

    @guarded("audit")
    def stale_served(self) -> list[dict[str, Any]]:
        return audit.stale_served(self.store, self.ns)

    @guarded("exposure")
    def exposure(self, event_id: str) -> dict[str, Any]:
        """Who was served the versions `event_id` withdrew, before its barrier: per version,
        principal and session the reads, first and last time, most read first, and totals
        per principal (ids and times only; `memorepair audit exposure`)."""
        self.uses.flush_safely()  # this process's own reads count too
        return audit.exposure(self.store, self.ns, event_id)

    def demo(
        self,
        *,
        clear_after: bool = False,
        imported: Callable[[recording.ImportReport], None] = lambda report: None,
        before: Callable[[str, RepairEventSpec], None] = lambda name, spec: None,
        after: Callable[[RepairReport, dict[str, Any] | None], None] = lambda r, e: None,
    ) -> DemoResult:
        """The included sample memory, repaired event by event (`memorepair demo`); the
        callbacks narrate as it goes. Clears the namespace first (what a previous demo
        left there); the memory stays for the audit commands unless `clear_after`."""
        return run_demo(
            self, clear_after=clear_after, imported=imported, before=before, after=after
        )

    # ---- grants (admin) --------------------------------------------------------------------
    def grants(self, principal: str | None = None) -> list[dict[str, Any]]:
        """The grants this store's principal may see (its own, and every grant on the
        patterns it administers; the owner sees all), optionally of one principal."""
        return [g.as_dict() for g in self.access.grants(self.caller, principal)]

    def set_grant(self, principal: str, pattern: str, roles: Sequence[str]) -> dict[str, Any]:
        """Give `principal` exactly `roles` on namespace `pattern` (a namespace, `prefix*`
        or `*`); needs admin on a pattern covering it."""
        return self.access.set_grant(self.caller, principal, pattern, roles).as_dict()

    def revoke_grant(
        self, principal: str, pattern: str, roles: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """Take `roles` (all when None) back from `principal` on `pattern`."""
        kept = self.access.revoke_grant(self.caller, principal, pattern, roles)
        return {"principal": principal, "pattern": pattern, "roles": list(kept)}

    @property
    def _by(self) -> str:
        """The principal this store's writes and events are recorded as made by."""
        return self.caller.principal.name

    # ---- plugins ------------------------------------------------------------------------
    def register_operator(self, operator: Operator, *, first: bool = False) -> None:
        """Add an operator; `first=True` lets it take precedence over the built-ins."""
        self.registry.register_operator(operator, first=first)

    def register_executor(self, name: str, executor: Executor) -> None:
        self.registry.register_executor(name, executor)

    def register_backend(self, backend: ToolBackend) -> None:
        self.registry.register_backend(backend)


def _check_namespace(namespace: str) -> None:
    if not re.fullmatch(NS_PATTERN, namespace):
        raise InputError(
            f"namespace {namespace!r} is not valid: letters, digits, '.', '_' or '-', "
            "starting with a letter or digit, at most 64 characters"
        )


def local_server(settings: Settings | None = None) -> LocalServer:
    """The local Neo4j server of these settings' state folder (`memorepair neo4j
    start|stop|status`): `start`, `stop`, `status`, and its Browser."""
    return LocalServer(settings or load_settings())


def purge_local_server(
    settings: Settings | None = None,
    *,
    force: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> purge.PurgeReport:
    """Make the local server's data directory lose the bytes that erasures freed: filler
    over freed store records, transaction logs rotated and pruned, two restarts
    (docs/erasure.md). Refuses while a repair event is open, unless `force`."""
    resolved = settings or load_settings()
    return purge.purge(resolved, lambda: connect(resolved), force=force, say=progress)


def open_store(
    ns: str | None = None,
    settings: Settings | None = None,
    *,
    principal: Principal | str | None = None,
    session: str | None = None,
    **overrides: Any,
) -> MemoryStore:
    """Connect to the configured Neo4j (or the local server) for one namespace, acting as
    `principal` (a name is a local principal; default MEMOREPAIR_PRINCIPAL, else the OS
    account) in `session` (kept on use records: who was served what).

    The clients are built here, once: the connection (`connect`), the embedder
    (`embedder_for`; none with MEMOREPAIR_EMBEDDINGS=false) and the operator registry;
    siblings from `MemoryStore.namespace` share them.
    """
    resolved = settings or load_settings(**overrides)
    namespace = ns or resolved.namespace
    _check_namespace(namespace)
    embedder = embedder_for(resolved) if resolved.embeddings else None
    store = connect(resolved)
    registry = build_registry(OperatorConfig.from_settings(resolved))
    if resolved.sample_tools:
        from memorepair.sample.tools import register_tools

        register_tools(registry)
    config = RepairConfig.from_settings(resolved)
    who = principal if principal is not None else local_principal(resolved)
    return MemoryStore(
        store,
        namespace,
        registry,
        resolved,
        config=config,
        embedder=embedder,
        access=Access(store, owner=access_owner(resolved)),
        caller=Caller(
            who if isinstance(who, Principal) else Principal(who), access.session_id(session)
        ),
    )


def connect(settings: Settings) -> Store:
    """A Store on the server NEO4J_URI names, else on the local one (with its password)."""
    if settings.neo4j_uri is not None:
        password = settings.neo4j_password
        auth = (settings.neo4j_username, password.get_secret_value()) if password else None
        uri, hint = settings.neo4j_uri, "check NEO4J_URI and that the server is up"
    else:
        uri, auth = LocalServer(settings).connection()
        hint = f"run `memorepair neo4j start`; local state {settings.state_dir.resolve()}"
    return Store.open(
        uri,
        auth,
        database=settings.neo4j_database,
        batch_size=settings.batch_size,
        serving_reads=settings.serving_reads,
        unreachable_hint=hint,
    )


def embedder_for(settings: Settings) -> Embedder:
    """The embedder the settings name (MEMOREPAIR_EMBEDDING_*): a new one per call, so
    build it once and hand it down (`open_store` does)."""
    key = settings.embedding_api_key
    return build_embedder(
        base_url=settings.embedding_base_url,
        model=settings.embedding_model,
        api_key=key.get_secret_value() if key else None,
        dimension=settings.embedding_dimension,
        batch_size=settings.embedding_batch,
    )


def local_principal(settings: Settings) -> Principal:
    """Who the local surfaces act as: MEMOREPAIR_PRINCIPAL, else the OS account."""
    return Principal(settings.principal or access.os_user(), "local")


def access_owner(settings: Settings) -> str | None:
    """The owner (admin everywhere on local surfaces): MEMOREPAIR_OWNER, else the OS
    account; an empty MEMOREPAIR_OWNER means nobody."""
    return access.os_user() if settings.owner is None else settings.owner or None


def key_file(settings: Settings) -> KeyFile:
    """The principals file (API keys and revocations): `memorepair principals`."""
    return KeyFile(settings.principals_file or settings.state_dir / "principals.json")


def authenticator(settings: Settings, *, resource_url: str) -> Any:
    """The bearer-token check of `memorepair mcp --http` (`bearer.Authenticator`): API
    keys from the principals file, and JWTs when MEMOREPAIR_AUTH_ISSUER is set."""
    from memorepair import bearer

    jwt = None
    if settings.auth_issuer is not None:
        if settings.auth_jwks_url is None:
            raise ConfigError(
                "MEMOREPAIR_AUTH_ISSUER is set but MEMOREPAIR_AUTH_JWKS_URL is not: name the "
                "issuer's JWKS (its jwks_uri)"
            )
        jwt = bearer.JwtConfig(
            issuer=settings.auth_issuer,
            jwks_url=settings.auth_jwks_url,
            audience=settings.auth_audience or resource_url,
            algorithms=tuple(settings.auth_algorithms),
            principal_claim=settings.auth_principal_claim,
            leeway_s=settings.auth_leeway_s,
        )
    return bearer.Authenticator(key_file(settings), jwt)


def _plain(value: Any) -> Any:
    """A Neo4j temporal value as text; anything else as it is."""
    return str(value) if hasattr(value, "to_native") else value


def _versions(served: Iterable[ServedLike]) -> tuple[list[tuple[str, int]], list[str]]:
    """(uid, version) of each served item, and the bare uids whose version is unknown."""
    pairs: list[tuple[str, int]] = []
    bare: list[str] = []
    for item in served:
        if isinstance(item, Served):
            pairs.append((item.artifact.uid, item.artifact.version))
        elif isinstance(item, tuple):
            pairs.append((str(item[0]), int(item[1])))
        elif isinstance(item, str):
            pin = PIN.match(item)
            if pin:
                pairs.append((pin["uid"], int(pin["version"])))
            else:
                bare.append(item)
        else:
            pairs.append((str(item.uid), int(item.version)))
    return pairs, bare
