"""The retention part of the long-term-memory contract: an item added or updated with a
``ttl`` is read until its expiry, is invisible to get, search and update from that instant,
can be kept alive by reads (refresh on read, the core call ``_refresh_expiry``), and is
deleted for real by a sweep of its own job (``_sweep_expired``). Time is the memory's
manual clock (the ``clock`` fixture): no test sleeps."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from flink_agents_ltm.api.memory.audit import MemoryAuditLog
from flink_agents_ltm.api.memory.expiry import Retention
from flink_agents_ltm.testing.conformance.core import START, bound


def test_an_item_with_a_ttl_is_read_until_it_expires_and_is_invisible_at_once_after(
        impl, clock):
    notes = bound(impl.ltm, "alice")
    [tea] = notes.add("alice drinks green tea", {"kind": "habit"}, ttl=60)
    [dog] = notes.add("alice walks her dog", {"kind": "habit"})

    [item] = notes.get(tea)
    assert item.expires_at == START + 60
    assert dict(item.metadata) == {"kind": "habit"}  # the expiry is no caller metadata
    assert notes.get(dog)[0].expires_at is None
    clock.advance(59.9)
    assert [i.id for i in notes.search("green tea", limit=5)][:1] == [tea]

    clock.advance(0.1)  # the expiry instant itself: expired
    assert notes.get(tea) == []
    assert [i.id for i in notes.get()] == [dog]
    assert [i.id for i in notes.get(filters={"kind": "habit"})] == [dog]
    assert [i.id for i in notes.search("green tea", limit=5)] == [dog]
    assert notes.update(tea, "alice drinks black tea") is False
    if impl.stored_values is not None:  # only a read around the memory sees a hidden row
        # Hidden, not yet erased: the row is still in the store until a sweep.
        assert impl.raw_values("alice", "notes") == sorted(["alice drinks green tea",
                                                            "alice walks her dog"])


def test_refresh_on_read_extends_an_items_expiry_by_its_own_ttl(impl, clock):
    impl.ltm.set_retention(Retention(refresh_on_read=True))
    notes = bound(impl.ltm, "alice")
    [tea] = notes.add("alice drinks green tea", ttl=100)
    [dog] = notes.add("alice walks her dog", ttl=timedelta(seconds=30))

    clock.advance(80)
    assert notes.get(tea)[0].expires_at == START + 180  # read at 80: lives to 80 + 100
    clock.advance(60)  # 140: past the first expiry (100), before the refreshed one (180)
    assert [i.id for i in notes.search("green tea", limit=5)] == [tea]  # and again: 240
    assert notes.get(dog) == []  # not read in time: expired at 30
    clock.advance(99)
    assert [i.expires_at for i in notes.get()] == [START + 339]
    clock.advance(100)
    assert notes.get() == []


def test_without_refresh_on_read_reads_leave_the_expiry_alone(impl, clock):
    notes = bound(impl.ltm, "alice")
    [tea] = notes.add("alice drinks green tea", ttl=100)
    clock.advance(80)
    assert notes.get(tea)[0].expires_at == START + 100
    clock.advance(20)
    assert notes.get(tea) == []


def test_the_default_ttl_applies_to_writes_that_name_none_and_none_means_forever(impl, clock):
    impl.ltm.set_retention(Retention(default_ttl=10))
    notes = bound(impl.ltm, "alice")
    [short] = notes.add("short lived")
    [forever] = notes.add("kept forever", ttl=None)
    [own] = notes.add("its own ttl", ttl=1000)
    assert [notes.get(i)[0].expires_at for i in (short, forever, own)] == [
        START + 10, None, START + 1000]
    clock.advance(10)
    assert sorted(i.id for i in notes.get()) == sorted([forever, own])


def test_an_update_sets_a_new_ttl_or_keeps_the_items_expiry(impl, clock):
    notes = bound(impl.ltm, "alice")
    [item] = notes.add("draft", {"v": 1}, ttl=50)
    clock.advance(10)
    assert notes.update(item, "second draft") is True  # no ttl, no default: expiry kept
    assert notes.get(item)[0].expires_at == START + 50
    assert notes.update(item, "third draft", {"v": 3}, ttl=100) is True  # from now (10)
    [stored] = notes.get(item)
    assert (stored.value, dict(stored.metadata), stored.expires_at) == (
        "third draft", {"v": 3}, START + 110)
    assert notes.update(item, "final", ttl=None) is True
    assert notes.get(item)[0].expires_at is None
    clock.advance(10_000)
    assert [i.value for i in notes.get()] == ["final"]


@pytest.mark.parametrize("ttl, error, problem", [
    (0, ValueError, "positive, finite number of seconds, got 0"),
    (-5, ValueError, "got -5"),
    (math.nan, ValueError, "got nan"),
    (math.inf, ValueError, "got inf"),
    (timedelta(0), ValueError, "got datetime.timedelta\\(0\\)"),
    ("60", TypeError, "seconds \\(an int or float\\) or a timedelta, got str"),
    (True, TypeError, "got bool"),
], ids=["zero", "negative", "nan", "infinite", "zero timedelta", "text", "bool"])
def test_a_bad_ttl_is_refused_naming_the_argument_before_the_store(impl, ttl, error, problem):
    notes = bound(impl.ltm, "alice")
    [item] = notes.add("kept")
    impl.record_core_calls()
    with pytest.raises(error, match=f"add\\(ttl=...\\) must be .*{problem}"):
        notes.add("never stored", ttl=ttl)
    with pytest.raises(error, match=f"update\\(ttl=...\\) must be .*{problem}"):
        notes.update(item, "never written", ttl=ttl)
    assert impl.core_calls == []
    assert impl.raw_values("alice", "notes") == ["kept"]


def test_callers_cannot_write_the_expiry_fields_as_metadata(impl):
    notes = bound(impl.ltm, "alice")
    for key in ("expires_at", "ttl_seconds"):
        with pytest.raises(ValueError, match=f"'{key}'.*that the store writes itself"):
            notes.add("sneaky", {key: 1})


def test_a_caller_filter_may_read_the_expiry_to_find_items_about_to_expire(impl, clock):
    notes = bound(impl.ltm, "alice")
    [soon] = notes.add("soon gone", ttl=10)
    notes.add("later gone", ttl=1000)
    notes.add("never gone")
    assert [i.id for i in notes.get(filters={"expires_at": {"lt": START + 100}})] == [soon]
    assert [i.id for i in notes.search("soon gone", limit=3,
                                       filters={"expires_at": {"lt": START + 100}})] == [soon]


def test_a_sweep_deletes_only_expired_items_in_bounded_batches(impl, clock):
    alice, bob = bound(impl.ltm, "alice"), bound(impl.ltm, "bob", "other set")
    alice.add([f"alice note {n}" for n in range(5)], ttl=10)
    alice.add("alice forever")
    bob.add(["bob note 1", "bob note 2"], ttl=10)
    bob.add("bob later", ttl=1000)
    assert impl.ltm.sweep_expired() == 0  # nothing expired yet

    clock.advance(10)
    assert impl.ltm.sweep_expired(limit=3) == 3
    assert impl.ltm.sweep_expired(limit=3) == 3
    assert impl.ltm.sweep_expired(limit=3) == 1
    assert impl.ltm.sweep_expired(limit=3) == 0
    assert impl.raw_values("alice", "notes") == ["alice forever"]
    assert impl.raw_values("bob", "other set") == ["bob later"]


def test_a_sweep_deletes_the_expired_items_of_its_own_job_only(impl, clock):
    other_job = impl.another_job()
    other_job.set_clock(clock)
    bound(other_job, "alice").add("another job's note", ttl=10)
    bound(impl.ltm, "alice").add("this job's note", ttl=10)
    bound(impl.ltm, "alice").add("alice forever")

    clock.advance(10)
    assert impl.ltm.sweep_expired() == 1
    assert impl.raw_values("alice", "notes") == ["alice forever"]
    assert [i.value for i in bound(other_job, "alice").get(
        )] == [] and other_job.sweep_expired() == 1  # its own job's sweep, not ours
    assert other_job.sweep_expired() == 0


def test_a_sweep_records_one_expire_record_per_set_in_the_audit_log(impl, clock, tmp_path):
    audit = MemoryAuditLog(tmp_path / "audit.jsonl")
    impl.ltm.set_audit_log(audit)
    [a] = bound(impl.ltm, "alice").add("alice note", ttl=1)
    [b] = bound(impl.ltm, "bob").add("bob note", ttl=1)
    clock.advance(1)
    impl.ltm.sweep_expired()
    swept = sorted((r["key"], r["set"], r["ids"]) for r in audit.records("test-job")
                   if r["op"] == "expire")
    assert swept == [("alice", "notes", [a]), ("bob", "notes", [b])]
    assert "alice note" not in (tmp_path / "audit.jsonl").read_text()


def test_sweep_refuses_a_bad_limit(impl):
    for limit in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="limit must be a positive int"):
            impl.ltm.sweep_expired(limit=limit)


__all__ = sorted(name for name in dict(globals()) if name.startswith("test_"))
