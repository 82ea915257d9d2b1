"""Pictures of a cascade from plain data: layering, collapsing, the three formats, diffs."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from memorepair import show
from memorepair.show import CascadeView, Node


def _view(nodes: list[Node], stage: show.Stage = "repair") -> CascadeView:
    return CascadeView("evt-1", "correct", stage, "completed", "budget fix", tuple(nodes))


def _diamond() -> CascadeView:
    """r -> a -> c, r -> b -> c, r -> c (c sits below both a and b)."""
    return _view(
        [
            Node("r", 1, "record", None, True, "root_replaced", before="1200", after="1500"),
            Node(
                "a",
                1,
                "cache",
                None,
                False,
                "published",
                "recompute",
                2,
                1,
                True,
                before="x 1200 y",
                after="x 1500 y",
                successor=2,
                inputs=("r",),
            ),
            Node(
                "b",
                1,
                "summary",
                None,
                False,
                "failed",
                "regen",
                4,
                3,
                True,
                reason="validation failed: cites r@1",
                before="old",
                after="new",
                successor=2,
                inputs=("r",),
            ),
            Node(
                "c",
                2,
                "skill",
                "prompt",
                False,
                "blocked",
                "regen",
                6,
                4,
                True,
                reason="required predecessors not republished: ['b']",
                before="keep",
                inputs=("a", "b", "r"),
            ),
            Node(
                "gone",
                1,
                "record",
                None,
                False,
                "removed",
                "remove",
                erased=True,
                reason="no retained support left",
                inputs=("r",),
            ),
        ]
    )


class _Nodes(HTMLParser):
    """The SVG boxes of a page: (id, class, data-uid)."""

    def __init__(self) -> None:
        super().__init__()
        self.boxes: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "g" and "node" in found.get("class", "").split():
            self.boxes.append(found)


def test_depth_is_the_longest_path_from_a_root() -> None:
    assert _diamond().depths() == {"r": 0, "a": 1, "b": 1, "gone": 1, "c": 2}


def test_every_node_is_drawn_with_its_outcome_class_and_the_page_is_self_contained() -> None:
    page = _diamond().html()
    parser = _Nodes()
    parser.feed(page)
    drawn = {b["data-uid"]: b["class"].split() for b in parser.boxes}
    assert drawn.keys() == {"r", "a", "b", "c", "gone"}
    for node in _diamond().nodes:
        assert f"outcome-{node.outcome}" in drawn[node.uid]
    assert "root" in drawn["r"] and "root" not in drawn["a"]
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing fetched
    assert "<script src" not in page and "<link" not in page


def test_page_data_cannot_close_its_script_element() -> None:
    hostile = Node("x", 1, "record", None, True, "root_deleted", before="</script><b>hi</b>&")
    page = _view([hostile]).html()
    data = page.split('id="cascade-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and ">" not in data
    details = json.loads(data)
    assert details["n0"]["diff"] == [["-", "</script><b>hi</b>&"]]


def test_erased_content_is_said_to_be_erased() -> None:
    page = _diamond().html()
    data = json.loads(page.split('id="cascade-data">', 1)[1].split("</script>", 1)[0])
    gone = next(d for d in data.values() if d["title"] == "gone")
    assert gone["erased"] is True and gone["has_before"] is False


def test_large_cascades_collapse_by_depth_kind_and_outcome_and_say_so() -> None:
    nodes = [Node("root", 1, "record", None, True, "root_deleted")]
    nodes += [
        Node(
            f"s{i}",
            1,
            "summary",
            None,
            False,
            "published" if i % 2 else "removed",
            inputs=("root",),
        )
        for i in range(300)
    ]
    nodes += [
        Node(f"e{i}", 1, "cache", None, False, "published", inputs=(f"s{i}",)) for i in range(300)
    ]
    view = _view(nodes)
    drawn = show.drawing(view, max_nodes=50)
    assert len(drawn.boxes) == 4  # root; summaries published / removed; caches
    assert sorted(len(b.members) for b in drawn.boxes) == [1, 150, 150, 300]
    assert "601 artifacts are drawn as 4 groups" in drawn.collapsed
    page = view.html(max_nodes=50)
    assert 'id="collapsed-note"' in page and "--max-nodes" in page
    assert "%% 601 artifacts are drawn as 4 groups" in view.mermaid(max_nodes=50)


def test_deep_cascades_merge_their_deepest_layers() -> None:
    chain = [Node("n0", 1, "record", None, True, "root_deleted")]
    chain += [
        Node(f"n{i}", 1, "summary", None, False, "published", inputs=(f"n{i - 1}",))
        for i in range(1, 40)
    ]
    drawn = show.drawing(_view(chain), max_nodes=10)
    assert len(drawn.boxes) <= 10
    assert "drawn as one layer" in drawn.collapsed


def test_mermaid_and_dot_name_every_node_with_its_outcome() -> None:
    view = _diamond()
    mermaid, dot = view.mermaid(), view.dot()
    assert mermaid.startswith("flowchart TB")
    for node in view.nodes:
        assert re.search(rf'\["{re.escape(node.uid)}<br/>.*"\]:::{node.outcome}', mermaid)
        assert f'label="{node.uid}\\n' in dot
    assert "classDef published fill:#c8e6c9" in mermaid
    assert "{ rank=same; n0; }" in dot  # the root alone on the top layer
    assert dot.count("->") == 6


def test_plan_diff_shows_changes_and_what_stays_withdrawn() -> None:
    diff = _diamond().diff()
    changed = {c["uid"]: c for c in diff["changes"]}
    assert list(changed) == ["r", "a", "b"]  # roots first, then by depth
    assert "-x 1200 y" in changed["a"]["diff"] and "+x 1500 y" in changed["a"]["diff"]
    assert changed["r"]["versions"] == "v1 → replacement"
    stays = {w["uid"]: w for w in diff["withdrawn"]}
    assert stays["c"]["reason"].startswith("required predecessors")
    assert stays["gone"]["erased"] is True


def test_word_diff_marks_only_what_changed() -> None:
    runs = show.word_diff("Ana budgets 1200 EUR.\nShe travels alone.", "Ana budgets 1500 EUR.")
    assert ("-", "1200") in runs and ("+", "1500") in runs
    assert ("-", "\nShe travels alone.") in runs
    assert "".join(t for op, t in runs if op != "+") == "Ana budgets 1200 EUR.\nShe travels alone."
    assert "".join(t for op, t in runs if op != "-") == "Ana budgets 1500 EUR."


def test_json_contents_are_compared_field_by_field() -> None:
    node = Node(
        "call",
        1,
        "record",
        None,
        True,
        "root_replaced",
        before='{"args": {"amount": 1200}, "f": "convert"}',
        after='{"f": "convert", "args": {"amount": 1500}}',
    )
    assert [line for line in show.unified_diff(node) if line[:1] in "+-" and line[1:2] == " "] == [
        '-    "amount": 1200',
        '+    "amount": 1500',
    ]


def test_layout_keeps_every_box_and_edge_inside_the_picture() -> None:
    # the demo's correct event: igraph centres the last layer's pair at x = -0.5 and 0.5
    shape = {"call": (), "cache": ("call",), "skill": ("call",), "sum": ("cache",)}
    shape |= {"emb": ("sum",), "sum-ana": ("sum",), "late": ("call", "emb")}
    drawn = show.drawing(
        _view(
            [
                Node(uid, 1, "record", None, not inputs, "published", inputs=inputs)
                for uid, inputs in shape.items()
            ]
        )
    )
    positions, routes, width, height = show.layout(drawn)
    for x, y in positions.values():
        assert x >= 0 and x + show.BOX_W <= width and y >= 0 and y + show.BOX_H <= height
    assert all(0 <= x <= width and 0 <= y <= height for route in routes for x, y in route)
    assert len(routes) == len(drawn.edges) == 7
