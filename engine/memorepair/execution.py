"""Step 5a: execute the selected candidates S in topological order and validate them.

Each successor is built by its mode's operator from Ret(e), X_delta, kappa_e and the
staged successors of its required predecessors, then written as a *staged* version
(invisible to serving). Validation runs on the staged successors afterwards; both
phases are recorded on the event, and a resumed run reuses what a crashed one staged
(staging is keyed by the successor's version id).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from memorepair import embedding, queries
from memorepair.candidates import Candidate, CandidateFamily
from memorepair.codec import artifact_from_row, canonical_json
from memorepair.graphs import topological
from memorepair.model import (
    Artifact,
    Interface,
    Mode,
    RepairEventSpec,
    Visibility,
    artifact_key,
    version_id,
)
from memorepair.operators.base import (
    Operator,
    RepairContext,
    Successor,
    Support,
    Validation,
)
from memorepair.store import Store, WriteBehind

READ_HEADS = queries.named("execution/read_heads")
READ_INPUT_VERSIONS = queries.named("execution/read_input_versions")
READ_VERSIONS = queries.named("execution/read_versions")
RECORD_VALIDATION = queries.named("execution/record_validation")
STAGED_SUCCESSORS = queries.named("execution/staged_successors")
STAGE_SUCCESSORS = queries.named("execution/stage_successors")

Progress = Callable[[str, int, int], None]


class Registry(Protocol):
    def operator(self, mode: Mode, artifact: Artifact) -> Operator | None: ...


@dataclass(frozen=True)
class Attempt:
    """One executed candidate: its staged successor and, after validation, the verdict."""

    candidate: Candidate
    vid: str
    successor: Successor | None
    context: RepairContext | None
    validated: bool | None = None
    detail: str = ""
    published: bool = False  # by an interrupted run of the same event

    @property
    def version(self) -> int:
        """The successor's version number, the one its vid was minted with."""
        return int(self.vid.rsplit("@", 1)[1])


def topological_selection(family: CandidateFamily, selected: Sequence[int]) -> list[int]:
    """Kahn's order over E^req restricted to S, ties broken by candidate index."""
    order, _ = topological(sorted(selected), family.requirement_edges)
    return order


@dataclass(frozen=True)
class _Versions:
    artifacts: dict[str, Artifact]  # by vid
    used: dict[str, list[tuple[int, str]]]  # vid -> (position, vid) of the inputs it used
    latest: dict[str, int]  # uid -> highest version ever written


def _read_versions(store: Store, vids: Sequence[str]) -> _Versions:
    """The versions being repaired, with the input versions each used and its latest number."""
    found = _Versions({}, {}, {})
    for batch in store.read_batches(READ_VERSIONS, "vids", vids):
        for row in batch[0]["rows"]:
            artifact = artifact_from_row(row["artifact"], row["visibility"])
            found.artifacts[artifact.vid] = artifact
            found.used[artifact.vid] = [(int(pos), str(vid)) for pos, vid in row["used"]]
            found.latest[artifact.uid] = int(row["latest"])
    return found


def _read_inputs(store: Store, vids: Sequence[str]) -> dict[str, Artifact]:
    found: dict[str, Artifact] = {}
    for batch in store.read_batches(READ_INPUT_VERSIONS, "vids", vids):
        for row in batch[0]["rows"]:
            artifact = artifact_from_row(row["artifact"], row["visibility"])
            found[artifact.vid] = artifact
    return found


def stage(
    store: Store,
    registry: Registry,
    spec: RepairEventSpec,
    family: CandidateFamily,
    selected: Sequence[int],
    *,
    options: Mapping[str, Any],
    progress: Progress = lambda phase, done, total: None,
    checkpoint: Callable[[str], None] = lambda point: None,
) -> list[Attempt]:
    """Build every selected successor in topological order and stage it in Neo4j."""
    ns, key = spec.ns, f"{spec.ns}/{spec.id}"
    order = topological_selection(family, selected)
    candidates = [family.candidates[i] for i in order]
    previous = {
        row["old_vid"]: {**row["artifact"], "published": row["published"]}
        for row in store.read(STAGED_SUCCESSORS, event_key=key)
    }
    repaired = _read_versions(store, [c.vid for c in candidates])
    old, latest = repaired.artifacts, repaired.latest
    outside = sorted({u for c in candidates for u in old[c.vid].inputs if u not in family.by_uid})
    heads: dict[str, Artifact] = {}
    for batch in store.read_batches(READ_HEADS, "keys", [artifact_key(ns, u) for u in outside]):
        for row in batch[0]["rows"]:
            artifact = artifact_from_row(row["artifact"], row["visibility"])
            heads[artifact.uid] = artifact
    # Each input version is read once, however many candidates it fed (hubs feed thousands);
    # a retained input used at its current version was just read as a head.
    used = {**old, **{a.vid: a for a in heads.values()}}
    wanted = sorted({v for e in repaired.used.values() for _, v in e} - set(used))
    used.update(_read_inputs(store, wanted))
    old_inputs = {vid: [(pos, used[v]) for pos, v in e] for vid, e in repaired.used.items()}
    # Support entries are built once per input (a hub feeds thousands of candidates).
    retained = {
        uid: _support(head, "replacement" if uid in family.root_vids else "retained")
        for uid, head in heads.items()
        if head.visibility == Visibility.LIVE
    }
    successors: dict[str, Support] = {}  # uid -> its staged successor, as support
    attempts: list[Attempt] = []
    # Staging writes run behind the builds (two batches in flight): the server stages batches
    # k-1 and k while operators build k+1. The with-block ends once every batch committed.
    # Each batch's successors are embedded on the writer thread, from their own content,
    # before they are staged (search hook, issue 16): publication then only relabels.
    searchable = embedding.searchable(store.settings)
    with WriteBehind(store, STAGE_SUCCESSORS, event_key=key, prepare=searchable) as writer:
        for done, candidate in enumerate(candidates, start=1):
            artifact = old[candidate.vid]
            ctx = _context(
                spec, artifact, old_inputs.get(candidate.vid, []), retained, successors, options
            )
            reused = previous.get(candidate.vid)
            if reused is not None:
                attempt = _reused(candidate, ctx, reused)
            else:
                fresh = version_id(ns, candidate.uid, latest[candidate.uid] + 1)
                attempt = _build(registry, candidate, artifact, ctx, fresh)
                if attempt.successor is not None and writer.add(_stage_row(candidate, attempt)):
                    checkpoint("staging")  # a crash here may lose the batches in flight
            if attempt.successor is not None:
                successors[candidate.uid] = _staged_support(artifact, attempt)
            attempts.append(attempt)
            progress("execute", done, len(candidates))
    return attempts


def validate(
    store: Store,
    registry: Registry,
    attempts: Sequence[Attempt],
    *,
    progress: Progress = lambda phase, done, total: None,
) -> list[Attempt]:
    """Run each operator's validation on its staged successor and record the verdicts."""
    checked: list[Attempt] = []
    with WriteBehind(store, RECORD_VALIDATION) as writer:
        for done, attempt in enumerate(attempts, start=1):
            if attempt.successor is None or attempt.context is None:
                checked.append(attempt)
                continue
            if attempt.validated is not None:  # verdict recorded by an earlier run
                checked.append(attempt)
                continue
            operator = registry.operator(attempt.candidate.mode, attempt.context.artifact)
            if operator is None:
                verdict = Validation(False, f"no {attempt.candidate.mode.value} operator")
            else:
                try:
                    verdict = operator.validate(attempt.context, attempt.successor)
                except Exception as exc:  # a plugin's crash is a failed validation, not ours
                    verdict = Validation(False, f"validation raised {type(exc).__name__}: {exc}")
            result = replace(attempt, validated=verdict.ok, detail=verdict.reason)
            checked.append(result)
            writer.add(
                {"vid": result.vid, "validated": verdict.ok, "validation": verdict.reason or None}
            )
            progress("validate", done, len(attempts))
    return checked


def _reused(candidate: Candidate, ctx: RepairContext, row: Mapping[str, Any]) -> Attempt:
    """The attempt an interrupted run of the same event staged (and maybe validated)."""
    staged = artifact_from_row(row, "Staged")
    successor = Successor(
        content=row.get("content") or "",
        inputs=tuple(row.get("inputs") or ()),
        recipe=staged.recipe,
        meta=staged.meta,
    )
    return Attempt(
        candidate,
        str(row["vid"]),
        successor,
        ctx,
        row.get("validated"),
        row.get("validation") or "",
        bool(row["published"]),
    )


def _build(
    registry: Registry, candidate: Candidate, artifact: Artifact, ctx: RepairContext, vid: str
) -> Attempt:
    operator = registry.operator(candidate.mode, artifact)
    if operator is None:
        return Attempt(candidate, vid, None, ctx, False, f"no {candidate.mode.value} operator")
    try:
        successor = operator.build(ctx)
    except Exception as exc:  # an operator that cannot build fails this candidate only
        return Attempt(
            candidate, vid, None, ctx, False, f"build failed: {type(exc).__name__}: {exc}"
        )
    allowed = {s.uid for s in ctx.support}
    stray = [u for u in successor.inputs if u not in allowed]
    if stray:
        return Attempt(
            candidate, vid, None, ctx, False, f"successor cites non-support inputs {stray}"
        )
    return Attempt(candidate, vid, successor, ctx)


def _context(
    spec: RepairEventSpec,
    artifact: Artifact,
    used: list[tuple[int, Artifact]],
    retained: Mapping[str, Support],
    successors: Mapping[str, Support],
    options: Mapping[str, Any],
) -> RepairContext:
    """Support: the staged successor of an affected input, else its served current version
    (retained, or the replacement of a root); `retained` holds only live heads."""
    support: list[Support] = []
    invalidated: list[Artifact] = []
    used_by_uid = {a.uid: a for _, a in sorted(used, key=lambda pair: pair[0])}
    for uid in artifact.inputs:
        if uid in successors:
            support.append(successors[uid])
        elif uid in retained:
            support.append(retained[uid])
        old = used_by_uid.get(uid)
        if old is not None and (uid in successors or old.visibility.value != "Live"):
            invalidated.append(old)  # the version it used is gone: never draw on it again
    return RepairContext(
        event_type=spec.type,
        artifact=artifact,
        support=tuple(support),
        invalidated=tuple(invalidated),
        interface=spec.interface if isinstance(spec.interface, Interface) else None,
        options=options,
    )


def _support(artifact: Artifact, origin: str) -> Support:
    return Support(
        uid=artifact.uid,
        version=artifact.version,
        kind=artifact.kind,
        arch=artifact.arch,
        content=artifact.content,
        meta=artifact.meta,
        origin=origin,  # type: ignore[arg-type]
    )


def _staged_support(old: Artifact, attempt: Attempt) -> Support:
    """A staged successor as the support of the candidates that require it."""
    assert attempt.successor is not None
    return Support(
        uid=old.uid,
        version=attempt.version,
        kind=old.kind,
        arch=old.arch,
        content=attempt.successor.content,
        meta=_successor_meta(old, attempt.successor),
        origin="successor",
    )


def _successor_meta(old: Artifact, successor: Successor) -> dict[str, Any]:
    """Meta carries over from the predecessor unless the operator says otherwise.

    Operators return what they changed (often nothing); dropping the rest would lose facts
    later events depend on, such as a tool-call record's `call` or a skill's `title`.
    """
    return {**old.meta, **successor.meta}


def _stage_row(candidate: Candidate, attempt: Attempt) -> dict[str, Any]:
    assert attempt.successor is not None
    successor = attempt.successor
    return {
        "old_vid": candidate.vid,
        "vid": attempt.vid,
        "version": attempt.version,
        "content": successor.content,
        "recipe": canonical_json(successor.recipe.model_dump() if successor.recipe else None),
        "meta": canonical_json(_successor_meta(attempt.context.artifact, successor))
        if attempt.context is not None
        else canonical_json(dict(successor.meta)),
        "inputs": list(successor.inputs),
        "validated": attempt.validated,
        "validation": attempt.detail or None,
        "operator": candidate.mode.value,
    }
