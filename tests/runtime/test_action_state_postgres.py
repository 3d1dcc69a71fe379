"""The action-state store on the session's PostgreSQL (pgvector) server, on the harness:
the same write-ahead answers as the SQLite store."""

import copy
import uuid

import pytest

from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.runtime.action_state.store import open_action_state_store
from flink_agents_ltm.runtime.harness import AgentHarness
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
    cleanup = AgentHarness(MailAgent(), config=config)  # a fresh start clears the job's rows
    rows = cleanup.journal.store.row_count()
    cleanup.close()
    assert rows == 0


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
