"""The engine's busy and run records carry a format version; a build reads every version it
knows (migrating older ones) and refuses a newer one in one line.

``fixtures/state_format_0.pickle`` is keyed state exactly as the engine wrote it before
formats had versions (main at 89ebd65, captured with the harness, whose tables hold what
the engine hands to Flink's ``PICKLED_BYTE_ARRAY`` states, cloudpickled): for key ``k`` of
:class:`~runtime.state_format_agents.NotesAgent`, ``agent-busy`` is a pickled
``BusyKey(head=0, drain_rounds=8, keeps_counter=True)``, ``agent-run`` a pickled
``RunRecord(seq=0, steps=[[Noted(0, "first input")]], calls=[RecordedCall(
"...MemorySet.add", [<item id>], stored_items=True)], outputs=[("taken", 0, None)],
sensory={"text": ...}, short_term={"last": ...})``, ``agent-next-seq`` 2 and
``agent-pending-inputs`` inputs #0 and #1; input #0 is parked on its second durable call.
The fixture also holds the outputs the same two inputs gave on that build without a
restore."""

import pickle
from pathlib import Path

import cloudpickle
import pytest

from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.runtime.run_record import (
    BUSY_VERSION,
    RUN_VERSION,
    BusyKey,
    RecordedCall,
    RunRecord,
    StateFormatError,
    decode_busy,
    decode_run,
    encode_busy,
    encode_run,
)
from flink_agents_ltm.testing import AgentHarness, Snapshot
from runtime import embedded_rows
from runtime.state_format_agents import Noted, NotesAgent

FIXTURE = Path(__file__).parent / "fixtures" / "state_format_0.pickle"
JOB = "state-format"


def config(tmp_path):
    return {LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
            LongTermMemoryOptions.BASE_DIR.key: str(tmp_path), "agents.job-id": JOB}


def fixture():
    with FIXTURE.open("rb") as f:
        return pickle.load(f)


def unversioned_snapshot():
    written = fixture()
    return Snapshot(written["tables"], written["timers"], written["processing_time_ms"],
                    written["checkpoint_id"])


def settle(harness):
    harness.advance(0.005)
    while harness.pool.pending():
        harness.pool.complete_all()
        harness.advance(0.005)


def test_the_fixture_is_the_unversioned_format_of_earlier_builds():
    tables = fixture()["tables"]
    busy, record = pickle.loads(tables["busy"]["k"]), pickle.loads(tables["run"]["k"])
    assert (type(busy), type(record)) == (BusyKey, RunRecord)  # no version, no tuple
    assert set(vars(busy)) == {"head", "drain_rounds", "keeps_counter"}
    assert set(vars(record)) == {"seq", "steps", "calls", "outputs", "sensory", "short_term"}


def test_a_restored_unversioned_busy_and_run_record_read_as_they_were_written(tmp_path):
    restored = AgentHarness.restore(unversioned_snapshot(), NotesAgent(), config=config(tmp_path))
    try:
        assert restored.state_of("k", "busy") == BusyKey(head=0, drain_rounds=8,
                                                         keeps_counter=True)
        record = restored.state_of("k", "run")
        recorded_ids = fixture()["outputs_without_a_restore"][1][2]
        assert (record.seq, record.steps, record.outputs) == (
            0, [[Noted(0, "first input")]],
            [("taken", 0, None)])
        assert record.calls == [RecordedCall(
            "flink_agents_ltm.api.memory.long_term_memory.MemorySet.add", recorded_ids, True)]
        assert (set(record.sensory), set(record.short_term)) == ({"text"}, {"last"})
        assert restored.state_of("k", "next_seq") == 2
    finally:
        restored.close()


def test_an_unversioned_checkpoint_resumes_its_parked_run_and_gives_the_outputs_of_an_uninterrupted_run(  # noqa: E501
        tmp_path):
    restored = AgentHarness.restore(unversioned_snapshot(), NotesAgent(), config=config(tmp_path))
    try:
        settle(restored)  # the recorded add answers; the echo runs; input #1 follows
        assert restored.outputs == fixture()["outputs_without_a_restore"]
        assert restored.stats.durable_calls_replayed == 1  # the add was not run again
        # input #1's item went in under its own id; input #0's add was not run again
        (_, _, first_ids, _, _), (_, _, second_ids, _, _) = restored.outputs[1::2]
        assert embedded_rows.rows(JOB, tmp_path) == {second_ids[0]: "second input"}
        assert first_ids != second_ids
        assert restored.state_of("k", "next_seq") == 2  # the key stored items: kept
        assert restored.state_of("k", "short_term") == {
            "last": cloudpickle.dumps("second input")}
        assert {n: restored.state_of("k", n) for n in ("busy", "pending", "run")} == dict.fromkeys(
            ("busy", "pending", "run"))
    finally:
        restored.close()


def test_an_unversioned_checkpoint_drains_at_the_end_of_input_and_deletes_its_drain_timers(
        tmp_path):
    restored = AgentHarness.restore(unversioned_snapshot(), NotesAgent(), config=config(tmp_path),
                                    run_on_wait=True)
    try:
        restored.end_input()
        assert restored.outputs == fixture()["outputs_without_a_restore"]
        # (the old process's poll timer stays: it fires later and finds no work)
        assert [t for t in restored.timers() if t.event_time] == []
    finally:
        restored.close()


def test_a_restored_key_writes_its_records_in_the_current_format(tmp_path):
    restored = AgentHarness.restore(unversioned_snapshot(), NotesAgent(), config=config(tmp_path))
    try:
        restored.process_element(("k", 2, "third input"))  # more drain rounds: busy written
        restored.advance(0.005)  # the replay parks again on the echo
        restored.pool.complete_all()
        restored.advance(0.005)  # input #0 ends; input #1 takes its first step, parks on add
        stored = {name: pickle.loads(restored._backend.tables[name]["k"])
                  for name in ("busy", "run")}
        # the key's counter was counted before incarnations: it goes on in the legacy line
        assert stored["busy"] == (BUSY_VERSION, 1, 12, True, "")
        # a record without retry state is written in version 1, which older builds read
        assert stored["run"][:2] == (1, 1)
    finally:
        restored.close()


def test_a_busy_record_of_version_1_is_read_in_the_legacy_line_of_runs():
    assert decode_busy((1, 3, 16, True)) == BusyKey(3, 16, True, incarnation="")


def test_records_come_back_from_the_current_format_unchanged():
    busy = BusyKey(head=3, drain_rounds=16, keeps_counter=False, incarnation="0123abcd")
    record = RunRecord(3, [["event"]], [RecordedCall("f", [1], None), RecordedCall("g", 2, False)],
                       ["out"], {"s": b"1"}, {"t": None})
    assert decode_busy(pickle.loads(pickle.dumps(encode_busy(busy)))) == busy
    assert decode_run(pickle.loads(pickle.dumps(encode_run(record)))) == record


def test_a_run_record_waiting_for_a_retry_is_written_in_version_2_and_read_back():
    waiting = RunRecord(3, [], [RecordedCall("f", [1], False)], failures=2, retry_at=12_345)
    assert encode_run(waiting)[0] == RUN_VERSION == 2
    assert encode_run(waiting)[-2:] == (2, 12_345)
    assert decode_run(pickle.loads(pickle.dumps(encode_run(waiting)))) == waiting
    assert encode_run(RunRecord(3))[0] == 1
    assert decode_run((1, 3, [], [], [], {}, {})) == RunRecord(3)  # version 1: no failures


@pytest.mark.parametrize(("decode", "stored", "named", "read"), [
    (decode_busy, (BUSY_VERSION + 1, 0, 8, True, "x", "new"),
     "busy record (BusyKey) in Flink state 'agent-busy'", "0, 1, 2"),
    (decode_run, (RUN_VERSION + 1, 0, [], [], [], {}, {}),
     "run record (RunRecord) in Flink state 'agent-run'", "0, 1, 2"),
])
def test_a_record_of_a_newer_format_version_is_refused_in_one_line_naming_the_versions_read(
        decode, stored, named, read):
    with pytest.raises(StateFormatError) as refused:
        decode(stored)
    assert str(refused.value) == (
        f"the {named} has format version {stored[0]}, but this build of "
        f"flink_agents_ltm reads versions {read} only: restore the job with the build that "
        "wrote this state, or a newer one")


def test_a_restore_from_state_of_a_newer_format_fails_the_key_with_that_error(tmp_path):
    snapshot = unversioned_snapshot()
    snapshot.tables["busy"]["k"] = cloudpickle.dumps((BUSY_VERSION + 1, 0, 8, True, "", "new"))
    restored = AgentHarness.restore(snapshot, NotesAgent(), config=config(tmp_path))
    try:
        with pytest.raises(StateFormatError, match=f"has format version {BUSY_VERSION + 1},"):
            restored.advance(0.005)  # the key's poll timer reads its busy record
    finally:
        restored.close()


def test_a_value_that_is_no_record_at_all_is_refused_naming_its_type():
    with pytest.raises(StateFormatError, match=r"format version 'unknown \(str\)'"):
        decode_run("not a record")
