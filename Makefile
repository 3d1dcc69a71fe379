# Two commands for a newcomer: `make demo` and `make test`. Both install into .venv first.
# `make help` lists every target.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: help install demo example-first-agent example-support-chat example-recovery examples \
	test test-python test-java java-demo bench lint clean

help:  ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 22

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

example-first-agent: $(STAMP)  ## run the README's "Writing an agent" (twice: it remembers)
	$(PY) -m flink_agents_ltm.examples.first_agent

example-support-chat: $(STAMP)  ## run ctx.chat with tools and a memory-event listener, offline
	$(PY) -m flink_agents_ltm.examples.support_chat

example-recovery: $(STAMP)  ## run a job that fails once on purpose; check what recovery kept
	$(PY) -m flink_agents_ltm.examples.recovery

examples: demo example-first-agent example-support-chat example-recovery  ## run every example

test: test-python test-java  ## install, then run every test (pytest, then the Java bridge's JUnit)

test-python: $(STAMP)  ## only the Python tests (-m "not cluster" skips the Flink jobs)
	$(PY) -m pytest

test-java: $(STAMP)  ## build java-bridge offline (mvn -o) and run its JUnit tests on real Pemja
	cd java-bridge && mvn -o -B package

java-demo: $(STAMP)  ## run the Java agent job on a local mini-cluster of PyFlink's jars (ARGS="--input notes.csv ...")
	cd java-bridge && mvn -o -q -B compile
	java-bridge/run-local $(ARGS)

bench: $(STAMP)  ## print the benchmarks (LTM and vector stores against raw Mem0, Java against Python, async throughput)
	$(PY) -m bench.ltm_overhead
	$(PY) -m bench.vector_store_overhead
	$(PY) -m bench.java_bridge_overhead
	$(PY) -m bench.durable_async_throughput
	$(PY) -m bench.model_clients

lint: $(STAMP)  ## ruff, and the import contracts of the layers (lint-imports)
	$(VENV)/bin/ruff check flink_agents_ltm tests e2e bench
	$(VENV)/bin/lint-imports --no-cache

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
