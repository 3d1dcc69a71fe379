"""``agents.error-handling: retry`` on the harness: a failed action runs again from its start
after an exponential backoff, waiting on a processing-time timer of its key (the mailbox
goes on with other keys and never sleeps); the failed attempt's writes are dropped, its
recorded durable calls are not made again, its long-term-memory writes are rewritten under
the same ids; the last failure fails the job or drops the run; a key waiting for its retry
when the job fails retries after the restore."""

import json

import pytest

from flink_agents_ltm.api.errors import AgentActionError
from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import InMemoryLongTermMemory
from flink_agents_ltm.testing import AgentHarness
from runtime.retry_agents import MEMORY_COUNTS, FlakyAgent

ENGINE_STATES = ("busy", "pending", "run")


@pytest.fixture(autouse=True)
def fresh_counts():
    MEMORY_COUNTS.clear()


def retrying(**options):
    return {"agents.error-handling": "retry",
            "agents.error-handling.retry.initial-backoff-ms": 100,
            "agents.error-handling.retry.backoff-multiplier": 3,
            "agents.error-handling.retry.max-backoff-ms": 250,
            "agents.long-term-memory.factory": "in-memory", **options}


def settle(harness):
    """Complete the calls started so far, and those they lead to, firing poll timers
    (5 ms apart) until no call is pending."""
    while harness.pool.pending():
        harness.pool.complete_all()
        harness.advance(0.005)


def rows(memory, key):
    memory.switch_context(key, None, True)
    return sorted(item.value for item in memory.get_memory_set("notes").get())


def retry_timers(harness, key):
    """The processing-time timers of ``key`` other than poll timers (5 ms from now at most)."""
    return [t.timestamp for t in harness.timers(key)
            if not t.event_time and t.timestamp > harness.processing_time() + 5]


def test_a_flaky_action_succeeds_on_its_third_attempt_after_backoff_timers_while_others_go_on():
    harness = AgentHarness(FlakyAgent(), config=retrying())
    harness.process_element(("ann", "a1", 2))
    settle(harness)  # attempt 1 fails in its flaky call
    first_failure = harness.processing_time()
    assert retry_timers(harness, "ann") == [first_failure + 100]
    record = harness.state_of("ann", "run")
    assert (record.failures, record.retry_at) == (1, first_failure + 100)
    assert harness.outputs == []

    # Meanwhile another key is processed, and a later input of ann waits behind its retry.
    harness.process_element(("bob", "b1", 0))
    harness.process_element(("ann", "a2", 0))
    settle(harness)
    assert harness.outputs == [("bob", "b1", 1, ["b1 body", "b1 call"])]

    harness.advance(first_failure + 99 - harness.processing_time())  # not yet
    assert MEMORY_COUNTS["a1.flaky"] == 1
    harness.advance(0.001)  # the retry timer fires: attempt 2 replays booked, runs flaky
    assert MEMORY_COUNTS["a1.flaky"] == 1 and len(harness.pool.pending()) == 1
    settle(harness)  # attempt 2 fails: the backoff grows 3 times, capped at 250 ms
    second_failure = harness.processing_time()
    assert retry_timers(harness, "ann") == [second_failure + 250]
    harness.advance(0.25)
    settle(harness)

    assert harness.outputs == [("bob", "b1", 1, ["b1 body", "b1 call"]),
                               ("ann", "a1", 1, ["a1 body", "a1 call"]),
                               ("ann", "a2", 2, ["a1 body", "a1 call", "a2 body", "a2 call"])]
    assert MEMORY_COUNTS == {"a1.booked": 1, "a1.flaky": 3, "b1.booked": 1, "b1.flaky": 1,
                             "a2.booked": 1, "a2.flaky": 1}
    assert rows(harness.memory.get(), "ann") == ["a1 body", "a1 call", "a2 body", "a2 call"]
    assert harness.pool.slept == []  # the mailbox thread never slept
    assert (harness.stats.action_retries, harness.stats.actions_failed) == (2, 0)
    assert (harness.stats.actions_started, harness.stats.actions_completed) == (5, 3)
    assert harness.stats.durable_calls_replayed == 2  # booked, in attempts 2 and 3
    assert {name: harness.state_entries()[name] for name in ENGINE_STATES} == \
        dict.fromkeys(ENGINE_STATES, 0)
    assert harness.timers() == []


def test_a_plain_action_is_retried_too():
    from flink_agents_ltm.api.agent import Agent, action
    from flink_agents_ltm.api.events import InputEvent, OutputEvent

    class Plain(Agent):
        @action(InputEvent)
        def answer(event, ctx):
            MEMORY_COUNTS["plain"] += 1
            if MEMORY_COUNTS["plain"] < 2:
                raise ValueError("not yet")
            ctx.send_event(OutputEvent(MEMORY_COUNTS["plain"]))

    harness = AgentHarness(Plain(), config=retrying())
    harness.process_element(("k", 0))
    assert harness.outputs == [] and retry_timers(harness, "k") == [harness.processing_time() + 100]
    harness.advance(0.1)
    assert harness.outputs == [2]


@pytest.mark.parametrize("then", ["fail", "ignore"])
def test_when_the_retries_are_exhausted_the_failure_follows_retry_then(then):
    harness = AgentHarness(FlakyAgent(), config=retrying(**{
        "agents.error-handling.retry.max-retries": 2,
        "agents.error-handling.retry.then": then}))
    harness.process_element(("ann", "a1", 9))
    settle(harness)
    harness.advance(0.1)
    settle(harness)
    harness.advance(0.25)
    if then == "fail":
        with pytest.raises(AgentActionError, match=r"^action 'answer' of agent FlakyAgent failed "
                           r"for key 'ann' after 3 attempts \(input #0: .*FlakyCallError: a1: "
                           r"the service is down \(run 3\)$"):
            settle(harness)
        return
    settle(harness)
    assert harness.outputs == []
    assert MEMORY_COUNTS["a1.flaky"] == 3 and MEMORY_COUNTS["a1.booked"] == 1
    assert (harness.stats.action_retries, harness.stats.actions_failed) == (2, 1)
    # the dropped run's writes to long-term memory stay, once each
    assert rows(harness.memory.get(), "ann") == ["a1 body", "a1 call"]
    harness.process_element(("ann", "a2", 0))  # the key goes on; no short-term write stayed
    settle(harness)
    assert harness.outputs == [("ann", "a2", 1, ["a1 body", "a1 call", "a2 body", "a2 call"])]
    assert harness.timers() == []


def test_max_retries_0_never_retries():
    harness = AgentHarness(FlakyAgent(), config=retrying(**{
        "agents.error-handling.retry.max-retries": 0,
        "agents.error-handling.retry.then": "ignore"}))
    harness.process_element(("ann", "a1", 1))
    settle(harness)
    assert (harness.stats.action_retries, harness.stats.actions_failed) == (0, 1)
    assert harness.timers() == []


def test_a_key_waiting_for_its_retry_when_the_job_fails_retries_after_the_restore():
    memory = InMemoryLongTermMemory("retry-restore")  # the store outlives the job's failure
    harness = AgentHarness(FlakyAgent(), config=retrying(), memory=lambda: memory)
    harness.process_element(("ann", "a1", 1))
    settle(harness)
    retry_at = harness.processing_time() + 100
    snapshot = harness.snapshot()
    harness.close()

    restored = AgentHarness.restore(snapshot, FlakyAgent(), config=retrying(),
                                    memory=lambda: memory)
    assert [(t.timestamp, t.event_time) for t in restored.timers("ann")
            if t.timestamp == retry_at] == [(retry_at, False)]  # the timer came back
    restored.process_element(("ann", "a2", 0))  # the restored key still waits, the input too
    restored.advance(0.099)
    assert restored.pool.pending() == [] and restored.outputs == []
    assert restored.state_of("ann", "run").failures == 1
    restored.advance(0.001)
    settle(restored)
    assert restored.outputs == [("ann", "a1", 1, ["a1 body", "a1 call"]),
                                ("ann", "a2", 2, ["a1 body", "a1 call", "a2 body", "a2 call"])]
    # booked was recorded in Flink state before the failure: not made again
    assert MEMORY_COUNTS == {"a1.booked": 1, "a1.flaky": 2, "a2.booked": 1, "a2.flaky": 1}
    assert rows(memory, "ann") == ["a1 body", "a1 call", "a2 body", "a2 call"]  # 0 duplicates
    assert restored.timers() == []


def test_an_input_that_ends_while_a_key_waits_waits_its_backoff_in_the_drain():
    """Processing-time timers no longer fire then: the drain round waits, as for a call."""
    harness = AgentHarness(FlakyAgent(), config=retrying(), run_on_wait=True)
    harness.process_element(("ann", "a1", 2))
    harness.pool.complete_all()
    harness.advance(0.005)
    harness.pool.complete_all()
    harness.advance(0.005)  # attempt 1 fails now: its retry timer is registered
    harness.advance(0.02)
    assert len(retry_timers(harness, "ann")) == 1
    harness.end_input()
    assert harness.outputs == [("ann", "a1", 1, ["a1 body", "a1 call"])]
    assert [round(s, 3) for s in harness.pool.slept] == [0.08, 0.25]
    assert harness.timers() == []  # the retry timer that never fired is deleted


def test_the_event_log_shows_each_retry(tmp_path):
    log_file = tmp_path / "events.jsonl"
    harness = AgentHarness(FlakyAgent(), config=retrying(**{
        "agents.event-log.sink": "file", "agents.event-log.file": str(log_file)}))
    harness.process_element(("ann", "a1", 1))
    settle(harness)
    harness.advance(0.1)
    settle(harness)
    actions = [json.loads(line) for line in log_file.read_text().splitlines()]
    actions = [r for r in actions if r["record"] == "action"]
    assert [(r["outcome"], r.get("attempt"), r.get("retry_in_ms"), r["level"],
             r.get("error")) for r in actions] == [
        ("retrying", 1, 100, "WARNING", "DurableCallError"),
        ("completed", None, None, "INFO", None)]
    assert {r["observation_id"] for r in actions} == {harness.observation_id("ann", 0)}


def test_with_the_action_state_store_a_restored_retry_takes_the_stores_results(tmp_path):
    """Action state not retained in Flink state: the call that returned in the failed attempt
    is answered by the action-state store after the restore, not made again."""
    options = retrying(**{"agents.action-state.store": "sqlite",
                          "agents.action-state.retained": False,
                          "agents.job-id": "retry-store",
                          "long-term-memory.embedded.base-dir": str(tmp_path)})
    memory = InMemoryLongTermMemory("retry-store")
    harness = AgentHarness(FlakyAgent(), config=options, memory=lambda: memory)
    harness.process_element(("ann", "a1", 1))
    settle(harness)
    snapshot = harness.snapshot()
    harness.notify_checkpoint_complete()  # prunes the rows of ended steps: not the waiting one
    assert harness.state_of("ann", "run").calls == []  # not retained: the store has booked
    harness.close()

    restored = AgentHarness.restore(snapshot, FlakyAgent(), config=options,
                                    memory=lambda: memory)
    restored.advance(0.1)
    settle(restored)
    assert restored.outputs == [("ann", "a1", 1, ["a1 body", "a1 call"])]
    assert MEMORY_COUNTS == {"a1.booked": 1, "a1.flaky": 2}
    assert rows(memory, "ann") == ["a1 body", "a1 call"]
    restored.close()


def test_a_key_restored_waiting_that_ends_in_the_drain_leaves_no_timer():
    harness = AgentHarness(FlakyAgent(), config=retrying())
    harness.process_element(("ann", "a1", 1))
    settle(harness)
    snapshot = harness.snapshot()
    harness.close()
    restored = AgentHarness.restore(snapshot, FlakyAgent(), config=retrying(), run_on_wait=True)
    restored.end_input()  # before the restored retry timer fired
    assert restored.outputs == [("ann", "a1", 1, ["a1 body", "a1 call"])]
    assert restored.timers() == []


def test_where_timers_fire_late_a_due_retry_starts_at_the_end_of_any_callback():
    """PyFlink's process mode fires a timer registered in a bundle only after the bundle
    (up to a second later): the operator then starts due retries after each callback, as it
    resumes keys whose calls are done (``resume_ready``)."""
    harness = AgentHarness(FlakyAgent(), config=retrying(), resume_ready=True, sync=True)
    harness.process_element(("ann", "a1", 1))  # the calls run at once: attempt 1 fails
    assert harness.outputs == [] and MEMORY_COUNTS["a1.flaky"] == 1
    harness.clock.advance(0.05)  # time passes, but no timer fires (the bundle goes on)
    harness.process_element(("bob", "b1", 0))
    assert MEMORY_COUNTS["a1.flaky"] == 1  # not due yet
    harness.clock.advance(0.051)
    harness.process_element(("bob", "b2", 0))  # ann's retry is due: it runs after bob's input
    assert harness.outputs == [("bob", "b1", 1, ["b1 body", "b1 call"]),
                               ("bob", "b2", 2, ["b1 body", "b1 call", "b2 body", "b2 call"]),
                               ("ann", "a1", 1, ["a1 body", "a1 call"])]
    harness.advance(0)  # the retry timer, late, finds the key's work done
    assert harness.timers() == [] and len(harness.outputs) == 3
