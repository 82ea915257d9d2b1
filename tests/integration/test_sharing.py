"""Sharing on the real server: `memorepair mcp --http` authenticating JWTs of an issuer
on loopback (keys generated here, JWKS over HTTP) and API keys; grants separating two
principals; the HTTP limits; and `audit exposure` after a correction."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sharing_support import INITIALIZE, Server, census, ok, running, settled, text_of
from tests.servers import free_port
from tests.unit.jwt_issuer import Issuer

from memorepair import queries
from memorepair.api import MemoryStore, Principal, open_store
from memorepair.cli import cli
from memorepair.settings import Settings

EXPOSURE_COUNT = queries.named(
    "exposure_count", root=Path(__file__).parents[1] / "cypher", label="tests/cypher"
)


@pytest.fixture(scope="module")
def port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def issuer(port: int) -> Iterator[Issuer]:
    with Issuer(f"http://127.0.0.1:{port}/mcp") as running_issuer:
        yield running_issuer


@pytest.fixture(scope="module")
def principals_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sharing") / "principals.json"


@pytest.fixture(scope="module")
def server(
    neo4j_settings: Settings, issuer: Issuer, principals_file: Path, port: int
) -> Iterator[Server]:
    with running(issuer.url, issuer.jwks_url, principals_file, port) as started:
        yield started


def cli_as(principals_file: Path, *args: str) -> Any:
    """The CLI as the owner, on the server's principals file."""
    env = {"MEMOREPAIR_PRINCIPALS_FILE": str(principals_file)}
    result = CliRunner(env=env).invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _ns(owner: MemoryStore) -> MemoryStore:
    return owner.namespace(f"s{uuid.uuid4().hex[:12]}")


def test_tokens_on_the_real_server(
    server: Server, issuer: Issuer, principals_file: Path, memory: MemoryStore
) -> None:
    memory.set_grant("ana", memory.ns, ["reader"])
    memory.record({"uid": "fact", "kind": "record", "content": "The museum opens at 9."})
    # valid: a JWT (either algorithm) and an API key
    for token in (issuer.token("ana"), issuer.token("ana", alg="ES256")):
        got = ok(server.call(token, "memory_get", uid="fact", namespace=memory.ns))
        assert got["found"] and got["artifact"]["pin"] == "fact@1"
    key = cli_as(principals_file, "principals", "add", "svc-ana")["key"]
    memory.set_grant("svc-ana", memory.ns, ["reader"])
    assert ok(server.call(key, "whoami", namespace=memory.ns))["principal"] == "svc-ana"
    assert server.post(key, INITIALIZE).status_code == 200

    now = int(time.time())
    cli_as(principals_file, "principals", "revoke", "ana-revoked")
    bad = {
        "none": None,
        "expired": issuer.token("ana", exp=now - 600, iat=now - 900),
        "wrong audience": issuer.token("ana", aud="http://127.0.0.1:1/mcp"),
        "wrong issuer": issuer.token("ana", iss="http://127.0.0.1:1"),
        "alg none": issuer.unsigned("ana"),
        "HMAC with the public key": issuer.hmac_with_public_key("ana"),
        "tampered": issuer.tampered("ana", as_sub="root"),
        "revoked principal": issuer.token("ana-revoked"),
    }
    cli_as(principals_file, "principals", "revoke", "svc-ana")
    bad["revoked API key"] = key
    for why, token in bad.items():
        response = server.post(token, INITIALIZE)
        assert response.status_code == 401, (why, response.status_code, response.text)
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge, why
        assert "mcp-session-id" not in response.headers, why
    metadata = httpx_get(f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp")
    assert metadata["resource"] == server.url
    assert [u.rstrip("/") for u in metadata["authorization_servers"]] == [issuer.url]


def httpx_get(url: str) -> dict[str, Any]:
    import httpx

    response = httpx.get(url, timeout=30)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_two_principals_on_two_namespaces_never_see_each_other(
    server: Server, issuer: Issuer, memory: MemoryStore
) -> None:
    team_a, team_b = _ns(memory), _ns(memory)
    memory.set_grant("alice", team_a.ns, ["reader", "writer"])
    memory.set_grant("bob", team_b.ns, ["reader", "writer"])
    alice, bob = issuer.token("alice"), issuer.token("bob")
    try:
        for token, ns, who in ((alice, team_a.ns, "alice"), (bob, team_b.ns, "bob")):
            for n in range(2):
                ok(
                    server.call(
                        token,
                        "memory_record",
                        uid=f"{who}-{n}",
                        content=f"{who} keeps secret number {n} about the museum",
                        namespace=ns,
                    )
                )
        hits = ok(server.call(alice, "memory_search", query="museum", k=10, namespace=team_a.ns))
        assert {h["uid"] for h in hits["hits"]} == {"alice-0", "alice-1"}
        hits = ok(server.call(bob, "memory_search", query="museum", k=10, namespace=team_b.ns))
        assert {h["uid"] for h in hits["hits"]} == {"bob-0", "bob-1"}
        settled(team_b)  # bob's reads are on record: the census starts after them
        before = census(team_b)
        answers = {}
        for tool, args in (
            ("memory_search", {"query": "museum", "k": 10}),
            ("memory_get", {"uid": "bob-0"}),
            ("memory_get", {"uid": "no-such-uid"}),
            ("memory_lineage", {"uid": "bob-0"}),
            ("memory_lineage", {"uid": "no-such-uid"}),
            ("memory_record", {"uid": "planted", "content": "alice was here"}),
            ("memory_forget", {"uids": ["bob-0"]}),
        ):
            result = server.call(alice, tool, namespace=team_b.ns, **args)
            assert result.isError and "may not" in text_of(result), (tool, text_of(result))
            answers.setdefault(tool, set()).add(text_of(result))
        # the same answer whether the uid exists or not: nothing learned
        assert len(answers["memory_get"]) == 1 and len(answers["memory_lineage"]) == 1
        assert "bob-0" not in " ".join(answers["memory_get"])
        settled(team_b)
        assert census(team_b) == before
        assert team_b.retrieve(uid="bob-0")[0].content.startswith("bob")
        lineage = team_b.lineage("bob-0")
        assert lineage[0]["by"] == "bob"  # who did what
    finally:
        team_a.clear()
        team_b.clear()


def test_limits_answer_with_mcp_errors(
    issuer: Issuer, principals_file: Path, memory: MemoryStore
) -> None:
    """A server of its own with a low request rate (30 a minute: bursts of 10)."""
    port = free_port()
    with (
        Issuer(f"http://127.0.0.1:{port}/mcp") as own,
        running(own.url, own.jwks_url, principals_file, port, rate_per_minute=30) as server,
    ):
        memory.set_grant("limited", memory.ns, ["reader", "writer"])
        token = own.token("limited")
        big_k = server.call(token, "memory_search", query="x", k=101, namespace=memory.ns)
        assert big_k.isError and "limit of 100" in text_of(big_k)
        huge = server.call(
            token, "memory_record", uid="huge", content="x" * 300_000, namespace=memory.ns
        )
        assert huge.isError and "over this server's limit" in text_of(huge)
        assert memory.lineage("huge", missing_ok=True) == []
        responses = [server.post(token, INITIALIZE) for _ in range(12)]
        limited = [r for r in responses if r.status_code == 429]
        assert limited, [r.status_code for r in responses]
        body = limited[0].json()
        assert body["jsonrpc"] == "2.0" and "rate limit" in body["error"]["message"]
        assert int(limited[0].headers["retry-after"]) >= 1
        other = own.token("limited-neighbour")  # another principal is not slowed down
        assert server.post(other, INITIALIZE).status_code == 200


def test_exposure_names_exactly_who_read_the_wrong_version(
    server: Server, issuer: Issuer, memory: MemoryStore, neo4j_settings: Settings
) -> None:
    """Alice (an MCP session), Bob (a LangGraph thread) and Carol (the Python API, with a
    session) read the wrong version; Dave and Alice's later session read only after the
    barrier. The exposure report names the first three, with their sessions, and nobody
    else."""
    from memorepair.integrations.langgraph import MemoRepairStore

    for name, roles in (("alice", ["reader"]), ("bob", ["reader"]), ("carol", ["reader"])):
        memory.set_grant(name, memory.ns, roles)
    memory.set_grant("dave", memory.ns, ["reader"])
    memory.set_grant("eve", memory.ns, ["auditor"])
    memory.record({"uid": "notes/hours", "kind": "record", "content": "The museum opens at 9."})
    memory.record(
        {
            "uid": "notes/plan",
            "kind": "summary",
            "content": "Visit the museum at 9 sharp.",
            "inputs": ["notes/hours@1"],
        }
    )

    async def alice_reads(session: Any) -> str:
        await session.call_tool("memory_get", {"uid": "notes/hours", "namespace": memory.ns})
        await session.call_tool(
            "memory_search", {"query": "museum", "k": 5, "mode": "text", "namespace": memory.ns}
        )
        return ""

    server.session(issuer.token("alice"), alice_reads)
    _langgraph_read(
        MemoRepairStore(memory.acting_as(Principal("bob", "jwt"))), "thread-bob", "plan"
    )
    with open_store(ns=memory.ns, settings=neo4j_settings, principal="carol") as carol:
        carol.retrieve(uid="notes/plan", session="api-carol")

    report = memory.update(
        "notes/hours", content="The museum opens at 10.", reason="opening hours changed"
    )
    assert report.status == "completed"
    server.session(issuer.token("alice"), alice_reads)  # after the barrier: version 2
    ok(server.call(issuer.token("dave"), "memory_get", uid="notes/hours", namespace=memory.ns))
    ok(server.call(issuer.token("dave"), "memory_get", uid="notes/plan", namespace=memory.ns))
    settled(memory)

    printed = CliRunner().invoke(
        cli, ["--ns", memory.ns, "--principal", "eve", "audit", "exposure", report.event]
    )
    assert printed.exit_code == 0, printed.output
    print("\n" + printed.output)  # the closing note pastes this report
    exposure = memory.acting_as("eve").exposure(report.event)
    rows = {(r["principal"], r["uid"], r["version"]) for r in exposure["exposures"]}
    assert {p["principal"] for p in exposure["principals"]} == {"alice", "bob", "carol"}
    assert rows == {
        ("alice", "notes/hours", 1),
        ("alice", "notes/plan", 1),
        ("bob", "notes/plan", 1),
        ("carol", "notes/plan", 1),
    }
    sessions = {r["principal"]: r["session"] for r in exposure["exposures"]}
    assert sessions["bob"] == "thread-bob" and sessions["carol"] == "api-carol"
    alice_sessions = {r["session"] for r in exposure["exposures"] if r["principal"] == "alice"}
    assert len(alice_sessions) == 1 and None not in alice_sessions  # the first MCP session only
    assert exposure["by"] == memory.caller.principal.name and exposure["barrier_at"]
    for row in exposure["exposures"]:
        assert set(row) == {
            "uid",
            "version",
            "outcome",
            "root",
            "published_at",
            "principal",
            "session",
            "reads",
            "first_at",
            "last_at",
        }  # ids and times only
    over_mcp = ok(
        server.call(
            issuer.token("eve"), "audit_exposure", event_id=report.event, namespace=memory.ns
        )
    )
    assert {p["principal"] for p in over_mcp["principals"]} == {"alice", "bob", "carol"}
    denied = server.call(
        issuer.token("dave"), "audit_exposure", event_id=report.event, namespace=memory.ns
    )
    assert denied.isError and "may not exposure" in text_of(denied)
    # the four above, and the four reads of the new versions (alice again, dave)
    assert memory.store.read(EXPOSURE_COUNT, ns=memory.ns)[0]["n"] == 8
    memory.clear()
    assert memory.store.read(EXPOSURE_COUNT, ns=memory.ns)[0]["n"] == 0


def _langgraph_read(store: Any, thread: str, key: str) -> None:
    """Read one item inside a LangGraph run whose config names `thread`."""
    from langgraph.config import get_store
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        value: str

    def node(state: State) -> State:
        item = get_store().get(("notes",), key)
        return {"value": item.value["content"] if item else ""}

    builder = StateGraph(State)
    builder.add_node("read", node)
    builder.add_edge(START, "read")
    builder.add_edge("read", END)
    graph = builder.compile(store=store)
    out = graph.invoke({"value": ""}, config={"configurable": {"thread_id": thread}})
    assert out["value"].startswith("Visit the museum")


def test_exposure_records_expire_after_their_retention(memory: MemoryStore) -> None:
    from memorepair.serving.usage import UseRecorder

    now = [1_000_000.0]  # a clock of its own: far in the past, so no other record expires
    recorder = UseRecorder(
        memory.store,
        enabled=False,
        flush_s=3600,
        half_life_s=3600,
        exposure=True,
        retention_s=86_400.0,
        clock=lambda: now[0],
    )
    recorder.note(memory.ns, [("old", 1)], ("p", "s"))
    recorder.flush()
    now[0] += 2 * 86_400
    recorder.note(memory.ns, [("new", 1)], ("p", "s"))
    recorder.flush()
    assert memory.store.read(EXPOSURE_COUNT, ns=memory.ns)[0]["n"] == 1
