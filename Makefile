# Two commands for a newcomer: `make demo` and `make test`. Both install into .venv first.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: help install demo test test-python test-java bench lint clean

help:  ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml
	@echo "==> creating $(VENV) and installing PyFlink, Mem0, PyTorch (CPU) and the embedding model (about 2 minutes)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# The CPU torch wheel first: anything that pulls plain `torch` would fetch a CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)
	@echo "==> installed into $(VENV)"

install: $(STAMP)  ## create .venv and install the package with its dev tools

demo: $(STAMP)  ## run the customer-memory agent on PyFlink's local mini-cluster
	$(PY) -m flink_agents_ltm.examples.customer_memory

test: test-python test-java  ## install, then run every test (pytest, then the Java bridge's JUnit)

test-python: $(STAMP)
	$(PY) -m pytest

test-java: $(STAMP)  ## build java-bridge offline (mvn -o) and run its JUnit tests on real Pemja
	cd java-bridge && mvn -o -B package

bench: $(STAMP)  ## print the benchmarks (LTM against raw Mem0, Java against Python, async throughput, state per key, recovery)
	$(PY) -m bench.ltm_overhead
	$(PY) -m bench.java_bridge_overhead
	$(PY) -m bench.durable_async_throughput
	$(PY) -m bench.state_per_key
	$(PY) -m bench.recovery_time

lint: $(STAMP)
	$(VENV)/bin/ruff check flink_agents_ltm tests e2e bench

clean:  ## remove the venv and caches
	rm -rf $(VENV) .pytest_cache build *.egg-info

.PHONY: cluster-up cluster-down test-e2e

cluster-up: $(STAMP)  ## start pgvector and a standalone Flink cluster on 127.0.0.1 (state in .work/)
	scripts/pgvector-server start
	scripts/flink-cluster start

cluster-down:  ## stop the Flink cluster and pgvector started by cluster-up (by their PIDs)
	-scripts/flink-cluster stop
	-scripts/pgvector-server stop

test-e2e: $(STAMP)  ## only the e2e tests (they start and stop their own servers)
	$(PY) -m pytest e2e
