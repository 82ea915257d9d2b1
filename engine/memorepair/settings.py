"""Configuration from the environment and `.env`, validated once at start.

`MEMOREPAIR_`-prefixed variables configure the engine; the standard `NEO4J_URI`,
`NEO4J_USERNAME`, `NEO4J_PASSWORD` and `NEO4J_DATABASE` point it at a server. With no
`NEO4J_URI` the engine uses the local server that `memorepair neo4j start` runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from memorepair.errors import ConfigError
from memorepair.model import MAX_COST, NS_PATTERN

#: Default w (value) and c (repair cost) per kind, or per skill arch. They encode the
#: usual economics: caches are cheap to replay, neural skills dear to retrain.
DEFAULT_VALUES: dict[str, float] = {
    "record": 1.0,
    "cache": 2.0,
    "summary": 4.0,
    "skill.prompt": 5.0,
    "skill.chain": 6.0,
    "skill.neural": 6.0,
}
DEFAULT_COSTS: dict[str, float] = {
    "record": 1.0,
    "cache": 1.0,
    "summary": 3.0,
    "skill.prompt": 4.0,
    "skill.chain": 4.0,
    "skill.neural": 10.0,
}

_URI_SCHEMES = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MEMOREPAIR_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
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
    state_dir: Path = Path(".memorepair")
    neo4j_version: str = Field(default="5.26.30", pattern=r"^\d+\.\d+\.\d+$")
    bolt_port: int = Field(default=7687, ge=1024, le=65535)
    heap: str = Field(default="2g", pattern=r"^\d+[mg]$")
    pagecache: str = Field(default="512m", pattern=r"^\d+[mg]$")
    local_auth: bool = True
    java_home: Path | None = None
    #: Without an answer on Bolt for this long, `neo4j start` gives up; every step of
    #: crash recovery it reports (debug.log) gives it this long again.
    start_timeout_s: float = Field(default=120.0, gt=0)
    #: A clean shutdown writes a checkpoint (the dirty page cache); SIGKILL after this.
    stop_timeout_s: float = Field(default=300.0, gt=0)

    # --- repair ----------------------------------------------------------------------
    lam: float = Field(
        default=1.0, ge=0, le=1e9, validation_alias=AliasChoices("MEMOREPAIR_LAMBDA")
    )
    selector: Literal["mincut", "greedy", "all"] = "mincut"
    solver: Literal["auto", "igraph", "ortools"] = "auto"
    solver_threshold: int = Field(default=200_000, ge=0)
    values: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_VALUES))
    costs: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_COSTS))
    max_content_bytes: int = Field(default=1_000_000, gt=0)
    batch_size: int = Field(default=5_000, gt=0, le=100_000)
    busy_wait_s: float = Field(default=30.0, ge=0)

    # --- optional LLM-backed regen (OpenAI-compatible); off unless a base URL is set ---
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: SecretStr | None = None

    # --- search: embeddings and searchable meta fields (issue 16) -----------------------
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
    #: Meta fields that search can filter on (`--meta key=value`) and match as text;
    #: a JSON list, e.g. ["topic", "user"]. Changing it needs `memorepair reindex`.
    search_meta_fields: list[str] = Field(default_factory=list)

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

    def default_value(self, table_key: str) -> float:
        """w for a kind or `skill.<arch>` key; a partial table falls back to the defaults."""
        return self.values.get(table_key, DEFAULT_VALUES[table_key])

    def default_cost(self, table_key: str) -> float:
        return self.costs.get(table_key, DEFAULT_COSTS[table_key])

    @property
    def uses_local_server(self) -> bool:
        return self.neo4j_uri is None

    @property
    def local_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"


def load_settings(**overrides: object) -> Settings:
    """Settings from env/.env plus overrides; a bad field becomes a `ConfigError` naming it."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"{_variable(err['loc'])}: {str(err['msg']).removeprefix('Value error, ')}"
            for err in exc.errors()
        )
        raise ConfigError(f"bad setting ({problems}); see `memorepair --help` or README") from exc


def _variable(loc: tuple[int | str, ...]) -> str:
    """The environment variable an operator would set for the field at fault."""
    if not loc:
        return "settings"
    name = str(loc[0])
    if name.isupper():  # already the variable (an alias such as NEO4J_URI)
        return name
    return f"MEMOREPAIR_{name.upper()}" + "".join(f"[{p}]" for p in loc[1:])
