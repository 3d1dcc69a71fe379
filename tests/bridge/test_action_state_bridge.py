"""The action-state store as Java's agent operator drives it through Pemja: plain values in,
envelopes out, the same SQLite store and journal as the Python engine."""

import stat

from flink_agents_ltm.bridge import action_state as bridge
from flink_agents_ltm.runtime.action_state.sqlite import FILE_NAME


def ok(answer):
    assert isinstance(answer, list) and len(answer) == 1, answer
    return answer[0]


def options(tmp_path, **more):
    return {"agents.action-state.store": "sqlite", "agents.job-id": "java-job",
            "long-term-memory.embedded.base-dir": str(tmp_path), **more}


def written_call(handle, result: bytes, *, seq=0):
    """A call of a first attempt: its run, its marker and (unless ``result`` is None) its
    result, as the operator and the call's thread write them."""
    line, run, has_rows = ok(bridge.run_of(handle, "ann", "inc1", seq, "f" * 32))
    assert not has_rows, "a first attempt's new run looks nothing up"
    observation = f"{run}#0"
    token = ok(bridge.start(handle, line, run, seq, "f" * 32, observation, "call0", "charge"))
    ok(bridge.started(handle, token))
    if result is not None:
        ok(bridge.completed(handle, token, result))
    return observation


def test_a_result_written_by_a_failed_attempt_answers_the_next_one(tmp_path):
    first = ok(bridge.open_action_state(options(tmp_path), 0, True, "inc1"))
    observation = written_call(first, b"\xac\xed java bytes")
    ok(bridge.close_action_state(first))  # the process dies: its rows stay

    again = ok(bridge.open_action_state(options(tmp_path), 0, False, "inc1"))
    line, run, has_rows = ok(bridge.run_of(again, "ann", "inc1", 0, "f" * 32))
    assert (line, run, has_rows) == ("ann@inc1", "ann@inc1#0", True)
    assert f"{run}#0" == observation
    assert ok(bridge.replay(again, observation, "call0", "charge")) == ["result",
                                                                       b"\xac\xed java bytes"]
    assert ok(bridge.replay(again, observation, "call1", "charge")) == ["missing", None]
    mismatch = bridge.replay(again, observation, "call0", "refund")
    assert mismatch["type"].endswith("NonDeterministicReplayError"), mismatch
    ok(bridge.close_action_state(again))
    store = next(tmp_path.rglob(FILE_NAME))
    assert stat.S_IMODE(store.stat().st_mode) == 0o600


def test_a_call_that_raised_or_was_cut_off_stays_started(tmp_path):
    first = ok(bridge.open_action_state(options(tmp_path), 0, True, "inc1"))
    observation = written_call(first, None)
    token = ok(bridge.start(first, "ann@inc1", "ann@inc1#0", 0, "f" * 32, observation, "call1",
                            "mail"))
    ok(bridge.started(first, token))
    ok(bridge.abandoned(first, token))  # it raised: no result, the marker stays
    ok(bridge.close_action_state(first))

    again = ok(bridge.open_action_state(options(tmp_path), 0, False, "inc1"))
    assert ok(bridge.replay(again, observation, "call0", "charge")) == ["started", None]
    assert ok(bridge.replay(again, observation, "call1", "mail")) == ["started", None]
    ok(bridge.close_action_state(again))


def test_done_steps_are_pruned_when_a_checkpoint_that_covers_them_completes(tmp_path):
    handle = ok(bridge.open_action_state(options(tmp_path), 0, True, "inc1"))
    observation = written_call(handle, b"r")
    ok(bridge.step_done(handle, observation))
    ok(bridge.checkpoint_started(handle, 1))
    assert ok(bridge.checkpoint_completed(handle, 1)) == 1
    ok(bridge.close_action_state(handle))
    assert ok(bridge.close_action_state(handle)) is False  # twice: a no-op


def test_store_none_opens_nothing_and_bad_options_are_refused_without_their_values(tmp_path):
    assert ok(bridge.open_action_state({"agents.action-state.store": "none"}, 0, True,
                                       "i")) is None
    assert ok(bridge.store_name(options(tmp_path))) == "sqlite"
    unknown = bridge.open_action_state(options(tmp_path, **{"agents.action-state.stor": "x"}),
                                       0, True, "i")
    assert unknown["error"] == "value" and "agents.action-state.store" in unknown["message"]
    bad = bridge.open_action_state(options(tmp_path, **{"agents.action-state.store": "nope"}),
                                   0, True, "i")
    assert bad["error"] == "value" and "not a known store" in bad["message"]
