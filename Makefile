# MemoRepair developer and operator entry points. Everything runs from ./.venv.
# `make demo` and `make test` work on a fresh machine with Python 3.11+, Java 17 and Maven.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
MR     := $(BIN)/memorepair

# The local server `make` runs keeps its state in the checkout (the CLI's own default is
# the per-user data folder); commands the demo prints name it. `make test` runs a server
# of its own (own state folder and ports: tests/conftest.py), never this one.
export MEMOREPAIR_STATE_DIR ?= $(CURDIR)/.memorepair

.PHONY: setup setup-bench neo4j-start neo4j-stop neo4j-status schema demo mcp-config test test-unit test-integration lint bench eval clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,mcp,langgraph,integrations-test]'
	touch $(STAMP)

setup: $(STAMP) ## virtualenv with the package (editable), the dev tools and the integrations' extras

neo4j-start: $(STAMP) ## start the local Neo4j (fetches the jars with Maven on first use)
	$(MR) neo4j start

neo4j-stop: $(STAMP)
	$(MR) neo4j stop

neo4j-status: $(STAMP)
	$(MR) neo4j status

schema: neo4j-start
	$(MR) schema apply

demo: schema ## the main job: a real repair on the included sample memory
	$(MR) demo

NS ?= default

mcp-config: $(STAMP) ## an MCP host's entry for this checkout's server (namespace NS)
	@$(MR) --ns $(NS) mcp --print-config

# The unit tier runs on every core (pytest-xdist): it needs no server and is CPU-bound.
# The integration tier runs on two workers sharing the tests' server (one file per worker
# at a time), then its `serial` tests run alone: they stop the server or drop what every
# namespace shares. Both passes are one run (MEMOREPAIR_TEST_RUN): the server the first
# starts stays up for the second, which stops it; both run even if the first fails.
test: test-unit test-integration ## unit tests, then integration tests against a Neo4j of their own

test-unit: $(STAMP)
	$(BIN)/python -m pytest -q -m "not integration" -n auto

test-integration: $(STAMP)
	@run=make-$$$$-$$(date +%s); \
	echo "integration tier, two workers:"; \
	MEMOREPAIR_TEST_RUN=$$run MEMOREPAIR_KEEP_SERVER=1 \
	  $(BIN)/python -m pytest -q -m "integration and not serial" -n 2 --dist loadfile; \
	parallel=$$?; \
	echo "integration tier, serial tests alone:"; \
	MEMOREPAIR_TEST_RUN=$$run $(BIN)/python -m pytest -q -m "integration and serial"; \
	serial=$$?; \
	test $$parallel -eq 0 && test $$serial -eq 0

lint: $(STAMP)
	$(BIN)/ruff check engine tests bench
	$(BIN)/ruff format --check engine tests bench
	$(BIN)/mypy

BENCH_ARGS ?=

bench: schema setup-bench ## performance and retrieval figures (prints tables; not tests): python -m bench.perf -h
	$(BIN)/python -m bench.perf $(BENCH_ARGS)
	$(BIN)/python -m bench.retrieval

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP)
	$(BIN)/pip install --quiet --no-deps bfcl-eval  # its declared deps are LLM SDKs we never import
	$(BIN)/pip install --quiet -e '.[bench]'
	touch $(BENCH_STAMP)

setup-bench: $(BENCH_STAMP) ## the bench extra: BFCL tool back-ends and data, plotting

eval: schema setup-bench ## the paper's table on BFCL tool-use data: python -m bench.bfcl.eval -h
	$(BIN)/python -m bench.bfcl.eval $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
