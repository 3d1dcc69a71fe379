"""The action-state store on the session's PostgreSQL (pgvector) server, on the harness:
the same write-ahead answers as the SQLite store."""

import copy
import threading
import uuid

import pytest

from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.runtime.action_state.store import open_action_state_store
from flink_agents_ltm.testing import AgentHarness
from runtime.test_action_state_store import (
    MailAgent,
    ReconcilingMailAgent,
    crash_after_the_call_completed,
    crash_mid_call,
    finish,
    harness,
    replayed_in_another_order,
    sent,
)

STORE = "postgres"  # an entry point: integrations.action_state.postgres:open_store


@pytest.fixture(autouse=True)
def nothing_sent_yet():
    sent.clear()
    yield
    sent.clear()


@pytest.fixture
def config(pgvector_session):
    job = f"action-state-{uuid.uuid4().hex[:8]}"
    config = {"agents.action-state.store": STORE, "agents.job-id": job,
              "long-term-memory.vector-store": copy.deepcopy(pgvector_session[0])}
    yield config
    cleanup = open_action_state_store(STORE, job, AgentsConfiguration(config))
    drop_rows(cleanup)
    cleanup.close()


def drop_rows(store):
    """Every row of the store's job, done or not."""
    store.prune_older(float("inf"))
    store.prune_unfinished(float("inf"))
    assert store.row_count() == 0


def test_a_call_completed_after_the_snapshot_is_not_run_again_with_the_postgres_store(config):
    restored = crash_after_the_call_completed(MailAgent(), config)
    assert sent == [1]
    assert restored.outputs == [("a", "sent #1")]


def test_a_call_killed_after_its_effect_asks_its_reconciler_with_the_postgres_store(config):
    restored = crash_mid_call(ReconcilingMailAgent(), config, effect_happened=True)
    assert sent == [1]
    assert restored.outputs == [("a", "sent #1")]


def test_identical_and_other_inputs_replayed_in_another_order_read_their_own_postgres_rows(
        config):
    restored = replayed_in_another_order(MailAgent(), config, [("a", 1), ("a", 2), ("a", 1)],
                                         [("a", 2), ("a", 1), ("a", 3), ("a", 1)])
    assert restored.outputs == [("a", "sent #2"), ("a", "sent #1"), ("a", "sent #3"),
                                ("a", "sent #1")]
    assert sent == [1, 2, 1, 3]


def test_a_completed_checkpoint_prunes_the_postgres_rows_it_covers(config):
    run = harness(MailAgent(), config, sync=True)
    for n in range(50):
        run.process_element((f"k{n}", n))
    run.pool.sync = False
    run.process_element(("parked", 0))
    assert run.journal.store.row_count() == 51
    run.snapshot()
    assert run.notify_checkpoint_complete() == 50
    assert run.journal.store.row_count() == 1
    finish(run)
    run.close()


def test_a_job_without_an_inline_pgvector_store_is_told_what_the_store_needs():
    with pytest.raises(ValueError, match="needs the job's long-term-memory.vector-store"):
        AgentHarness(MailAgent(), config={"agents.action-state.store": STORE})


def test_the_store_is_also_named_by_its_module_and_callable(config):
    from flink_agents_ltm.integrations.action_state.postgres import PostgresActionStateStore

    job = AgentsConfiguration({**config, "agents.action-state.store":
                               "flink_agents_ltm.integrations.action_state.postgres:open_store"})
    store = open_action_state_store(job.get(AgentsOptions.ACTION_STATE_STORE), "named-job", job)
    assert isinstance(store, PostgresActionStateStore)
    assert store.row_count() == 0
    store.close()


def open_store(config, job):
    settings = AgentsConfiguration(config)
    return open_action_state_store(settings.get(AgentsOptions.ACTION_STATE_STORE), job,
                                   settings)


def test_markers_started_together_share_commits_and_each_is_committed_when_started_returns(
        config):
    from flink_agents_ltm.runtime.action_state.lookup import RunTag

    store = open_store(config, config["agents.job-id"])
    calls = 32
    gate = threading.Barrier(calls)
    visible = []

    def start(n):
        gate.wait()
        store.started(0, f"k{n}#0#0", "call0", "send", f"token{n}",
                      RunTag(f"k{n}", f"k{n}#0", 0, "fp"), "owner", 0.0)
        visible.append(store.lookup(f"k{n}#0#0", "call0") is not None)  # another connection

    threads = [threading.Thread(target=start, args=(n,)) for n in range(calls)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert visible == [True] * calls
        assert store.row_count() == calls
        assert store.commits < calls  # grouped: fewer transactions than markers
    finally:
        drop_rows(store)
        store.close()


def test_results_still_queued_at_close_are_written_and_a_bad_statement_fails_alone(config):
    from flink_agents_ltm.runtime.action_state.lookup import RunTag

    store = open_store(config, config["agents.job-id"])
    try:
        store.started(0, "k#0#0", "call0", "send", "t", RunTag("k", "k#0", 0, "fp"), "owner",
                      0.0)
        broken = store._writer.submit("SELECT 1 / 0")  # queued between two good statements
        store.completed("k#0#0", "call0", "t", b"receipt")
        store.close()  # does not wait for the result: close writes it
        assert broken.done.wait(timeout=10), "close() left a queued statement unanswered"
        with pytest.raises(Exception, match="division by zero"):
            broken.wait()
        again = open_store(config, config["agents.job-id"])
        try:
            assert again.lookup("k#0#0", "call0").result == b"receipt"
        finally:
            drop_rows(again)
            again.close()
    finally:
        store.close()
