"""Pictures of a cascade, before a repair (`show --plan`) and after it (`show EVENT`).

A `CascadeView` is one event's cascade as plain data: every node with its outcome, the
candidate facts (mode, value, cost, reason) and the content change (what the withdrawn
version held, what its successor holds). It is built from the audit trail
(`audit.event_cascade`) after a repair, or from a `repair.Preview` before one, so both
pictures say the same things in the same words. From a view this module draws:

- a self-contained HTML page: the cascade as a layered DAG (roots on top, then
  descendants by depth), laid out by igraph's Sugiyama layering, drawn as inline SVG,
  with the styles and the small script that shows a node's details inlined (nothing is
  fetched when the page is viewed);
- Mermaid and Graphviz DOT text for pasting into documents;
- unified diffs of each artifact's content, for `plan --diff`.

Large cascades are collapsed before drawing: past `max_nodes`, nodes of the same depth,
kind and outcome become one box (and, if that is still too many, the deepest layers are
merged), and the page says so.
"""

from __future__ import annotations

import difflib
import html
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from string import Template
from typing import Any, Literal, Protocol

from memorepair.candidates import CandidateFamily, CascadeNode
from memorepair.execution import Attempt
from memorepair.model import Artifact, EventType, RepairEventSpec
from memorepair.publication import Outcomes

Stage = Literal["plan", "repair"]
Format = Literal["html", "mermaid", "dot"]

#: Past this many nodes a drawing groups nodes by depth, kind and outcome.
DEFAULT_MAX_NODES = 150

#: Each outcome's colours (fill, stroke) and what it means, in legend order.
OUTCOMES: dict[str, tuple[str, str, str]] = {
    "root_deleted": ("#eceff1", "#37474f", "root deleted by the event"),
    "root_replaced": ("#bbdefb", "#1565c0", "root replaced by the event's new version"),
    "published": ("#c8e6c9", "#2e7d32", "successor validated and republished"),
    "failed": ("#ffcdd2", "#c62828", "successor failed to build or validate"),
    "blocked": ("#ffe0b2", "#ef6c00", "a required predecessor was not republished"),
    "input_withdrawn": (
        "#d7ccc8",
        "#6d4c41",
        "support withdrawn or replaced by an overlapping event",
    ),
    "unselected": ("#fff9c4", "#f9a825", "not worth its cost (left out by the selection)"),
    "not_executable": ("#e1bee7", "#6a1b9a", "no operator can repair it"),
    "removed": ("#e0e0e0", "#616161", "removed: nothing valid to rebuild it from"),
    "late_arrival": ("#f8bbd0", "#ad1457", "derived from the cascade while the repair ran"),
    "open": ("#ffffff", "#9e9e9e", "withdrawn; the event has not finished"),
}
_UNKNOWN = ("#ffffff", "#000000", "")

BOX_W, BOX_H, HGAP, VGAP, MARGIN = 200, 48, 28, 64, 24
#: Contents longer than this are shown whole on each side instead of word by word
#: (the word diff is quadratic in the worst case).
_WORD_DIFF_LIMIT = 20_000


@dataclass(frozen=True)
class Node:
    """One node of the cascade and what became (or would become) of it."""

    uid: str
    version: int
    kind: str
    arch: str | None
    root: bool
    outcome: str
    mode: str | None = None
    value: float | None = None
    cost: float | None = None
    selected: bool | None = None
    reason: str = ""
    before: str | None = None  # the withdrawn version's content (None: none, or erased)
    erased: bool = False  # the graph holds an erasure instead of `before`
    erased_by: str | None = None  # the erasing event's key, when the graph records it
    after: str | None = None  # the successor's (published, attempted or replacement)
    after_erased: bool = False
    successor: int | None = None  # the successor's version number, when it has one
    inputs: tuple[str, ...] = ()  # the nodes of this cascade it was derived from

    @property
    def versions(self) -> str:
        if self.successor:
            return f"v{self.version} → v{self.successor}"
        return f"v{self.version}" + (" → replacement" if self.root and self.after else "")

    @property
    def kind_label(self) -> str:
        return f"skill.{self.arch}" if self.arch else self.kind


@dataclass(frozen=True)
class CascadeView:
    """One event's cascade as data: who was withdrawn, and what became of each."""

    event: str
    type: str
    stage: Stage
    status: str
    reason: str
    nodes: tuple[Node, ...]
    #: The principal that asked for the event (None for a plan, or an older event).
    by: str | None = None

    def depths(self) -> dict[str, int]:
        """Longest distance from a root over the cascade's edges (roots 0), so every edge
        points one or more layers down."""
        by_uid = {n.uid: n for n in self.nodes}
        depth: dict[str, int] = {}
        for uid in _input_order(self.nodes):
            inputs = [depth[u] for u in by_uid[uid].inputs if u in depth]
            depth[uid] = 0 if by_uid[uid].root or not inputs else 1 + max(inputs)
        return depth

    def counts(self) -> dict[str, int]:
        return dict(Counter(n.outcome for n in self.nodes))

    def as_dict(self) -> dict[str, Any]:
        depths = self.depths()
        return {
            "event": self.event,
            "type": self.type,
            "stage": self.stage,
            "status": self.status,
            "reason": self.reason,
            "by": self.by,
            "counts": self.counts(),
            "nodes": [{**asdict(n), "depth": depths[n.uid]} for n in self.nodes],
        }

    # The renderings, as methods so that a surface needs nothing but what the API returns.
    def html(self, max_nodes: int = DEFAULT_MAX_NODES) -> str:
        return to_html(self, max_nodes)

    def mermaid(self, max_nodes: int = DEFAULT_MAX_NODES) -> str:
        return to_mermaid(self, max_nodes)

    def dot(self, max_nodes: int = DEFAULT_MAX_NODES) -> str:
        return to_dot(self, max_nodes)

    def diff(self) -> dict[str, Any]:
        return plan_diff(self)


def _input_order(nodes: Sequence[Node]) -> list[str]:
    """Uids with every input before its dependents (Kahn; leftovers of a cycle last)."""
    uids = {n.uid for n in nodes}
    waiting = {n.uid: {u for u in n.inputs if u in uids and u != n.uid} for n in nodes}
    dependents: dict[str, list[str]] = defaultdict(list)
    for uid, inputs in waiting.items():
        for u in inputs:
            dependents[u].append(uid)
    ready = sorted(u for u, inputs in waiting.items() if not inputs)
    order: list[str] = []
    while ready:
        uid = ready.pop()
        order.append(uid)
        for d in dependents[uid]:
            waiting[d].discard(uid)
            if not waiting[d]:
                ready.append(d)
    return order + sorted(uids - set(order))


# ---- building a view -------------------------------------------------------------------
def from_audit(event: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]) -> CascadeView:
    """The view of a repaired (or still open) event, from `audit.event_cascade`."""
    nodes = tuple(_audited_node(r) for r in rows)
    return CascadeView(
        event=str(event["id"]),
        type=str(event["type"]),
        stage="repair",
        status=str(event.get("status") or "open"),
        reason=str(event.get("reason") or ""),
        nodes=nodes,
        by=event.get("by"),
    )


def _audited_node(row: Mapping[str, Any]) -> Node:
    successor = row.get("successor") or {}
    return Node(
        uid=row["uid"],
        version=int(row["version"]),
        kind=row["kind"],
        arch=row.get("arch"),
        root=bool(row["root"]),
        outcome=row["outcome"],
        mode=row.get("mode"),
        value=row.get("value"),
        cost=row.get("cost"),
        selected=row.get("selected"),
        reason=row.get("reason") or successor.get("validation") or "",
        before=row.get("content"),
        erased=bool(row.get("erased")),
        erased_by=row.get("erased_by") or successor.get("erased_by"),
        after=successor.get("content"),
        after_erased=bool(successor.get("erased")),
        successor=successor.get("version"),
        inputs=tuple(row.get("inputs") or ()),
    )


class PlanLike(Protocol):
    """What a view reads of `repair.Plan` (this module sits below the repair it draws)."""

    @property
    def spec(self) -> RepairEventSpec: ...
    @property
    def family(self) -> CandidateFamily: ...
    @property
    def selected(self) -> tuple[str, ...]: ...


class PreviewLike(Protocol):
    """What a view reads of `repair.Preview`."""

    @property
    def plan(self) -> PlanLike: ...
    @property
    def nodes(self) -> tuple[CascadeNode, ...]: ...
    @property
    def attempts(self) -> tuple[Attempt, ...]: ...
    @property
    def outcomes(self) -> Outcomes: ...
    @property
    def current(self) -> Mapping[str, Artifact]: ...


def from_preview(preview: PreviewLike) -> CascadeView:
    """The view of what `repair` would do now (published means: would be published)."""
    spec = preview.plan.spec
    outcome_of = {uid: o for o, uids in preview.outcomes.sets.items() for uid in uids}
    attempts = {a.candidate.uid: a for a in preview.attempts}
    inside = {n.uid for n in preview.nodes}
    nodes: list[Node] = []
    for cn in sorted(preview.nodes, key=lambda n: n.uid):
        current = preview.current.get(cn.vid)
        base = Node(
            uid=cn.uid,
            version=cn.version,
            kind=cn.kind.value,
            arch=cn.arch.value if cn.arch else None,
            root=cn.root,
            outcome="",
            before=current.content if current else None,
            inputs=tuple(u for u in cn.inputs if u in inside),
        )
        if cn.root:
            nodes.append(_previewed_root(base, spec.type, spec.delta, spec.reason))
        else:
            outcome = outcome_of.get(cn.uid, "unselected")
            nodes.append(_previewed(base, preview, outcome, attempts.get(cn.uid)))
    return CascadeView(spec.id, spec.type.value, "plan", "plan", spec.reason, tuple(nodes))


def _previewed(base: Node, preview: PreviewLike, outcome: str, attempt: Attempt | None) -> Node:
    """A descendant as the preview decided it: its candidate facts and successor."""
    c = preview.plan.family.by_uid[base.uid]
    successor = attempt.successor if attempt else None
    return Node(
        **{
            **asdict(base),
            "outcome": outcome,
            "mode": c.mode.value,
            "value": c.value,
            "cost": c.cost,
            "selected": base.uid in preview.plan.selected,
            "reason": preview.outcomes.details.get(base.uid) or c.reason,
            "after": successor.content if successor else None,
            "successor": attempt.version if attempt and successor else None,
        }
    )


def _previewed_root(base: Node, event_type: EventType, delta: Any, reason: str) -> Node:
    if event_type is EventType.DELETE:
        return Node(**{**asdict(base), "outcome": "root_deleted", "reason": reason})
    content, _, _ = delta(base.uid)
    return Node(**{**asdict(base), "outcome": "root_replaced", "reason": reason, "after": content})


# ---- content changes ---------------------------------------------------------------------
def readable(text: str) -> str:
    """A JSON object or array pretty-printed (so a diff shows the field that changed),
    anything else as it is."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.dumps(json.loads(stripped), indent=2, sort_keys=True, ensure_ascii=False)
        except ValueError:
            return text
    return text


def unified_diff(node: Node) -> list[str]:
    """The content change of one node as unified-diff lines (no trailing newlines)."""
    old = [] if node.before is None else readable(node.before).splitlines()
    new = [] if node.after is None else readable(node.after).splitlines()
    after_name = f"v{node.successor}" if node.successor else "replacement"
    return list(
        difflib.unified_diff(
            old,
            new,
            fromfile=f"{node.uid}@v{node.version}" + (" (erased)" if node.erased else ""),
            tofile=f"{node.uid}@{after_name}" + (f" ({node.mode})" if node.mode else ""),
            lineterm="",
        )
    )


def plan_diff(view: CascadeView) -> dict[str, Any]:
    """Every node, roots first and then by depth: those with a new content (successor or
    replacement) under `changes` with their unified diff, the rest under `withdrawn`."""
    depths = view.depths()
    ordered = sorted(view.nodes, key=lambda n: (depths[n.uid], n.uid))
    entries = [
        {
            "uid": n.uid,
            "versions": n.versions,
            "kind": n.kind_label,
            "mode": n.mode,
            "outcome": n.outcome,
            "reason": n.reason,
            "depth": depths[n.uid],
            "erased": n.erased,
            "before": n.before,
            "after": n.after,
            "diff": unified_diff(n),
        }
        for n in ordered
    ]
    return {
        "changes": [e for e in entries if e["after"] is not None],
        "withdrawn": [e for e in entries if e["after"] is None],
        "counts": view.counts(),
    }


def word_diff(before: str | None, after: str | None) -> list[tuple[str, str]]:
    """The change from `before` to `after` as ("=" | "-" | "+", text) runs: line by line,
    and word by word inside the lines that changed."""
    old, new = readable(before or ""), readable(after or "")
    if len(old) + len(new) > _WORD_DIFF_LIMIT:
        return [op for op in (("-", old), ("+", new)) if op[1]]
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    runs: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        gone, came = "".join(a[i1:i2]), "".join(b[j1:j2])
        if tag == "equal":
            runs.append(("=", gone))
        elif tag == "replace":
            runs += _runs(_tokens(gone), _tokens(came))
        else:
            runs.append(("-", gone) if gone else ("+", came))
    return runs


def _runs(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, str]]:
    runs: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            runs.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            runs.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            runs.append(("+", "".join(b[j1:j2])))
    return runs


def _tokens(text: str) -> list[str]:
    return re.findall(r"\s+|\w+|[^\w\s]", text)


# ---- collapsing large cascades -----------------------------------------------------------
@dataclass(frozen=True)
class Box:
    """One drawn box: a node, or a group of nodes of one depth, kind and outcome."""

    id: str
    depth: int
    kind: str
    outcome: str
    members: tuple[str, ...]
    node: Node | None = None  # set when the box is one node


@dataclass(frozen=True)
class Drawing:
    boxes: tuple[Box, ...]
    edges: tuple[tuple[str, str], ...]  # box id -> box id
    collapsed: str = ""  # why and how nodes were grouped ("" when drawn one by one)
    notes: tuple[str, ...] = field(default_factory=tuple)


def drawing(view: CascadeView, max_nodes: int = DEFAULT_MAX_NODES) -> Drawing:
    """Boxes and edges to draw: one box per node, or groups past `max_nodes` nodes."""
    depths = view.depths()
    if len(view.nodes) <= max_nodes:
        boxes = [
            Box(f"n{i}", depths[n.uid], n.kind_label, n.outcome, (n.uid,), n)
            for i, n in enumerate(view.nodes)
        ]
        return Drawing(
            tuple(boxes),
            _edges(view.nodes, {n.uid: b.id for n, b in zip(view.nodes, boxes, strict=True)}),
        )
    return _collapsed(view, depths, max_nodes)


def _collapsed(view: CascadeView, depths: Mapping[str, int], max_nodes: int) -> Drawing:
    """Group by (depth, kind, outcome); merge the deepest layers until few enough boxes."""
    deepest = max(depths.values(), default=0)
    cap = _deepest_layer_kept(view.nodes, depths, max_nodes)
    groups = _groups(view.nodes, depths, cap)
    boxes: list[Box] = []
    box_of: dict[str, str] = {}
    for i, ((depth, kind, outcome), members) in enumerate(sorted(groups.items())):
        box = Box(f"g{i}", depth, kind, outcome, tuple(sorted(members)))
        boxes.append(box)
        box_of.update((uid, box.id) for uid in members)
    why = (
        f"{len(view.nodes):,} artifacts are drawn as {len(boxes):,} groups (same depth, kind "
        f"and outcome) because the cascade has more than {max_nodes:,} (--max-nodes)"
    )
    if cap < deepest:
        why += f"; depths {cap} to {deepest} are drawn as one layer"
    return Drawing(tuple(boxes), _edges(view.nodes, box_of), why + ".")


def _deepest_layer_kept(nodes: Sequence[Node], depths: Mapping[str, int], max_nodes: int) -> int:
    """The largest depth `cap` such that grouping by (min(depth, cap), kind, outcome)
    gives at most `max_nodes` groups (1 when none does): one pass over the nodes, then
    one over the layers, deepest first."""
    per_layer: dict[int, set[tuple[str, str]]] = defaultdict(set)
    for n in nodes:
        per_layer[depths[n.uid]].add((n.kind_label, n.outcome))
    deepest = max(per_layer, default=0)
    above = [0] * (deepest + 2)  # groups in the layers shallower than d
    for d in range(deepest + 1):
        above[d + 1] = above[d] + len(per_layer.get(d, ()))
    merged: set[tuple[str, str]] = set()  # (kind, outcome) pairs at depth >= cap
    for cap in range(deepest, 0, -1):
        merged |= per_layer.get(cap, set())
        if above[cap] + len(merged) <= max_nodes:
            return cap
    return 1


def _groups(
    nodes: Sequence[Node], depths: Mapping[str, int], cap: int
) -> dict[tuple[int, str, str], list[str]]:
    groups: dict[tuple[int, str, str], list[str]] = defaultdict(list)
    for n in nodes:
        groups[(min(depths[n.uid], cap), n.kind_label, n.outcome)].append(n.uid)
    return groups


def _edges(nodes: Sequence[Node], box_of: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    pairs = {
        (box_of[u], box_of[n.uid])
        for n in nodes
        for u in n.inputs
        if u in box_of and box_of[u] != box_of[n.uid]
    }
    return tuple(sorted(pairs))


# ---- Mermaid and DOT ----------------------------------------------------------------------
def box_lines(box: Box) -> tuple[str, str]:
    """The two lines of text a box shows."""
    n = box.node
    if n is None:
        return f"{len(box.members):,} x {box.kind}", f"{box.outcome} · depth {box.depth}"
    second = f"{n.versions} · {n.kind_label}" + (f" · {n.mode}" if n.mode else "")
    if n.root:
        second += " · root"
    return n.uid, second


def to_mermaid(view: CascadeView, max_nodes: int = DEFAULT_MAX_NODES) -> str:
    d = drawing(view, max_nodes)
    lines = ["flowchart TB", f"  %% {_title(view)}"]
    if d.collapsed:
        lines.append(f"  %% {d.collapsed}")
    for box in d.boxes:
        first, second = (_mermaid_text(t) for t in box_lines(box))
        lines.append(f'  {box.id}["{first}<br/>{second}"]:::{box.outcome}')
    lines += [f"  {a} --> {b}" for a, b in d.edges]
    for outcome in sorted({b.outcome for b in d.boxes}):
        fill, stroke, _ = OUTCOMES.get(outcome, _UNKNOWN)
        lines.append(f"  classDef {outcome} fill:{fill},stroke:{stroke},color:#111")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    return html.escape(text, quote=True).replace("&#x27;", "#39;").replace("&quot;", "#quot;")


def to_dot(view: CascadeView, max_nodes: int = DEFAULT_MAX_NODES) -> str:
    d = drawing(view, max_nodes)
    lines = [
        "digraph cascade {",
        f"  label={_dot_text(_title(view) + (chr(10) + d.collapsed if d.collapsed else ''))};",
        "  labelloc=t; rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
    ]
    layers: dict[int, list[str]] = defaultdict(list)
    for box in d.boxes:
        fill, stroke, _ = OUTCOMES.get(box.outcome, _UNKNOWN)
        label = "\n".join(box_lines(box))
        lines.append(
            f"  {box.id} [label={_dot_text(label)}, fillcolor={_dot_text(fill)}, "
            f"color={_dot_text(stroke)}, tooltip={_dot_text(box.outcome)}];"
        )
        layers[box.depth].append(box.id)
    lines += [f"  {{ rank=same; {'; '.join(ids)}; }}" for _, ids in sorted(layers.items())]
    lines += [f"  {a} -> {b};" for a, b in d.edges]
    return "\n".join(lines) + "\n}\n"


def _dot_text(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _title(view: CascadeView) -> str:
    when = "plan (nothing written)" if view.stage == "plan" else f"repair, {view.status}"
    return f"event {view.event} ({view.type}), {when}: {len(view.nodes)} artifacts withdrawn"


# ---- the HTML page ------------------------------------------------------------------------
def to_html(view: CascadeView, max_nodes: int = DEFAULT_MAX_NODES) -> str:
    """A self-contained page: header, legend, the DAG as inline SVG, a details panel."""
    d = drawing(view, max_nodes)
    page = Template(_asset("page.html"))
    return page.substitute(
        title=html.escape(_title(view)),
        style=_asset("show.css") + _outcome_css(),
        script=_asset("show.js"),
        header=_header(view, d),
        svg=_svg(view, d),
        data=_script_json(_details(view, d)),
    )


def _outcome_css() -> str:
    return "".join(
        f".outcome-{o} rect, .outcome-{o} .swatch {{ fill: {fill}; stroke: {stroke}; "
        f"background: {fill}; border-color: {stroke}; }}\n"
        for o, (fill, stroke, _) in OUTCOMES.items()
    )


def _asset(name: str) -> str:
    return (resources.files("memorepair") / "show_assets" / name).read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element: '<', '>' and '&' only occur in strings,
    where their \\u escapes mean the same."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _header(view: CascadeView, d: Drawing) -> str:
    e = html.escape
    stage = (
        "Plan: nothing has been written; outcomes are what a repair run now would do."
        if view.stage == "plan"
        else f"Repair: event status {e(view.status)}."
    )
    counts = view.counts()
    legend = "".join(
        f'<li class="legend outcome-{o}"><span class="swatch"></span>{e(o)} '
        f"<b>{counts[o]}</b> <small>{e(text)}</small></li>"
        for o, (_, _, text) in OUTCOMES.items()
        if o in counts
    )
    parts = [
        f"<h1>{e(view.event)} <small>({e(view.type)})</small></h1>",
        f'<p class="stage stage-{view.stage}">{stage}'
        + (f" Reason: {e(view.reason)}" if view.reason else "")
        + (f" Asked by: {e(view.by)}" if view.by else "")
        + "</p>",
        f'<ul class="legend-list">{legend}</ul>',
    ]
    if d.collapsed:
        parts.append(f'<p class="collapsed" id="collapsed-note">{e(d.collapsed)}</p>')
    return "\n".join(parts)


def _svg(view: CascadeView, d: Drawing) -> str:
    positions, routes, width, height = layout(d)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="cascade" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/>'
        "</marker></defs>",
    ]
    for (a, b), points in zip(d.edges, routes, strict=True):
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        parts.append(
            f'<polyline class="edge" data-from="{a}" data-to="{b}" points="{path}" '
            'marker-end="url(#arrow)"/>'
        )
    for box in d.boxes:
        parts.append(_svg_box(box, positions[box.id]))
    parts.append("</svg>")
    return "\n".join(parts)


def _svg_box(box: Box, at: tuple[float, float]) -> str:
    e = html.escape
    x, y = at
    first, second = box_lines(box)
    kind = "node" if box.node is not None else "node group"
    root = " root" if box.node is not None and box.node.root else ""
    uid_attr = f' data-uid="{e(box.node.uid)}"' if box.node is not None else ""
    tip = _tooltip(box)
    return (
        f'<g class="{kind} outcome-{e(box.outcome)}{root}" id="{box.id}"{uid_attr} '
        f'data-outcome="{e(box.outcome)}" tabindex="0" transform="translate({x:.1f},{y:.1f})">'
        f"<title>{e(tip)}</title>"
        f'<rect width="{BOX_W}" height="{BOX_H}" rx="8"/>'
        f'<text x="10" y="19" class="uid">{e(_clip(first, 26))}</text>'
        f'<text x="10" y="37" class="sub">{e(_clip(second, 32))}</text></g>'
    )


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _tooltip(box: Box) -> str:
    n = box.node
    if n is None:
        shown = ", ".join(box.members[:12]) + (" ..." if len(box.members) > 12 else "")
        return f"{len(box.members)} x {box.kind}, {box.outcome}, depth {box.depth}: {shown}"
    facts = [f"{n.uid} {n.versions}", f"outcome {n.outcome}", f"kind {n.kind_label}"]
    if n.mode:
        facts.append(f"mode {n.mode}")
    if n.value is not None:
        facts.append(f"value {n.value:g}, cost {n.cost or 0:g}")
    if n.reason:
        facts.append(n.reason)
    return "\n".join(facts)


def layout(
    d: Drawing,
) -> tuple[dict[str, tuple[float, float]], list[list[tuple[float, float]]], int, int]:
    """Top-left corner of every box, each edge's polyline, and the picture's size.

    Layers are the boxes' depths; igraph's Sugiyama layout orders each layer to reduce
    crossings and routes edges that skip layers through bend points.
    """
    import igraph

    index = {b.id: i for i, b in enumerate(d.boxes)}
    graph = igraph.Graph(
        n=len(d.boxes), edges=[(index[a], index[b]) for a, b in d.edges], directed=True
    )
    placed = graph.layout_sugiyama(layers=[b.depth for b in d.boxes], hgap=1, vgap=1)

    bends_of = placed.edge_routing or [[]] * len(d.edges)
    # igraph may place boxes (or the bends of long edges) at x < 0: shift all right
    left = min([x for x, _ in placed.coords] + [x for b in bends_of for x, _ in b], default=0.0)

    def point(x: float, layer: float) -> tuple[float, float]:
        return MARGIN + (x - left) * (BOX_W + HGAP), MARGIN + layer * (BOX_H + VGAP)

    positions = {b.id: point(*placed.coords[i]) for b, i in ((b, index[b.id]) for b in d.boxes)}
    routes = [
        _route(positions[a], positions[b], [point(x, y) for x, y in bends])
        for (a, b), bends in zip(d.edges, bends_of, strict=True)
    ]
    return positions, routes, *_size(positions, routes)


def _size(
    positions: Mapping[str, tuple[float, float]], routes: list[list[tuple[float, float]]]
) -> tuple[int, int]:
    """The picture's width and height: every box and every edge's bends inside."""
    right = max([x for x, _ in positions.values()] + [x for r in routes for x, _ in r] + [0])
    width = int(right + BOX_W + 2 * MARGIN)
    height = int(max((y for _, y in positions.values()), default=0) + BOX_H + 2 * MARGIN)
    return width, height


def _route(
    start: tuple[float, float], end: tuple[float, float], middle: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    """An edge from the bottom of its start box, through its bends, to the top of its end."""
    (ax, ay), (bx, by) = start, end
    return (
        [(ax + BOX_W / 2, ay + BOX_H)]
        + [(x + BOX_W / 2, y + BOX_H / 2) for x, y in middle]
        + [(bx + BOX_W / 2, by)]
    )


def _details(view: CascadeView, d: Drawing) -> dict[str, Any]:
    """What the page's script shows when a box is clicked, by box id."""
    by_uid = {n.uid: n for n in view.nodes}
    details: dict[str, Any] = {}
    for box in d.boxes:
        if box.node is None:
            details[box.id] = {
                "group": True,
                "title": f"{len(box.members):,} x {box.kind}",
                "facts": [["outcome", box.outcome], ["depth", str(box.depth)]],
                "members": [f"{u} {by_uid[u].versions}" for u in box.members[:500]],
                "more": max(0, len(box.members) - 500),
            }
            continue
        details[box.id] = _node_details(box.node)
    return details


def _node_details(n: Node) -> dict[str, Any]:
    facts = [
        ["uid", n.uid],
        ["versions", n.versions],
        ["kind", n.kind_label],
        ["outcome", n.outcome],
        ["mode", n.mode or ("root" if n.root else "")],
        ["value", "" if n.value is None else f"{n.value:g}"],
        ["cost", "" if n.cost is None else f"{n.cost:g}"],
        ["selected", "" if n.selected is None else ("yes" if n.selected else "no")],
        ["reason", n.reason],
        ["derived from", ", ".join(n.inputs)],
        ["erased by", n.erased_by or ""],
    ]
    return {
        "group": False,
        "title": n.uid,
        "facts": [f for f in facts if f[1]],
        "erased": n.erased,
        "after_erased": n.after_erased,
        "has_before": n.before is not None,
        "has_after": n.after is not None,
        "diff": word_diff(n.before, n.after),
    }
