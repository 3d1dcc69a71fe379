"""The operator's worker pool on real threads, timed by a manual clock: a hung call never
holds the mailbox thread past its deadline, its slot is freed, its thread abandoned, and
too many abandoned threads fail the job naming the calls."""

import threading

import pytest

from flink_agents_ltm.api.memory.write_position import BODY, current_write_position
from flink_agents_ltm.runtime.durable import DurableCall
from flink_agents_ltm.runtime.worker_pool import DurableCallsStuckError, ThreadWorkerPool
from flink_agents_ltm.testing import ManualClock


@pytest.fixture
def release():
    """Hung calls wait on this; set at the end so that no thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def hang(event):
    event.wait()
    return "late"


def where_am_i():
    return current_write_position(), threading.get_ident()


def wait_done(pool, handle):
    pool.wait([handle], until=float("inf"))
    assert handle.done


def test_a_call_runs_on_a_worker_thread_at_its_write_position():
    pool = ThreadWorkerPool(2, 60, "test")
    handle = pool.submit(DurableCall(where_am_i, (), {}), "call3")
    wait_done(pool, handle)
    (position, thread), error = handle.outcome()
    assert error is None
    assert position == "call3" and thread != threading.get_ident()
    assert current_write_position() == BODY  # the mailbox thread stays at the body
    assert pool.close(0) == []


def test_a_call_sees_the_context_variables_of_the_thread_that_submitted_it():
    from contextvars import ContextVar

    tenant = ContextVar("tenant", default=None)
    pool = ThreadWorkerPool(1, 60, "test")
    tenant.set("acme")
    handle = pool.submit(DurableCall(tenant.get, (), {}), "call0")
    wait_done(pool, handle)
    assert handle.outcome() == ("acme", None)
    pool.close(0)


def test_a_full_pool_of_hung_calls_frees_a_slot_at_the_earliest_deadline(release):
    clock = ManualClock()
    pool = ThreadWorkerPool(2, timeout_s=5, name="test", clock=clock, max_abandoned=4)
    first = pool.submit(DurableCall(hang, (release,), {}), "call0")
    clock.advance(1)
    second = pool.submit(DurableCall(hang, (release,), {}), "call0")
    clock.advance(4.5)  # past the first call's deadline only
    third = pool.submit(DurableCall(hang, (release,), {}), "call0")  # returns at once
    assert first.timed_out and not second.timed_out and not third.timed_out
    assert (pool.in_flight, pool.abandoned) == (2, 1)
    release.set()
    wait_done(pool, second)
    wait_done(pool, third)
    assert pool.close(grace_s=10) == []  # the abandoned thread returned too
    assert first.done and pool.abandoned == 0


def test_more_abandoned_threads_than_allowed_fail_with_the_calls_named(release):
    clock = ManualClock()
    pool = ThreadWorkerPool(1, timeout_s=2, name="test", clock=clock, max_abandoned=1)
    pool.submit(DurableCall(hang, (release,), {}), "call0")
    clock.advance(3)
    pool.submit(DurableCall(hang, (release,), {}, name="slow_lookup"), "call0")
    clock.advance(3)
    with pytest.raises(DurableCallsStuckError) as stuck:
        pool.submit(DurableCall(hang, (release,), {}), "call0")
    assert str(stuck.value).startswith(
        "durable call slow_lookup did not return within its timeout of 2 s "
        "(agents.durable-async.timeout-ms), and 1 earlier timed-out call(s) still hold their "
        "threads: runtime.test_worker_pool.hang (6 s)")
    assert "abandons at most 1" in str(stuck.value)


def test_waiting_for_a_hung_call_ends_at_the_deadline_given(release):
    clock = ManualClock()
    pool = ThreadWorkerPool(1, timeout_s=2, name="test", clock=clock)
    handle = pool.submit(DurableCall(hang, (release,), {}), "call0")
    clock.advance(2)
    pool.wait([handle], until=handle.deadline)  # returns: the deadline has passed
    assert pool.time_out(handle) and handle.timed_out
    assert (pool.in_flight, pool.abandoned) == (0, 1)


def test_closing_answers_the_calls_still_running_after_the_grace_period(release):
    pool = ThreadWorkerPool(2, timeout_s=60, name="test")
    handle = pool.submit(DurableCall(hang, (release,), {}), "call0")
    assert pool.close(grace_s=0) == [handle]
    with pytest.raises(RuntimeError, match="is closed"):
        pool.submit(DurableCall(where_am_i, (), {}), "call0")
