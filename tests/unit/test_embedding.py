"""The embedders (offline default with the network cut off; the HTTP client against a real
server on 127.0.0.1) and the meta terms search filters on."""

from __future__ import annotations

import math
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from embedding_endpoint import Endpoint, serving

from memorepair.api import embedder_for
from memorepair.embedding import (
    Embedder,
    HttpEmbedder,
    WordLlamaEmbedder,
    embed_rows,
    meta_terms,
)
from memorepair.errors import ConfigError, EmbeddingError
from memorepair.settings import load_settings


def _norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_offline_default_loads_from_its_wheel_without_any_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> None:
        attempts.append(args)
        raise OSError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    embedder = WordLlamaEmbedder(256)
    texts = ["Ana pays in Swiss francs.", "", "The hotel is near the lake.", "Ana pays in CHF."]
    vectors = embedder.embed(texts)
    assert attempts == []
    assert isinstance(embedder, Embedder)
    assert embedder.name == "wordllama/l2_supercat-256" and embedder.dimension == 256
    assert [len(v) for v in vectors] == [256] * 4
    assert all(abs(_norm(v) - 1.0) < 1e-5 for i, v in enumerate(vectors) if i != 1)
    # in input order (embedded shortest-first internally), and meaningful
    assert vectors == [embedder.embed([t])[0] for t in texts]
    assert _cos(vectors[0], vectors[3]) > _cos(vectors[0], vectors[2])


def test_offline_dimensions_are_the_packaged_ones() -> None:
    small = WordLlamaEmbedder(64)
    assert small.name == "wordllama/l2_supercat-64" and len(small.embed(["x y"])[0]) == 64
    with pytest.raises(ConfigError, match="64, 128, 256"):
        WordLlamaEmbedder(300)


@pytest.fixture
def endpoint() -> Iterator[str]:
    with serving() as url:
        yield url


def test_http_embedder_batches_orders_and_authenticates(endpoint: str) -> None:
    embedder = HttpEmbedder(endpoint, "mini", api_key="sk-test", batch_size=2)
    vectors = embedder.embed(["a", "bbb", "cc"])
    assert [r["path"] for r in Endpoint.requests] == ["/v1/embeddings", "/v1/embeddings"]
    assert [r["input"] for r in Endpoint.requests] == [["a", "bbb"], ["cc"]]
    assert {r["model"] for r in Endpoint.requests} == {"mini"}
    assert Endpoint.headers_seen == ["Bearer sk-test", "Bearer sk-test"]
    expected = [[float(n + d) for d in range(8)] for n in (1, 3, 2)]
    for got, raw in zip(vectors, expected, strict=True):  # reordered by index, unit length
        assert got == pytest.approx([x / _norm(raw) for x in raw])
    assert embedder.name == "openai/mini" and embedder.dimension == 8


def test_http_embedder_errors_are_clear(endpoint: str) -> None:
    with pytest.raises(EmbeddingError, match="dimension"):
        HttpEmbedder(endpoint, "mini", dimension=16).embed(["a"])
    Endpoint.broken = True
    with pytest.raises(EmbeddingError, match=r"without data\[\]\.embedding"):
        HttpEmbedder(endpoint, "mini").embed(["a"])
    with pytest.raises(EmbeddingError, match="failed"):
        HttpEmbedder("http://127.0.0.1:1/v1", "mini", timeout_s=2).embed(["a"])


def test_settings_choose_the_embedder(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert embedder_for(load_settings()).name == "wordllama/l2_supercat-256"
    assert embedder_for(load_settings(embedding_dimension=128)).dimension == 128
    monkeypatch.setenv("MEMOREPAIR_EMBEDDING_BASE_URL", endpoint)
    with pytest.raises(ConfigError, match="MEMOREPAIR_EMBEDDING_MODEL"):
        embedder_for(load_settings())
    monkeypatch.setenv("MEMOREPAIR_EMBEDDING_MODEL", "mini")
    assert embedder_for(load_settings()).name == "openai/mini"
    monkeypatch.setenv("MEMOREPAIR_EMBEDDING_BASE_URL", "ftp://x")
    with pytest.raises(ConfigError, match="MEMOREPAIR_EMBEDDING_BASE_URL"):
        load_settings()
    monkeypatch.delenv("MEMOREPAIR_EMBEDDING_BASE_URL")
    monkeypatch.setenv("MEMOREPAIR_SEARCH_META_FIELDS", '["topic", "a=b"]')
    with pytest.raises(ConfigError, match="MEMOREPAIR_SEARCH_META_FIELDS"):
        load_settings()


def test_embed_rows_embeds_each_row_from_its_own_content() -> None:
    embedder = WordLlamaEmbedder(64)
    rows = embed_rows(embedder, [{"content": "alpha beta"}, {"content": ""}, {"content": "x"}])
    assert rows[0]["embedding"] == embedder.embed(["alpha beta"])[0]
    assert rows[1]["embedding"] is None and rows[1]["embedding_model"] is None
    assert rows[2]["embedding_model"] == embedder.name and rows[2]["embedding_dim"] == 64


def test_meta_terms_cover_the_searchable_fields_only() -> None:
    meta = {"topic": "travel", "n": 3, "ok": True, "tags": ["a", 2, {"x": 1}], "deep": {"k": 1}}
    assert meta_terms(meta, ["topic", "n", "ok", "tags", "deep", "absent"]) == [
        "topic=travel",
        "n=3",
        "ok=true",
        "tags=a",
        "tags=2",
    ]
    assert meta_terms(meta, []) is None
    assert meta_terms(None, ["topic"]) is None
