"""The audit part of the long-term-memory contract: with an audit log attached
(``set_audit_log``), every write and every erasure leaves one record of ids and times in a
private file, and nothing remembered (no value, query or metadata value) ever reaches it.
The audit log's clock is the ``clock`` fixture's, which is also the memory's."""

from __future__ import annotations

import pytest

from flink_agents_ltm.api.memory.audit import MemoryAuditLog
from flink_agents_ltm.testing.conformance.core import MemoryClock, bound

SECRET_VALUE = "alice's card ends in 4242"
SECRET_QUERY = "which card number does alice use"
SECRET_METADATA = "visa-gold-tier"


@pytest.fixture
def audit_log(tmp_path, clock: MemoryClock) -> MemoryAuditLog:
    """An audit log in a folder of the test's own, on the ``clock`` fixture's time."""
    return MemoryAuditLog(tmp_path / "audit" / "memory-audit.jsonl", clock=clock)


def ops(audit, key=None):
    return [(r["op"], r["key"], r.get("set"), r["ids"]) for r in audit.records("test-job", key)]


def test_every_write_is_recorded_with_its_ids_set_key_and_observation(impl, audit_log, clock):
    impl.ltm.set_audit_log(audit_log)
    notes = bound(impl.ltm, "alice", observation_id="obs-1")
    [card, tea] = notes.add([SECRET_VALUE, "alice drinks tea"], {"tier": SECRET_METADATA})
    clock.advance(5)
    assert notes.update(tea, "alice drinks coffee")
    assert notes.delete(card) == [card]

    assert ops(audit_log) == [("add", "alice", "notes", [card, tea]),
                              ("update", "alice", "notes", [tea]),
                              ("delete", "alice", "notes", [card])]
    records = audit_log.records()
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


def test_an_erased_key_keeps_the_record_of_when_it_was_erased_and_how_much(
        impl, audit_log, clock):
    impl.ltm.set_audit_log(audit_log)
    bound(impl.ltm, "alice").add(["one", "two"])
    bound(impl.ltm, "alice", "other").add("three")
    bound(impl.ltm, "bob").add("bob's")
    clock.advance(60)

    assert impl.ltm.erase_key("alice") == 3

    [erasure] = [r for r in audit_log.records("test-job", "alice") if r["op"] == "erase_key"]
    assert (erasure["count"], erasure["time"]) == (3, "2027-01-15T08:01:00.000Z")
    assert [r["op"] for r in audit_log.records("test-job", "alice")] == [
        "add", "add", "erase_key"]
    assert impl.raw_values("alice", "notes") == []


def test_deleting_a_memory_set_is_recorded_with_the_ids_it_deleted(impl, audit_log):
    impl.ltm.set_audit_log(audit_log)
    [a, b] = bound(impl.ltm, "alice").add(["one", "two"])
    assert impl.ltm.delete_memory_set("notes") is True
    [record] = [r for r in audit_log.records() if r["op"] == "delete_memory_set"]
    assert (record["key"], record["set"], sorted(record["ids"])) == ("alice", "notes",
                                                                     sorted([a, b]))


def test_erasing_a_key_from_the_audit_log_removes_its_ids_and_names_it_only_by_hash(
        impl, audit_log):
    impl.ltm.set_audit_log(audit_log)
    [alices] = bound(impl.ltm, "alice-7f3e").add("one")
    [bobs] = bound(impl.ltm, "bob").add("bob's")
    impl.ltm.erase_key("alice-7f3e")

    assert audit_log.erase_key("test-job", "alice-7f3e") == 2

    text = audit_log.path.read_text()
    assert alices not in text and "alice-7f3e" not in text
    assert ops(audit_log, "bob") == [("add", "bob", "notes", [bobs])]
    [last] = audit_log.records()[-1:]
    assert (last["op"], last["count"], len(last["key_sha256"])) == ("erase_audit", 2, 64)


__all__ = ["audit_log", *sorted(name for name in dict(globals()) if name.startswith("test_"))]
