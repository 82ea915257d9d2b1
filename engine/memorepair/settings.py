"""Configuration from the environment and an opted-in env file, validated once at start.

`MEMOREPAIR_`-prefixed variables configure the engine; the standard `NEO4J_URI`,
`NEO4J_USERNAME`, `NEO4J_PASSWORD` and `NEO4J_DATABASE` point it at a server. With no
`NEO4J_URI` the engine uses the local server that `memorepair neo4j start` runs.

A `.env` in the working directory is never read on its own: whoever controls a folder
would otherwise choose the server that receives the memory and its password, or the
Java binary that `neo4j start` runs. An env file is read only when the operator names
it (`MEMOREPAIR_ENV_FILE` or `memorepair --env-file`), and only if no other user can
write it. `describe` says where each effective value came from (`memorepair config show`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from dotenv import dotenv_values
from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from memorepair.errors import ConfigError, describe_validation
from memorepair.model import (
    MAX_COST,
    NS_PATTERN,
    PRINCIPAL_PATTERN,
    PUBLISH_STRIPES,
    lambda_problem,
)

#: Default w per kind, or per skill arch, in reads: what one fresh read of an artifact of
#: that kind is worth, a read of a record being 1 (docs/values.md). With recorded use, w is
#: this times the artifact's decayed reads; without any, it stands for one read.
DEFAULT_VALUES: dict[str, float] = {
    "record": 1.0,
    "cache": 2.0,
    "summary": 4.0,
    "skill.prompt": 5.0,
    "skill.chain": 6.0,
    "skill.neural": 6.0,
}
#: Default c per kind, or per skill arch, in seconds of repair work: the prior for a
#: candidate whose artifact no repair has built and whose operator and kind this
#: namespace has not measured yet (then the last successor's measured seconds or the
#: namespace's running median decide; docs/values.md). What the built-in operators
#: measure, rounded up: milliseconds for in-process replays and extractive regeneration,
#: a few hundredths of a second for a chain run in the sandbox, half a second for a
#: neural retrain on a few hundred examples. Not much dearer: a prior far above the truth
#: keeps an operator from ever running, so from ever being measured.
DEFAULT_COSTS: dict[str, float] = {
    "record": 0.01,
    "cache": 0.01,
    "summary": 0.02,
    "skill.prompt": 0.02,
    "skill.chain": 0.05,
    "skill.neural": 0.5,
}

#: The unit of each setting that has one, shown by `memorepair config show`.
UNITS: dict[str, str] = {
    "lam": "reads per second of repair (1/λ: seconds of repair one read is worth)",
    "values": "reads (one fresh read of that kind)",
    "costs": "seconds of repair work",
    "value_half_life_h": "hours",
    "value_warmup_h": "hours",
    "use_flush_s": "seconds",
    "busy_wait_s": "seconds",
    "start_timeout_s": "seconds",
    "stop_timeout_s": "seconds",
    "chain_timeout_s": "seconds",
    "chain_memory_mb": "MiB",
    "llm_timeout_s": "seconds",
    "llm_max_response_bytes": "bytes",
    "max_content_bytes": "bytes",
}


def default_state_dir() -> Path:
    """The per-user state folder (`~/.local/share/memorepair` on Linux, by XDG rules)."""
    return Path(platformdirs.user_data_dir("memorepair", appauthor=False))


_URI_SCHEMES = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MEMOREPAIR_",
        env_file=None,  # only an opted-in file, passed by `load_settings`
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        allow_inf_nan=False,
    )

    # --- where the memory lives -------------------------------------------------------
    neo4j_uri: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_URI", "MEMOREPAIR_NEO4J_URI")
    )
    neo4j_username: str = Field(
        default="neo4j",
        validation_alias=AliasChoices("NEO4J_USERNAME", "MEMOREPAIR_NEO4J_USERNAME"),
    )
    neo4j_password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_PASSWORD", "MEMOREPAIR_NEO4J_PASSWORD")
    )
    neo4j_database: str = Field(
        default="neo4j",
        validation_alias=AliasChoices("NEO4J_DATABASE", "MEMOREPAIR_NEO4J_DATABASE"),
    )
    namespace: str = Field(default="default", pattern=NS_PATTERN)

    # --- the local server (used when no NEO4J_URI is set) ---------------------------------
    #: Jars, data, logs and password of the local server: one per user by default (the
    #: platform's per-user data folder), so every working folder, an MCP host and an app
    #: reach the same server. The checkout's `make` names its own `.memorepair`.
    state_dir: Path = Field(default_factory=lambda: default_state_dir())
    #: 5.26.x (LTS, Java 17) or 2026.x (Java 25): see `local/releases.py`.
    neo4j_version: str = Field(default="5.26.30", pattern=r"^\d+\.\d+\.\d+$")
    bolt_port: int = Field(default=7687, ge=1024, le=65535)
    #: Neo4j Browser and the HTTP API, on 127.0.0.1 only (`neo4j start --browser`).
    http_port: int = Field(default=7474, ge=1024, le=65535)
    #: `auto` sizes both from the store at each start (`local/sizing.py`), or e.g. `8g`.
    heap: str = Field(default="auto", pattern=r"^(auto|\d+[mgMG])$")
    pagecache: str = Field(default="auto", pattern=r"^(auto|\d+[mgMG])$")
    local_auth: bool = True
    java_home: Path | None = None
    #: Without an answer on Bolt for this long, `neo4j start` gives up; every step of
    #: crash recovery it reports (debug.log) gives it this long again.
    start_timeout_s: float = Field(default=120.0, gt=0)
    #: A clean shutdown writes a checkpoint (the dirty page cache); SIGKILL after this.
    #: `auto`: 300 s plus 120 s per GB of page cache.
    stop_timeout_s: Annotated[float, Field(gt=0)] | Literal["auto"] = "auto"

    # --- past one machine (docs/scaling.md) -------------------------------------------------
    #: Where serving reads (retrieve, search, served) go on a cluster or Aura: `writer`
    #: reads from the leader, so a read always sees the last barrier's commit; `any` lets
    #: read replicas answer (a process's own reads still follow its writes, by bookmark;
    #: other processes pass `MemoryStore.bookmarks()` to `await_bookmarks`).
    serving_reads: Literal["writer", "any"] = "writer"

    # --- repair ----------------------------------------------------------------------
    #: The cost weight in max sum(w) - lambda * sum(c), in reads per second of repair: a
    #: successor is worth its seconds when its reads cover lambda times them (1 / lambda
    #: is the seconds of repair one read is worth). Chosen from measurement: docs/values.md.
    lam: float = Field(default=60.0, validation_alias=AliasChoices("MEMOREPAIR_LAMBDA"))
    selector: Literal["mincut", "greedy", "all"] = "mincut"
    solver: Literal["auto", "igraph", "ortools"] = "auto"
    solver_threshold: int = Field(default=200_000, ge=0)
    values: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_VALUES))
    costs: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_COSTS))
    max_content_bytes: int = Field(default=1_000_000, gt=0)

    # --- values from use, costs from work (docs/values.md) -------------------------------
    #: Serving reads (retrieve, search, MCP, LangGraph) count what they served per uid,
    #: buffered and written in batches off the read's path. Off: nothing is written.
    use_recording: bool = True
    #: Seconds between two background flushes of the buffered use counts (and at close).
    use_flush_s: float = Field(default=5.0, gt=0, le=3600)
    #: Half-life of a recorded use, in hours: a use this old counts half (decayed use).
    value_half_life_h: float = Field(default=168.0, gt=0, le=100_000)
    #: Hours an artifact must have been open to recorded use before "never served" counts
    #: as evidence (w from use = 0); younger ones keep their per-kind prior.
    value_warmup_h: float = Field(default=24.0, ge=0, le=100_000)
    batch_size: int = Field(default=5_000, gt=0, le=100_000)
    #: A `record_many` or import of at most this many items (and 64 MiB of content) is
    #: written in one transaction, in statements of `batch_size` rows; a larger one is
    #: staged and published. The server holds a transaction's changes on its heap.
    import_tx_items: int = Field(default=50_000, ge=1, le=1_000_000)
    busy_wait_s: float = Field(default=30.0, ge=0)
    #: The share of time a repair's writer may keep the server busy: after each batch it
    #: rests for what the batch took times (1 - pace) / pace, so that serving reads keep
    #: a core (1: no rest, the fastest repair; 0.5: rests as long as it wrote).
    repair_pace: float = Field(default=1.0, gt=0, le=1)
    #: Rows per statement and transaction of a repair's writes (candidate facts, staged
    #: and published successors, verdicts), apart from MEMOREPAIR_BATCH_SIZE: a serving
    #: read waits behind each commit, so fewer, larger ones delay reads less (measured in
    #: docs/scaling.md). A batch of successors also closes at 64 MiB of content.
    repair_batch: int = Field(default=20_000, gt=0, le=100_000)
    #: How many of a repair's batches may be written at once (one per stripe of the
    #: namespace's publication lock): 2 lets the server write one batch while it commits
    #: the other; 1 writes them one after the other. A paced repair writes one at a time.
    repair_writers: int = Field(default=2, ge=1, le=PUBLISH_STRIPES)

    #: Register the sample memory's `currency` tool (both versions) in every store, so the
    #: sample events can be repaired by hand outside `memorepair demo` (which always has it).
    sample_tools: bool = False

    # --- operators (handed to the registry once, as `OperatorConfig`) -------------------
    chain_timeout_s: float = Field(default=5.0, gt=0, le=3600)
    chain_memory_mb: int = Field(default=1024, ge=64, le=65536)
    chain_max_steps: int = Field(default=100, ge=1, le=100_000)

    # --- optional LLM-backed regen (OpenAI-compatible); off unless a base URL is set ---
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: SecretStr | None = None
    #: One request, connect to last byte: a server that trickles its answer is cut off.
    llm_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    #: A larger response body is refused (a chat completion is a few KB).
    llm_max_response_bytes: int = Field(default=4_000_000, gt=0, le=1_000_000_000)
    #: `http://` to a host other than loopback sends the key in clear: refused unless set.
    llm_allow_insecure_http: bool = False

    @field_validator("lam")
    @classmethod
    def _check_lambda(cls, v: float) -> float:
        problem = lambda_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    # --- search: embeddings and searchable meta fields -----------------------------------
    #: Unset: the offline default (wordllama, weights inside its wheel, no network). Set:
    #: an OpenAI-compatible endpoint, e.g. `http://127.0.0.1:8080/v1` (POST .../embeddings).
    embedding_base_url: str | None = None
    #: The endpoint's model name (required with a base URL; unused offline).
    embedding_model: str | None = None
    embedding_api_key: SecretStr | None = None
    #: Offline: 64, 128 or 256 (default; the smaller are Matryoshka truncations). HTTP:
    #: the dimension the endpoint returns (learned from its first answer when unset).
    embedding_dimension: int | None = Field(default=None, ge=1, le=8192)
    #: Texts per embedder call (recording, staging and reindex embed in batches).
    embedding_batch: int = Field(default=256, ge=1, le=4096)
    #: Off: nothing is embedded and `search` refuses (writes mark the namespace stale,
    #: so turning it back on needs `memorepair reindex`).
    embeddings: bool = True
    #: `deferred`: `record` and imports commit without the embedding, which a background
    #: writer adds just after (vector search finds a version once it lands; this process's
    #: searches wait for it). `inline`: computed and written inside the record's own
    #: transaction (searchable by meaning at commit, about twice the latency).
    record_embedding: Literal["deferred", "inline"] = "deferred"
    #: `retrieve` by kind or substring is a scan (substrings have no index): it examines
    #: at most this many current versions of the namespace, in uid order, and refuses
    #: when that bound cut its answer short (`search --mode text` is indexed).
    retrieve_scan: int = Field(default=10_000, ge=1, le=10_000_000)
    #: Meta fields that search can filter on (`--meta key=value`) and match as text;
    #: a JSON list, e.g. ["topic", "user"]. Changing it needs `memorepair reindex`.
    search_meta_fields: list[str] = Field(default_factory=list)
    #: The vector index's HNSW shape (Neo4j's `vector.hnsw.m`, `vector.hnsw.ef_construction`;
    #: at most 512 and 3200): links per vector, and the candidates each insertion picks
    #: them from. Applied when the index is built (`schema apply` on a new database,
    #: `reindex --compact` on one that has it); measured in docs/decisions.md, 19.
    search_hnsw_m: int = Field(default=64, ge=2, le=512)
    search_hnsw_ef_construction: int = Field(default=400, ge=1, le=3200)
    #: The vector index's least first fetch: Lucene's HNSW searches as wide as it is
    #: asked, so asking for more than k is what makes its top 10 the exact one (recall@10
    #: by fetch and shape: docs/decisions.md, 19); filters and withdrawn versions widen it.
    search_vector_fetch: int = Field(default=100, ge=1, le=4000)

    # --- sharing: principals, grants, exposure (README "Sharing memory") --------------
    #: Who the CLI, stdio MCP and the Python API act as (default: the OS account's name).
    principal: str | None = None
    #: The local principal holding admin on every namespace without a grant (default: the
    #: OS account's name; empty: nobody, so grants alone decide). Never a remote caller.
    owner: str | None = None
    #: API keys (salted Argon2id hashes) and revocations; default <state>/principals.json.
    principals_file: Path | None = None
    #: JWTs: the issuer (`iss`), its JWKS URL, the audience (`aud`; default: the resource
    #: URL), the accepted algorithms (asymmetric only) and the claim naming the principal.
    auth_issuer: str | None = None
    auth_jwks_url: str | None = None
    auth_audience: str | None = None
    auth_algorithms: list[str] = Field(default_factory=lambda: ["RS256", "ES256", "EdDSA"])
    auth_principal_claim: str = Field(default="sub", min_length=1, max_length=100)
    #: Seconds of clock difference tolerated on exp, nbf and iat.
    auth_leeway_s: float = Field(default=30.0, ge=0, le=600)
    #: Scopes every token must carry (403 insufficient_scope otherwise); none by default.
    auth_required_scopes: list[str] = Field(default_factory=list)
    #: The MCP endpoint's public URL: the protected-resource metadata's `resource` and the
    #: default audience (default: http(s)://HOST:PORT/mcp of `memorepair mcp --http`).
    http_resource_url: str | None = None
    #: Per principal over HTTP: requests per minute (with bursts of a tenth of it, at
    #: least 10) and requests in flight at once; beyond either, an MCP error (HTTP 429).
    http_rate_per_minute: int = Field(default=600, ge=1, le=1_000_000)
    http_max_in_flight: int = Field(default=8, ge=1, le=10_000)
    #: Open MCP sessions at once (a new one gets 503), and seconds an idle one lives.
    http_max_sessions: int = Field(default=100, ge=1, le=100_000)
    http_session_idle_s: float = Field(default=1800.0, gt=0, le=86_400)
    #: Largest `k` of memory_search, and largest content of one memory, over HTTP; the
    #: largest request body (HTTP 413 beyond it).
    http_max_k: int = Field(default=100, ge=1, le=1000)
    http_max_content_bytes: int = Field(default=262_144, ge=1, le=100_000_000)
    http_max_body_bytes: int = Field(default=1_048_576, ge=1024, le=1_000_000_000)
    #: Serving reads record who was served which version (`audit exposure`); such
    #: records are deleted this many days after their last read.
    exposure_recording: bool = True
    exposure_retention_days: float = Field(default=90.0, gt=0, le=36_500)

    @field_validator("principal", "owner")
    @classmethod
    def _check_principal_name(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None or (v == "" and info.field_name == "owner"):
            return v
        if not re.fullmatch(PRINCIPAL_PATTERN, v):
            raise ValueError(
                "a principal name is 1-128 letters, digits and . _ @ : + | = / -, starting "
                f"with a letter or digit; got {v[:80]!r}"
            )
        return v

    @field_validator("auth_issuer", "auth_jwks_url", "http_resource_url")
    @classmethod
    def _check_http_url(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(("http://", "https://")):
            raise ValueError(f"must be an http:// or https:// URL, got {v!r}")
        return v

    @field_validator("auth_algorithms")
    @classmethod
    def _check_algorithms(cls, v: list[str]) -> list[str]:
        asymmetric = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
        asymmetric |= {"ES256", "ES384", "ES512", "EdDSA"}
        bad = [a for a in v if a not in asymmetric]
        if bad or not v:
            raise ValueError(
                f"only asymmetric JWT algorithms ({', '.join(sorted(asymmetric))}); "
                f"'none' and HMAC (HS*) are refused, got {', '.join(bad) or 'none'}"
            )
        return v

    @field_validator("neo4j_uri")
    @classmethod
    def _check_uri(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(_URI_SCHEMES):
            raise ValueError(f"must start with one of {', '.join(_URI_SCHEMES)}, got {v!r}")
        return v

    @field_validator("embedding_base_url")
    @classmethod
    def _check_embedding_url(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(("http://", "https://")):
            raise ValueError(f"must be an http:// or https:// URL, got {v!r}")
        return v

    @field_validator("search_meta_fields")
    @classmethod
    def _check_meta_fields(cls, v: list[str]) -> list[str]:
        for name in v:
            if not name or "=" in name or len(name) > 100:
                raise ValueError(f"meta field names are 1-100 characters without '=', got {name!r}")
        return v

    @field_validator("values", "costs")
    @classmethod
    def _check_table(cls, v: dict[str, float], info: ValidationInfo) -> dict[str, float]:
        for key, number in v.items():
            if key not in DEFAULT_VALUES:
                raise ValueError(f"unknown key {key!r}; use one of {sorted(DEFAULT_VALUES)}")
            if not number >= 0 or number == float("inf"):
                raise ValueError(f"{key} must be a finite number >= 0, got {number!r}")
            if info.field_name == "costs" and number > MAX_COST:
                raise ValueError(f"{key} cost must be at most {MAX_COST:g}, got {number!r}")
        return v

    @property
    def uses_local_server(self) -> bool:
        return self.neo4j_uri is None

    @property
    def local_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"


@dataclass(frozen=True)
class RepairConfig:
    """What every repair and plan of a store runs with, derived from `Settings` once.

    The steps receive the knobs they use from here as arguments; none reads settings.
    """

    lam: float = Settings.model_fields["lam"].default
    selector: Literal["mincut", "greedy", "all"] = "mincut"
    solver: Literal["auto", "igraph", "ortools"] = "auto"
    solver_threshold: int = Settings.model_fields["solver_threshold"].default
    busy_wait_s: float = Settings.model_fields["busy_wait_s"].default
    #: The share of time a repair's batch writes may take (MEMOREPAIR_REPAIR_PACE).
    pace: float = Settings.model_fields["repair_pace"].default
    #: Batches written at once (MEMOREPAIR_REPAIR_WRITERS).
    writers: int = Settings.model_fields["repair_writers"].default
    #: Rows per statement and transaction of a repair's writes (MEMOREPAIR_REPAIR_BATCH).
    batch: int = Settings.model_fields["repair_batch"].default
    #: A correction's replacement passes the cap a recorded artifact does.
    max_content_bytes: int = Settings.model_fields["max_content_bytes"].default
    values: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_VALUES))
    costs: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_COSTS))
    #: Value from use (values.py): decay and warm-up.
    half_life_s: float = Settings.model_fields["value_half_life_h"].default * 3600.0
    warmup_s: float = Settings.model_fields["value_warmup_h"].default * 3600.0
    #: Where the crash tests' fault markers go (see `events.PAUSE_ENV`).
    state_dir: Path = field(default_factory=lambda: default_state_dir())

    @classmethod
    def from_settings(cls, settings: Settings) -> RepairConfig:
        return cls(
            lam=settings.lam,
            selector=settings.selector,
            solver=settings.solver,
            solver_threshold=settings.solver_threshold,
            busy_wait_s=settings.busy_wait_s,
            pace=settings.repair_pace,
            writers=settings.repair_writers,
            batch=settings.repair_batch,
            max_content_bytes=settings.max_content_bytes,
            values=dict(settings.values),
            costs=dict(settings.costs),
            half_life_s=settings.value_half_life_h * 3600.0,
            warmup_s=settings.value_warmup_h * 3600.0,
            state_dir=settings.state_dir,
        )

    def default_value(self, table_key: str) -> float:
        """w for a kind or `skill.<arch>` key; a partial table falls back to the defaults."""
        return self.values.get(table_key, DEFAULT_VALUES[table_key])

    def default_cost(self, table_key: str) -> float:
        return self.costs.get(table_key, DEFAULT_COSTS[table_key])


@dataclass(frozen=True)
class LLMConfig:
    """An OpenAI-compatible chat-completions endpoint for LLM regen."""

    base_url: str
    model: str
    api_key: str | None
    timeout_s: float
    max_response_bytes: int = 4_000_000
    allow_insecure_http: bool = False


@dataclass(frozen=True)
class OperatorConfig:
    """What the built-in operators may use, derived from `Settings` once per store.

    The registry receives it when it is built, so a fresh repair, a resumed one and a
    plan all run their operators with the same limits.
    """

    #: Longest successor content regen accepts (the same cap as recorded content).
    max_content_chars: int = Settings.model_fields["max_content_bytes"].default
    chain_timeout_s: float = Settings.model_fields["chain_timeout_s"].default
    chain_memory_mb: int = Settings.model_fields["chain_memory_mb"].default
    chain_max_steps: int = Settings.model_fields["chain_max_steps"].default
    #: Whether a chain with neither an interface nor a back-end validates (never by default).
    chain_allow_unchecked: bool = False
    param_min_retain_accuracy: float = 0.8
    param_forget_max_confidence: float = 0.5
    #: LLM regen is registered only when this is set (MEMOREPAIR_LLM_BASE_URL).
    llm: LLMConfig | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> OperatorConfig:
        llm = None
        if settings.llm_base_url:
            key = settings.llm_api_key
            llm = LLMConfig(
                base_url=settings.llm_base_url,
                model=settings.llm_model,
                api_key=key.get_secret_value() if key else None,
                timeout_s=settings.llm_timeout_s,
                max_response_bytes=settings.llm_max_response_bytes,
                allow_insecure_http=settings.llm_allow_insecure_http,
            )
        return cls(
            max_content_chars=settings.max_content_bytes,
            chain_timeout_s=settings.chain_timeout_s,
            chain_memory_mb=settings.chain_memory_mb,
            chain_max_steps=settings.chain_max_steps,
            llm=llm,
        )


#: The variable that names an env file to read (the CLI's `--env-file` sets it too).
ENV_FILE_VARIABLE = "MEMOREPAIR_ENV_FILE"


def load_settings(env_file: Path | str | None = None, **overrides: object) -> Settings:
    """Settings from the environment, the opted-in env file, then `overrides` (highest).

    `env_file` (else `MEMOREPAIR_ENV_FILE`) names the only file read; a bad field becomes
    a `ConfigError` naming its variable.
    """
    path = chosen_env_file(env_file)
    _refuse_removed(path)
    try:
        return Settings(_env_file=path, **overrides)  # type: ignore[call-arg,arg-type]
    except ValidationError as exc:
        problems = describe_validation(exc, where=_variable)
        raise ConfigError(f"bad setting ({problems}); see `memorepair --help` or README") from exc


#: Settings that no longer exist, and what replaces them: setting one is an error, not a
#: value silently ignored.
REMOVED: dict[str, str] = {
    "MEMOREPAIR_COST_PER_SECOND": "costs are seconds of repair work now and values are "
    "reads, so MEMOREPAIR_LAMBDA (reads per second of repair) is the one exchange rate; "
    "unset it and scale MEMOREPAIR_LAMBDA instead (docs/values.md)",
}


def _refuse_removed(env_file: Path | None) -> None:
    names = {k.upper() for k in os.environ}
    if env_file is not None:
        names |= {k.upper() for k in dotenv_values(env_file)}
    for name, why in REMOVED.items():
        if name in names:
            raise ConfigError(f"{name} was removed: {why}")


def chosen_env_file(env_file: Path | str | None = None) -> Path | None:
    """The env file the operator named (argument, else MEMOREPAIR_ENV_FILE), checked."""
    named = env_file if env_file is not None else os.environ.get(ENV_FILE_VARIABLE) or None
    if named is None:
        return None
    path = Path(named).expanduser()
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(
            f"env file {path}: {exc.strerror} (named by {ENV_FILE_VARIABLE} or --env-file)"
        ) from exc
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"env file {path} is not a regular file")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigError(
            f"env file {path} is writable by other users (mode {stat.S_IMODE(info.st_mode):o}), "
            f"so they could choose the server and its password; run `chmod go-w {path}`"
        )
    if info.st_uid not in (os.geteuid(), 0):
        raise ConfigError(
            f"env file {path} belongs to another user (uid {info.st_uid}); only your own "
            "files (or root's) configure MemoRepair"
        )
    return path


@dataclass(frozen=True)
class SettingSource:
    """One effective setting for `config show`: its variable, value and origin."""

    field: str
    variable: str
    value: object
    source: Literal["default", "environment", "env file", "override"]
    unit: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "field": self.field,
            "variable": self.variable,
            "value": self.value,
            "source": self.source,
            "unit": self.unit,
        }


def describe(
    settings: Settings, env_file: Path | None = None, overrides: Mapping[str, object] | None = None
) -> list[SettingSource]:
    """Every setting with where its value came from, in pydantic-settings' own priority
    (override > environment > env file > default); secrets masked."""
    from_file = {k.lower(): v for k, v in (dotenv_values(env_file) if env_file else {}).items()}
    environment = {k.lower() for k in os.environ}
    rows = []
    for name in Settings.model_fields:
        names = _names(name)
        if name in (overrides or {}):
            source: Literal["default", "environment", "env file", "override"] = "override"
        elif any(n.lower() in environment for n in names):
            source = "environment"
        elif any(n.lower() in from_file for n in names):
            source = "env file"
        else:
            source = "default"
        value = _shown(getattr(settings, name))
        rows.append(SettingSource(name, names[0], value, source, UNITS.get(name, "")))
    return rows


#: Settings that hold secrets: `connection_env` names them, never prints them.
SECRET_FIELDS = frozenset(("neo4j_password", "llm_api_key", "embedding_api_key"))
#: Settings given elsewhere than in the environment it describes (the command's `--ns`).
_NOT_CARRIED = frozenset(("namespace",))


def connection_env(
    settings: Settings, env_file: Path | None = None
) -> tuple[dict[str, str], list[str]]:
    """The environment another process needs to reach the same memory with the same
    settings (an MCP host's child, started from any folder with little of this shell's
    environment), and notes for the operator.

    Every setting this environment sets is carried as it was given (paths made absolute),
    the env file as an absolute path, and for the local server its state folder and Bolt
    port always. A secret set in the environment is never printed: its variable gets a
    placeholder and a note says what to do (an env file keeps it out of the config)."""
    env: dict[str, str] = {}
    notes: list[str] = []
    for row in describe(settings, env_file):
        if row.source != "environment" or row.field in _NOT_CARRIED:
            continue
        variable = next(n for n in _names(row.field) if n in os.environ or n.upper() in os.environ)
        if row.field in SECRET_FIELDS:
            env[variable] = f"<your {variable}>"
            notes.append(
                f"{variable} is set here and not printed: put its value in the config, or "
                "name an env file that holds it (MEMOREPAIR_ENV_FILE, mode 0600)"
            )
        else:
            value = os.environ.get(variable, os.environ.get(variable.upper(), ""))
            env[variable] = (
                str(Path(value).expanduser().absolute())
                if row.field
                in (
                    "state_dir",
                    "java_home",
                )
                else value
            )
    if env_file is not None:
        env[ENV_FILE_VARIABLE] = str(env_file.expanduser().absolute())
    if settings.uses_local_server:
        env["MEMOREPAIR_STATE_DIR"] = str(settings.state_dir.expanduser().absolute())
        env["MEMOREPAIR_BOLT_PORT"] = str(settings.bolt_port)
    return dict(sorted(env.items())), notes


def _names(field: str) -> list[str]:
    """The variables that set a field, the preferred one first."""
    alias = Settings.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [f"MEMOREPAIR_{field.upper()}"]


def _shown(value: Any) -> object:
    """A value as `config show` prints it: secrets masked, paths and maps as JSON."""
    if isinstance(value, SecretStr):
        return "********" if value.get_secret_value() else ""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, str) and "@" in value and "://" in value:  # user:password@host
        scheme, rest = value.split("://", 1)
        userinfo, _, host = rest.rpartition("@")
        return f"{scheme}://********@{host}" if userinfo else value
    return value


def _variable(loc: Sequence[int | str]) -> str:
    """The environment variable an operator would set for the field at fault."""
    if not loc:
        return "settings"
    name = str(loc[0])
    if name.isupper():  # already the variable (an alias such as NEO4J_URI)
        return name
    return f"MEMOREPAIR_{name.upper()}" + "".join(f"[{p}]" for p in loc[1:])
