"""The retention part of the long-term-memory contract, held by every implementation (in-memory,
Mem0 on the embedded store, on embedded Qdrant, on a real pgvector server, on a vector store of
ours): an item added or updated with a ``ttl`` is read until its expiry, is invisible to get,
search and update from that instant, can be kept alive by reads (refresh on read), and is
deleted for real by a sweep. Time is a manual clock: no test sleeps."""

import math
import uuid
from datetime import timedelta

import pytest

from flink_agents_ltm.api.memory.audit import MemoryAuditLog
from flink_agents_ltm.api.memory.expiry import Retention
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from tests.memory.contracts import implementation
from tests.memory.test_contract_update import another_job, bound
from tests.memory.test_mem0_rows import files_mentioning

START = 1_800_000_000.0


class ManualClock:
    def __init__(self, now: float = START):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(impl):
    manual = ManualClock()
    impl.ltm.set_clock(manual)
    return manual


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


def test_a_sweep_deletes_only_expired_items_of_this_job_in_bounded_batches(impl, clock):
    alice, bob = bound(impl.ltm, "alice"), bound(impl.ltm, "bob", "other set")
    alice.add([f"alice note {n}" for n in range(5)], ttl=10)
    alice.add("alice forever")
    bob.add(["bob note 1", "bob note 2"], ttl=10)
    bob.add("bob later", ttl=1000)
    other_job = another_job(impl)
    other_job.set_clock(clock)
    bound(other_job, "alice").add("another job's note", ttl=10)
    assert impl.ltm.sweep_expired() == 0  # nothing expired yet

    clock.advance(10)
    assert impl.ltm.sweep_expired(limit=3) == 3
    assert impl.ltm.sweep_expired(limit=3) == 3
    assert impl.ltm.sweep_expired(limit=3) == 1
    assert impl.ltm.sweep_expired(limit=3) == 0
    assert impl.raw_values("alice", "notes") == ["alice forever"]
    assert impl.raw_values("bob", "other set") == ["bob later"]
    assert [i.value for i in bound(other_job, "alice").get(
        )] == [] and other_job.sweep_expired() == 1  # its own job's sweep, not ours


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


# ------------------------------------------------------------------ expiry is erasure


def test_after_expiry_and_a_sweep_the_text_is_in_no_file_of_the_embedded_store(tmp_path):
    memory, release = acquire_memory(StoreSpec(job_id="expiry", embedder="hashing",
                                               base_dir=tmp_path))
    try:
        clock = ManualClock()
        ltm = Mem0LongTermMemory("expiry", memory, clock=clock)
        marker = f"passport-{uuid.uuid4().hex}"
        bound(ltm, "customer-7").add([f"{marker} number one", f"{marker} number two"], ttl=60)
        bound(ltm, "customer-8").add("someone else's note")
        assert files_mentioning(tmp_path, marker)  # the check sees the text while stored
        clock.advance(60)
        assert files_mentioning(tmp_path, marker)  # expired is hidden, not yet erased

        assert ltm.sweep_expired() == 2
        assert files_mentioning(tmp_path, marker) == []
        assert files_mentioning(tmp_path, "someone else's note")
    finally:
        release()


def test_after_expiry_and_a_sweep_the_text_is_in_no_row_of_pgvector(pgvector_session):
    marker = f"passport-{uuid.uuid4().hex}"
    with implementation("mem0-pgvector", pgvector=pgvector_session[0]) as impl:
        clock = ManualClock()
        impl.ltm.set_clock(clock)
        [item] = bound(impl.ltm, "customer-7").add(f"{marker} number one", ttl=60)
        bound(impl.ltm, "customer-8").add("someone else's note")
        store = impl.ltm.memory.vector_store
        pg = getattr(store, "inner", store)

        def rows_mentioning(text):
            with pg._get_cursor() as cur:
                cur.execute(f"SELECT id FROM {pg.collection_name} "  # our own table
                            "WHERE payload::text LIKE %s", (f"%{text}%",))
                return [str(row[0]) for row in cur.fetchall()]

        clock.advance(60)
        assert rows_mentioning(marker) == [item]
        assert impl.ltm.sweep_expired() == 1
        assert rows_mentioning(marker) == []
        assert len(rows_mentioning("someone else's note")) == 1


def test_an_embedded_store_file_from_before_expiry_gets_the_column_and_its_rows_never_expire(
        tmp_path):
    import sqlite3

    from flink_agents_ltm.integrations.mem0.providers.embedded.store import EmbeddedVectorStore

    path = str(tmp_path / "vectors.sqlite3")
    scope = {"user_id": "j", "agent_id": "k", "run_id": "n"}
    old = EmbeddedVectorStore(path, 3)
    old.insert([[1.0, 0.0, 0.0]], [{**scope, "data": "written long ago"}], ["a"])
    old.close()
    with sqlite3.connect(path) as conn:  # the file as the store wrote it before expiry
        conn.execute("DROP INDEX vectors_expiry")
        conn.execute("ALTER TABLE vectors DROP COLUMN expires_at")
    conn.close()

    store = EmbeddedVectorStore(path, 3)
    try:
        visible = {**scope, "NOT": [{"expires_at": {"lte": START}}]}
        assert [hit.id for hit in store.search("q", [1.0, 0.0, 0.0], 5, visible)] == ["a"]
        store.insert([[0.0, 1.0, 0.0]], [{**scope, "data": "new", "expires_at": START}], ["b"])
        assert [row.id for row in store.list(visible)[0]] == ["a"]
        assert [row.id for row in store.list({"user_id": "j", "expires_at": {"lte": START}}
                                             )[0]] == ["b"]
    finally:
        store.close()
