"""The recovery example: one injected failure, and the run checks its own claims."""

import pytest

from tests.job_runner import failure, run_python

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def recovery_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("recovery-example")
    cwd, scratch, home = base / "work", base / "flink", base / "home"
    cwd.mkdir()
    return run_python(["-m", "flink_agents_ltm.examples.recovery", "--home", str(home)],
                      cwd, scratch, home)


def test_the_job_failed_once_on_purpose_and_flink_restarted_it(recovery_run):
    assert "the job failed once on purpose (carol's message 6); Flink restarted it from " \
        in recovery_run.stdout, failure(recovery_run)


def test_each_message_is_counted_exactly_once_in_short_term_memory(recovery_run):
    assert ("short-term counters: " + ", ".join(
        f"{c} 1,2,3,4,5,6,7,8,9,10" for c in ("alice", "bob", "carol", "dave"))
        in recovery_run.stdout), failure(recovery_run)
    assert "  each message counted exactly once: yes" in recovery_run.stdout


def test_each_message_is_remembered_exactly_once_and_the_example_says_so(recovery_run):
    assert "long-term memory: 40 items for 40 messages, 0 stored twice or more, 0 missing" \
        in recovery_run.stdout, failure(recovery_run)
    assert recovery_run.returncode == 0, failure(recovery_run)
