"""The audit part of the long-term-memory contract, held by every implementation: with an
audit log attached, every write and every erasure leaves one record of ids and times in a
private file, and nothing remembered (no value, query or metadata value) ever reaches it."""

import fcntl
import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from flink_agents_ltm.api.execution_environment import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.api.memory import LongTermMemoryError
from flink_agents_ltm.api.memory.audit import MemoryAuditLog
from flink_agents_ltm.runtime.memory.factories import build_long_term_memory
from tests.memory.contracts import implementation

SECRET_VALUE = "alice's card ends in 4242"
SECRET_QUERY = "which card number does alice use"
SECRET_METADATA = "visa-gold-tier"


class ManualClock:
    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def audit(tmp_path, clock):
    return MemoryAuditLog(tmp_path / "audit" / "memory-audit.jsonl", clock=clock)


def bound(ltm, key, set_name="notes", observation_id=None):
    ltm.switch_context(key, observation_id)
    return ltm.get_memory_set(set_name)


def ops(audit, key=None):
    return [(r["op"], r["key"], r.get("set"), r["ids"]) for r in audit.records("test-job", key)]


def test_every_write_is_recorded_with_its_ids_set_key_and_observation(impl, audit, clock):
    impl.ltm.set_audit_log(audit)
    notes = bound(impl.ltm, "alice", observation_id="obs-1")
    [card, tea] = notes.add([SECRET_VALUE, "alice drinks tea"], {"tier": SECRET_METADATA})
    clock.now += 5
    assert notes.update(tea, "alice drinks coffee")
    assert notes.delete(card) == [card]

    assert ops(audit) == [("add", "alice", "notes", [card, tea]),
                          ("update", "alice", "notes", [tea]),
                          ("delete", "alice", "notes", [card])]
    records = audit.records()
    assert {r["observation_id"] for r in records} == {"obs-1"}
    assert {r["job"] for r in records} == {"test-job"}
    assert [r["time"] for r in records] == ["2027-01-15T08:00:00.000Z",
                                            "2027-01-15T08:00:05.000Z",
                                            "2027-01-15T08:00:05.000Z"]


def test_reads_are_recorded_only_when_reads_are_audited(impl, tmp_path):
    writes_only = MemoryAuditLog(tmp_path / "writes.jsonl")
    impl.ltm.set_audit_log(writes_only)
    notes = bound(impl.ltm, "alice")
    [item] = notes.add("alice drinks tea")
    notes.get(item)
    notes.search("what does alice drink", limit=1)
    assert [r["op"] for r in writes_only.records()] == ["add"]

    with_reads = MemoryAuditLog(tmp_path / "reads.jsonl", reads=True)
    impl.ltm.set_audit_log(with_reads)
    notes.get(item)
    notes.search("what does alice drink", limit=1)
    assert [(r["op"], r["ids"]) for r in with_reads.records()] == [("get", [item]),
                                                                   ("search", [item])]


def test_no_value_query_or_metadata_value_ever_reaches_the_audit_file(impl, tmp_path):
    audit = MemoryAuditLog(tmp_path / "audit.jsonl", reads=True)
    impl.ltm.set_audit_log(audit)
    notes = bound(impl.ltm, "alice", observation_id="obs-1")
    [card] = notes.add(SECRET_VALUE, {"tier": SECRET_METADATA})
    notes.search(SECRET_QUERY, limit=3, filters={"tier": SECRET_METADATA})
    notes.get(filters={"tier": SECRET_METADATA})
    notes.update(card, SECRET_VALUE + " and 1111", {"tier": SECRET_METADATA})
    impl.ltm.erase_key("alice")

    text = audit.path.read_text()
    assert len(text.splitlines()) == 5
    for secret in (SECRET_VALUE, "4242", SECRET_QUERY, SECRET_METADATA, "1111"):
        assert secret not in text


def test_an_erased_key_keeps_the_record_of_when_it_was_erased_and_how_much(impl, audit, clock):
    impl.ltm.set_audit_log(audit)
    bound(impl.ltm, "alice").add(["one", "two"])
    bound(impl.ltm, "alice", "other").add("three")
    bound(impl.ltm, "bob").add("bob's")
    clock.now += 60

    assert impl.ltm.erase_key("alice") == 3

    [erasure] = [r for r in audit.records("test-job", "alice") if r["op"] == "erase_key"]
    assert (erasure["count"], erasure["time"]) == (3, "2027-01-15T08:01:00.000Z")
    assert [r["op"] for r in audit.records("test-job", "alice")] == ["add", "add", "erase_key"]
    assert impl.raw_values("alice", "notes") == []


def test_deleting_a_memory_set_is_recorded_with_the_ids_it_deleted(impl, audit):
    impl.ltm.set_audit_log(audit)
    [a, b] = bound(impl.ltm, "alice").add(["one", "two"])
    assert impl.ltm.delete_memory_set("notes") is True
    [record] = [r for r in audit.records() if r["op"] == "delete_memory_set"]
    assert (record["key"], record["set"], sorted(record["ids"])) == ("alice", "notes",
                                                                     sorted([a, b]))


def test_erasing_a_key_from_the_audit_log_removes_its_ids_and_names_it_only_by_hash(
        impl, audit):
    impl.ltm.set_audit_log(audit)
    [alices] = bound(impl.ltm, "alice-7f3e").add("one")
    [bobs] = bound(impl.ltm, "bob").add("bob's")
    impl.ltm.erase_key("alice-7f3e")

    assert audit.erase_key("test-job", "alice-7f3e") == 2

    text = audit.path.read_text()
    assert alices not in text and "alice-7f3e" not in text
    assert ops(audit, "bob") == [("add", "bob", "notes", [bobs])]
    [last] = audit.records()[-1:]
    assert (last["op"], last["count"], len(last["key_sha256"])) == ("erase_audit", 2, 64)


# ------------------------------------------------------------------ the file


def test_the_audit_file_is_private_even_under_a_permissive_umask(tmp_path):
    previous = os.umask(0o022)
    try:
        audit = MemoryAuditLog(tmp_path / "home" / "audit" / "memory-audit.jsonl")
        audit.record("add", "job", "k", "notes", ["id-1"])
        created = stat.S_IMODE(audit.path.stat().st_mode)
        audit.erase_key("job", "k")
    finally:
        os.umask(previous)
    assert (created, stat.S_IMODE(audit.path.stat().st_mode)) == (0o600, 0o600)
    assert stat.S_IMODE(audit.path.parent.stat().st_mode) == 0o700
    assert [p.name for p in audit.path.parent.iterdir()] == ["memory-audit.jsonl"]


def test_an_audit_log_that_cannot_be_written_fails_the_call_in_one_line_naming_the_file(
        tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with implementation("in-memory") as impl:
        impl.ltm.set_audit_log(MemoryAuditLog(blocker / "memory-audit.jsonl"))
        with pytest.raises(LongTermMemoryError) as error:
            bound(impl.ltm, "alice").add(SECRET_VALUE)
    message = str(error.value)
    assert "\n" not in message and str(blocker / "memory-audit.jsonl") in message
    assert "the operation itself was done" in message and SECRET_VALUE not in message


def test_appends_from_many_threads_during_an_erasure_lose_no_record(tmp_path):
    audit = MemoryAuditLog(tmp_path / "audit.jsonl")
    for index in range(50):
        audit.record("add", "job", "erased", "notes", [f"e{index}"])

    def append(worker):
        for index in range(200):
            audit.record("add", "job", "kept", "notes", [f"{worker}-{index}"])

    threads = [threading.Thread(target=append, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    assert audit.erase_key("job", "erased") == 50
    for thread in threads:
        thread.join()
    kept = [r["ids"][0] for r in audit.records("job", "kept")]
    assert sorted(kept) == sorted(f"{w}-{i}" for w in range(4) for i in range(200))
    assert audit.records("job", "erased") == []


def test_an_append_waiting_in_another_process_during_an_erasure_lands_in_the_new_file(
        tmp_path):
    path = tmp_path / "audit.jsonl"
    audit = MemoryAuditLog(path)
    audit.record("add", "job", "erased", "notes", ["e0"])
    holder = os.open(path, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # as an erasure holds it while it rewrites the file
    child = os.fork()
    if child == 0:  # another process of the machine appends: it opens, then waits for the lock
        try:
            os.close(holder)  # the parent's copy alone holds the lock
            MemoryAuditLog(path).record("add", "job", "kept", "notes", ["waited"])
        finally:
            os._exit(0)
    try:
        assert _waits_for_a_lock(child), "the appender never waited for the file's lock"
        replacement = tmp_path / "replacement"
        replacement.write_text(path.read_text())
        os.replace(replacement, path)
    finally:
        os.close(holder)  # releases the lock
        os.waitpid(child, 0)
    assert [r["ids"] for r in audit.records("job")] == [["e0"], ["waited"]]


def _waits_for_a_lock(pid: int, seconds: float = 20.0) -> bool:
    """Whether ``pid`` is blocked on a file lock (a ``->`` line of /proc/locks)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "->" in fields and str(pid) in fields:
                return True
        time.sleep(0.01)
    return False


def test_an_unknown_operation_is_refused_naming_the_known_ones(audit):
    with pytest.raises(ValueError, match="unknown audit operation 'upsert'"):
        audit.record("upsert", "job", "k")


# ------------------------------------------------------------------ from options


@pytest.mark.parametrize("factory", ["in-memory", "mem0"])
def test_the_option_gives_every_factorys_memory_the_audit_log_under_the_home(
        tmp_path, factory, monkeypatch):
    monkeypatch.setenv("FLINK_AGENTS_LTM_HOME", str(tmp_path / "home"))
    config = AgentsConfiguration()
    config.set("long-term-memory.audit-log.enabled", True)
    config.set(AgentsOptions.JOB_ID, "audited-job")
    memory = build_long_term_memory(factory, "audited-job", config, lambda: None, None)
    try:
        bound(memory, "alice").add("one")
    finally:
        memory.close()
    [record] = [json.loads(line) for line in
                (tmp_path / "home" / "audit" / "memory-audit.jsonl").read_text().splitlines()]
    assert (record["op"], record["job"], record["key"]) == ("add", "audited-job", "alice")


def test_without_the_option_no_audit_file_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("FLINK_AGENTS_LTM_HOME", str(tmp_path / "home"))
    memory = build_long_term_memory("in-memory", "job", AgentsConfiguration(), lambda: None,
                                    None)
    bound(memory, "alice").add("one")
    assert memory.audit_log is None
    assert not (tmp_path / "home" / "audit").exists()
