"""Mem0VectorStore on real stores: embedded Qdrant and FAISS in the test's folder, and
pgvector on a server of this session (a database of its own per test).

``make_store`` opens stores the way the runtime does: ``open(get_resource)`` with the
hashing embedder (deterministic bag of words, microseconds per text) as the declared
embedding model ``"embedder"``.
"""

from __future__ import annotations

import uuid

import psycopg2
import pytest

from flink_agents_ltm.api.resources import MissingResourceError, ResourceType
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore

PROVIDERS = ["qdrant", "pgvector", "faiss"]


def lookup(**resources):
    """A ``get_resource`` serving ``resources`` by name, as the resource provider does."""

    def get_resource(name, resource_type):
        if name not in resources:
            raise MissingResourceError(f"no {ResourceType(resource_type).value} named '{name}'")
        return resources[name]

    return get_resource


@pytest.fixture(scope="session")
def hashing():
    return HashingEmbedding()


def _admin(server_config):
    conn = psycopg2.connect(host=server_config["host"], port=server_config["port"],
                            dbname=server_config["dbname"], user=server_config["user"],
                            password=server_config["password"], connect_timeout=5)
    conn.autocommit = True
    return conn


@pytest.fixture
def pgvector_database(pgvector_session):
    """The server's pgvector config, pointing at an empty database of this test."""
    server_config = pgvector_session[0]["config"]
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = _admin(server_config)
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    created = _admin(dict(server_config, dbname=name))
    with created.cursor() as cur:
        cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
    created.close()
    yield dict(server_config, dbname=name)
    with admin.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.close()


@pytest.fixture(params=PROVIDERS)
def provider(request):
    return request.param


@pytest.fixture
def store_config(provider, tmp_path, request):
    """Mem0's config for ``provider`` in this test's own place."""
    if provider == "pgvector":
        return dict(request.getfixturevalue("pgvector_database"))
    return {"path": str(tmp_path / provider)}


@pytest.fixture
def make_store(provider, store_config, hashing):
    made = []

    def make(collection="docs", embedder=None, **arguments):
        store = Mem0VectorStore(provider, store_config, embedding_model="embedder",
                                collection=collection, **arguments)
        store.open(lookup(embedder=embedder or hashing))
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(make_store):
    return make_store()
