"""``pip install 'flink-agents-ltm[pgvector]'`` (no PyTorch): the remote-embedder job keeps
its long-term memory on the pgvector server."""

import copy
import uuid

import pytest

from tests.install.conftest import (
    check_the_jobs_processes,
    run_remote_embedder_job,
    venv_fixture,
)
from tests.install.profiles import EXTRA_MODULES, importable
from tests.pgvector.server import rows_in_postgres

pytestmark = [pytest.mark.install, pytest.mark.cluster]

venv = venv_fixture("pgvector")
OTHER_EXTRAS = (*EXTRA_MODULES["local-embedder"], *EXTRA_MODULES["faiss"])


def test_the_profile_installs_the_postgresql_driver_and_no_other_extras_package(venv, tmp_path):
    assert importable(venv, ("psycopg2", *OTHER_EXTRAS), tmp_path) == ["psycopg2"]


def test_the_remote_embedder_job_keeps_its_memory_on_the_pgvector_server(
        venv, outside, pgvector_session):
    store = copy.deepcopy(pgvector_session[0])
    store["config"]["collection_name"] = f"t_{uuid.uuid4().hex[:12]}"
    replies, reports, requests = run_remote_embedder_job(venv, outside, "process", store)
    assert replies == {"alice": [[], ["My teapot has not arrived yet."]], "bob": [[]]}
    assert len(requests) >= 3
    client, workers = check_the_jobs_processes(venv, reports, "process")
    for process in (client, *workers):
        assert set(process["modules"]) & set(OTHER_EXTRAS) == set(), process["role"]
    assert "psycopg2" in workers[-1]["modules"]
    stored = sorted(row["data"] for row in rows_in_postgres(store).values())
    assert stored == sorted(["My teapot has not arrived yet.", "Can I change my delivery address?",
                             "Any news about my teapot?"])
