"""The install profiles' session: one wheel of the checkout; one fresh venv per profile
(module-scoped, removed when its module ends); the remote-embedder job of the profiles
without the local model, against an OpenAI-compatible server scripted on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from flink_agents_ltm.integrations.mem0.hashing_embedder import hashed_bag_of_words
from tests.chat.scripted_server import ScriptedServer
from tests.install.profiles import (
    Venv,
    build_wheel,
    make_venv,
    outside_the_checkout,
    run_in,
    user_dirs_outside,
)
from tests.job_runner import failure

JOB = Path(__file__).with_name("remote_embedder_job.py")


@pytest.fixture(scope="session")
def checkout_wheel(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wheel")
    try:
        yield build_wheel(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def venv_fixture(extra: str | None):
    """A module-scoped fixture: a fresh venv with the checkout's wheel and ``extra``."""

    @pytest.fixture(scope="module")
    def venv(checkout_wheel, tmp_path_factory):
        folder = outside_the_checkout(tmp_path_factory.mktemp(f"venv-{extra or 'no-extra'}"))
        try:
            yield make_venv(folder / "venv", checkout_wheel, extra)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return venv


def embeddings(request):
    """POST /embeddings of the OpenAI API: hashed words, in input order."""
    assert request.path == "/embeddings", request.path
    vectors = [hashed_bag_of_words(text, request.body["dimensions"])
               for text in request.body["input"]]
    return {"object": "list", "model": request.body["model"],
            "data": [{"object": "embedding", "index": i, "embedding": vector}
                     for i, vector in enumerate(vectors)]}


@pytest.fixture
def outside(tmp_path):
    """``(cwd, scratch, home)`` of a job run as a user runs it, outside the checkout; Flink's
    temp files and logs (scratch) are removed afterwards."""
    cwd, scratch, home = user_dirs_outside(tmp_path)
    yield cwd, scratch, home
    shutil.rmtree(scratch, ignore_errors=True)


def run_remote_embedder_job(venv: Venv, dirs: tuple[Path, Path, Path], mode: str,
                            store: dict | None = None):
    """Runs remote_embedder_job.py in ``venv`` in ``dirs`` (``outside``) in PyFlink's
    execution ``mode``:
    ``(replies by customer, reports of its Python processes, embedding requests)``."""
    cwd, scratch, home = dirs
    reports = cwd / "reports"
    reports.mkdir()
    shutil.copy(JOB, cwd / "my_job.py")
    args = ["my_job.py", "--reports", str(reports), "--mode", mode]
    if store is not None:
        store_file = cwd / "store.json"
        store_file.touch(0o600)
        store_file.write_text(json.dumps(store))
        args += ["--store-file", str(store_file)]
    with ScriptedServer(embeddings) as server:
        result = run_in(venv, [*args, "--embeddings-url", server.url], cwd, scratch, home)
    assert result.returncode == 0, failure(result)
    replies = defaultdict(list)
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            reply = json.loads(line)
            replies[reply["customer"]].append(reply["recalled"])
    found = [json.loads(path.read_text()) for path in sorted(reports.iterdir())]
    return dict(replies), found, server.requests


def check_the_jobs_processes(venv: Venv, reports: list[dict], mode: str
                             ) -> tuple[dict, list[dict]]:
    """The client's report and the worker's, each of which found the package in the venv,
    not in the checkout. In thread mode the worker is the JVM's embedded interpreter (another
    process); in process mode on the mini-cluster, PyFlink's loopback worker in the client."""
    (client,) = [r for r in reports if r["role"] == "client"]
    workers = [r for r in reports if r["role"] == "worker"]
    assert workers, reports
    if mode == "thread":
        assert all(w["pid"] != client["pid"] for w in workers), reports
    else:
        assert all(w["pid"] == client["pid"] for w in workers), reports
    for process in (client, *workers):
        assert Path(process["package"]).is_relative_to(venv.site_packages), process["package"]
    return client, workers
