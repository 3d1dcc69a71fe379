"""The core of the long-term-memory contract: what a memory author provides (a
``memory_factory`` fixture, optionally returning a :class:`MemoryUnderTest`), the fixtures
the kit's tests use (``memory_of``, ``impl``, ``clock``), and the core tests: scoping,
refusals, replay-stable ids, one validation of every input, filters, erasure."""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from flink_agents_ltm.api.filters import FilterError
from flink_agents_ltm.api.memory import EmptyPartitionKeyError, MemorySet, UnboundMemorySetError
from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory, MemoryLimits
from flink_agents_ltm.api.memory.write_position import call_position, write_position

UUID = "6b89d538-7623-4cc9-a347-8295408dd349"
# The core calls of BaseLongTermMemory: where an operation reaches the store.
CORE = ("_add", "_get", "_search", "_update", "_delete", "_erase_key")
# ``memory_factory(job_id, limits)``: a fresh, empty memory of the implementation under test.
MemoryFactory = Callable[[str, "MemoryLimits | None"], "BaseLongTermMemory | MemoryUnderTest"]


@dataclass
class MemoryUnderTest:
    """A memory under test, and what the tests may do around it."""

    ltm: BaseLongTermMemory
    # (key, set name) -> the values the store holds, read around the memory; by default
    # they are read through the memory itself.
    stored_values: Callable[[str, str], list[str]] | None = None
    reopen: Callable[[], BaseLongTermMemory] | None = None  # a new memory on the same store
    # job id -> a memory of another job on the same store (the tests that jobs stay apart
    # are skipped without it); the test closes nothing it returns.
    open_job: Callable[[str], BaseLongTermMemory] | None = None
    close: Callable[[], None] | None = None  # by default ltm.close()
    core_calls: list[str] = field(default_factory=list)

    def raw_values(self, key: str, set_name: str) -> list[str]:
        if self.stored_values is not None:
            return self.stored_values(key, set_name)
        reader = MemorySet(name=set_name, partition_key=key, observation_suppressed=True,
                           ltm=self.ltm)
        return sorted(item.value for item in reader.get(limit=10_000))

    def another_job(self, job_id: str = "other-job") -> BaseLongTermMemory:
        """A memory of ``job_id`` on this memory's store; skips the test without ``open_job``."""
        if self.open_job is None:
            pytest.skip("the memory_factory gives no MemoryUnderTest.open_job: "
                        "that jobs stay apart on one store is not checked")
        return self.open_job(job_id)

    def record_core_calls(self) -> None:
        """From now on, record the name of every core call that reaches the store."""
        for name in CORE:
            real = getattr(self.ltm, name)

            def recorded(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
                self.core_calls.append(_name)
                return _real(*args, **kwargs)

            setattr(self.ltm, name, recorded)


@pytest.fixture
def memory_of(memory_factory: MemoryFactory) -> Iterator[Callable[..., MemoryUnderTest]]:
    """``memory_of(job_id="test-job", limits=None)``: a memory from the author's
    ``memory_factory``; each is closed after the test."""
    made: list[MemoryUnderTest] = []

    def build(job_id: str = "test-job", limits: MemoryLimits | None = None) -> MemoryUnderTest:
        memory = memory_factory(job_id, limits)
        made.append(memory if isinstance(memory, MemoryUnderTest) else MemoryUnderTest(memory))
        return made[-1]

    yield build
    for memory in reversed(made):
        (memory.close or memory.ltm.close)()


@pytest.fixture
def impl(memory_of: Callable[..., MemoryUnderTest]) -> MemoryUnderTest:
    """A fresh, empty memory under test (job ``test-job``, default limits)."""
    return memory_of()


START = 1_800_000_000.0  # the manual clock's first reading (2027-01-15T08:00:00Z)


class MemoryClock:
    """A memory's clock (seconds since the epoch) that only :meth:`advance` moves."""

    def __init__(self, now: float = START):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(impl: MemoryUnderTest) -> MemoryClock:
    """The clock of ``impl``'s memory, at :data:`START`: no test sleeps."""
    manual = MemoryClock()
    impl.ltm.set_clock(manual)
    return manual


def to_python_memory_set(name: str, key: str, observation_id: str, *,
                         ltm: BaseLongTermMemory) -> MemorySet:
    """A set bound to ``key`` as Java hands one over (the bridge's function of this name)."""
    return MemorySet(name=name, partition_key=key, observation_id=observation_id, ltm=ltm)


def bound(ltm, key, set_name="notes", observation_id=None, suppressed=False):
    ltm.switch_context(key, observation_id, suppressed)
    return ltm.get_memory_set(set_name)


# ------------------------------------------------------------------ scoping


def test_a_key_reads_writes_and_deletes_only_its_own_items(impl):
    alice = bound(impl.ltm, "alice")
    alice.add(["alice drinks green tea", "alice has a dog"])
    bob = bound(impl.ltm, "bob")
    bob.add("bob drinks black coffee")

    assert sorted(i.value for i in alice.get()) == ["alice drinks green tea", "alice has a dog"]
    assert [i.value for i in bob.search("green tea drinks", limit=5)] == [
        "bob drinks black coffee"]
    assert len(bob.delete()) == 1
    assert impl.raw_values("alice", "notes") == ["alice drinks green tea", "alice has a dog"]
    assert impl.raw_values("bob", "notes") == []


def test_by_id_access_never_reaches_another_keys_or_another_sets_items(impl):
    [foreign] = bound(impl.ltm, "bob").add("bob's secret")
    [other_set] = bound(impl.ltm, "alice", "other").add("alice elsewhere")
    notes = bound(impl.ltm, "alice")
    [mine] = notes.add("alice's note")

    assert [i.id for i in notes.get([foreign, other_set, mine, "not-a-uuid", UUID])] == [mine]
    assert notes.delete([foreign, other_set, "not-a-uuid"]) == []
    assert impl.raw_values("bob", "notes") == ["bob's secret"]
    assert impl.raw_values("alice", "other") == ["alice elsewhere"]


OPERATIONS = {
    "add": lambda s: s.add("tea"),
    "get": lambda s: s.get(),
    "get by id": lambda s: s.get([UUID]),
    "search": lambda s: s.search("tea"),
    "delete": lambda s: s.delete(),
    "delete by id": lambda s: s.delete([UUID]),
}


@pytest.mark.parametrize("operation", OPERATIONS)
def test_unbound_and_empty_keys_are_refused_before_anything_reaches_the_store(impl, operation):
    impl.record_core_calls()
    with pytest.raises(UnboundMemorySetError, match="no partition key is bound"):
        OPERATIONS[operation](MemorySet(name="notes", ltm=impl.ltm))
    for key in ("", "  "):
        with pytest.raises(EmptyPartitionKeyError, match="empty or whitespace-only"):
            OPERATIONS[operation](to_python_memory_set("notes", key, "obs", ltm=impl.ltm))
    impl.ltm.switch_context("", "obs")
    with pytest.raises(EmptyPartitionKeyError):
        impl.ltm.delete_memory_set("notes")
    with pytest.raises(EmptyPartitionKeyError):
        impl.ltm.erase_key(" ")
    with pytest.raises(UnboundMemorySetError):
        impl.ltm.erase_key(None)
    assert impl.core_calls == []


@pytest.mark.parametrize("call", [
    lambda s: s.get(filters={"OR": [{"agent_id": "bob"}, {"kind": "x"}]}),
    lambda s: s.search("tea", filters={"NOT": [{"run_id": "other"}]}),
    lambda s: s.search("tea", user_id="another-job"),
    lambda s: s.add("tea", {"nested": {"agent_id": "bob"}}),
], ids=["get filter", "search filter", "search option", "metadata"])
def test_scope_fields_can_never_be_set_by_a_caller(impl, call):
    notes = bound(impl.ltm, "alice")
    impl.record_core_calls()
    with pytest.raises(ValueError, match="cannot be overridden or widened"):
        call(notes)
    assert impl.core_calls == []


def test_keys_that_print_alike_share_one_memory(impl):
    """Documented: the key reaches the store as its text, str(key)."""
    bound(impl.ltm, 7).add("seven as a number")
    assert [i.value for i in bound(impl.ltm, "7").get()] == ["seven as a number"]


@pytest.mark.parametrize("special", ["*", "%2A", "a b", " a"])
def test_wildcard_and_escaped_spellings_are_keys_of_their_own(impl, special):
    bound(impl.ltm, special).add(f"mine: {special!r}")
    for neighbour in {"*", "%2A", "a b", "a%20b", "a", " a"} - {special}:
        bound(impl.ltm, neighbour).add(f"neighbour {neighbour!r}")
    mine = bound(impl.ltm, special)
    assert [i.value for i in mine.get()] == [f"mine: {special!r}"]
    assert [i.value for i in mine.search("neighbour mine", limit=10)] == [f"mine: {special!r}"]


def test_the_wildcard_key_set_and_job_keep_all_their_own_rows_past_1000(memory_of):
    impl = memory_of(job_id="*")
    others = bound(impl.ltm, "x", "*")
    others.add([f"other {n}" for n in range(50)])
    star = bound(impl.ltm, "*", "*")
    for start in range(0, 1100, 275):
        star.add([f"star {n}" for n in range(start, start + 275)])

    assert len(star.get(limit=5000)) == 1100
    assert {i.value for i in star.search("star other", limit=200)} <= {
        f"star {n}" for n in range(1100)}
    assert len(star.search("star other", limit=200)) == 200
    assert len(star.delete()) == 1100
    assert star.get() == []
    assert len(others.get(limit=5000)) == 50


# ------------------------------------------------------------------ replay-stable ids


def test_items_added_in_an_action_get_ids_that_a_replay_reproduces(impl):
    first = bound(impl.ltm, "alice", observation_id="alice#3#0").add(["tea", "cake"])
    replayed_ltm = impl.reopen() if impl.reopen else impl.ltm
    if replayed_ltm is impl.ltm:
        impl.ltm.end_action("alice#3#0", completed=False)  # the same memory forgets the run
    again = bound(replayed_ltm, "alice", observation_id="alice#3#0").add(["tea", "cake"])
    assert again == first
    assert impl.raw_values("alice", "notes") == ["cake", "tea"]  # rewritten, not appended


def test_a_replayed_add_with_other_text_rewrites_the_same_rows(impl):
    """After a code change or non-deterministic text, the replay's version is what stays."""
    bound(impl.ltm, "alice", observation_id="alice#4#0").add("draft")
    impl.ltm.end_action("alice#4#0", completed=False)
    bound(impl.ltm, "alice", observation_id="alice#4#0").add("final")
    assert impl.raw_values("alice", "notes") == ["final"]


def test_each_write_position_of_an_action_mints_its_own_ids(impl):
    notes = bound(impl.ltm, "alice", observation_id="alice#5#0")
    ids = notes.add("body 1") + notes.add("body 2")
    with write_position(call_position(0)):
        ids += notes.add("call 0")
    with write_position(call_position(1)):
        ids += notes.add(["call 1 a", "call 1 b"])
    assert len(set(ids)) == 5
    assert len(impl.raw_values("alice", "notes")) == 5


def test_the_same_action_on_another_key_or_set_mints_other_ids(impl):
    a = bound(impl.ltm, "alice", observation_id="run#0#0").add("tea")
    b = bound(impl.ltm, "bob", observation_id="run#0#0").add("tea")
    c = bound(impl.ltm, "alice", "other", observation_id="run#0#0").add("tea")
    assert len({*a, *b, *c}) == 3


def test_items_added_outside_an_action_get_fresh_ids_every_time(impl):
    notes = bound(impl.ltm, "alice")
    assert notes.add("tea") != notes.add("tea")
    assert impl.raw_values("alice", "notes") == ["tea", "tea"]


def test_an_action_reports_the_items_it_stored_whether_it_completed_or_failed(impl):
    bound(impl.ltm, "alice", observation_id="ok").add(["a", "b"])
    bound(impl.ltm, "alice", observation_id="failed").add("c")
    bound(impl.ltm, "alice", observation_id="reader").get()
    assert impl.ltm.end_action("ok", completed=True).items_added == 2
    failed = impl.ltm.end_action("failed", completed=False)
    assert (failed.items_added, failed.observations) == (1, ())
    assert impl.ltm.end_action("reader", completed=True).items_added == 0


def test_observations_name_each_operation_unless_the_action_is_suppressed(impl):
    notes = bound(impl.ltm, "alice", observation_id="obs")
    [item] = notes.add("green tea")
    notes.search("tea")
    notes.get([item])
    notes.delete([item])
    ops = [(o.op.value, o.ids) for o in impl.ltm.end_action("obs", True).observations]
    assert ops == [("add", (item,)), ("search", (item,)), ("get", (item,)),
                   ("delete", (item,))]
    bound(impl.ltm, "alice", observation_id="quiet", suppressed=True).add("hush")
    assert impl.ltm.end_action("quiet", True).observations == ()


# ------------------------------------------------------------------ one validation


@pytest.mark.parametrize("where, call", [
    ("partition key", lambda ltm: bound(ltm, "a\x00b").add("x")),
    ("memory set name", lambda ltm: bound(ltm, "k", "notes\ud800")),
    ("item 1", lambda ltm: bound(ltm, "k").add(["fine", "bad\x00"])),
    ("metadata 0 at 'note'", lambda ltm: bound(ltm, "k").add("x", {"note": "\udfff"})),
    ("metadata 0 key", lambda ltm: bound(ltm, "k").add("x", {"no\x00te": 1})),
    ("search query", lambda ltm: bound(ltm, "k").search("tea\x00")),
    (r"filters\['kind'\]", lambda ltm: bound(ltm, "k").get(filters={"kind": "a\x00"})),
    (r"filters: field name 'k\\x00'", lambda ltm: bound(ltm, "k").search(
        "tea", filters={"k\x00": 1})),
    (r"filters\['OR'\]\[0\]\['day'\]\['gte'\]", lambda ltm: bound(ltm, "k").get(
        filters={"OR": [{"day": {"gte": "\ud800"}}]})),
    (r"filters\['kind'\]\[1\]", lambda ltm: bound(ltm, "k").get(
        filters={"kind": ["tea", "\udfff"]})),
])
def test_nul_characters_and_lone_surrogates_are_refused_on_every_store(impl, where, call):
    impl.record_core_calls()
    with pytest.raises(ValueError, match=f"{where}.* contains (a NUL character|a lone surrogate)"):
        call(impl.ltm)
    assert [c for c in impl.core_calls if c != "_get"] == []


@pytest.mark.parametrize("value, named", [
    (datetime.datetime(2026, 1, 1), "datetime"), ({1, 2}, "set"), (b"x", "bytes"),
    (math.nan, "NaN"), (math.inf, "inf"), ({"when": datetime.date(2026, 1, 1)}, "date"),
])
def test_metadata_must_be_json_on_every_store(impl, value, named):
    notes = bound(impl.ltm, "k")
    with pytest.raises((TypeError, ValueError), match=named):
        notes.add("x", {"field": value})
    assert impl.raw_values("k", "notes") == []


def test_size_limits_are_configurable_and_say_which_option_to_raise(memory_of):
    limits = MemoryLimits(max_item_length=10, max_query_length=5, max_name_length=8,
                          max_metadata_length=20)
    impl = memory_of(limits=limits)
    notes = bound(impl.ltm, "k")
    with pytest.raises(ValueError, match="long-term-memory.max-item-length"):
        notes.add("x" * 11)
    with pytest.raises(ValueError, match="long-term-memory.max-query-length"):
        notes.search("x" * 6)
    with pytest.raises(ValueError, match="long-term-memory.max-name-length"):
        bound(impl.ltm, "k" * 9)
    with pytest.raises(ValueError, match="long-term-memory.max-name-length"):
        bound(impl.ltm, "k", "n" * 9)
    with pytest.raises(ValueError, match="long-term-memory.max-metadata-length"):
        notes.add("x", {"note": "y" * 30})
    assert notes.add("x" * 10, {"n": 1})


@pytest.mark.parametrize("filters, problem", [
    ({"kind": {"like": "t%"}}, "unknown operator 'like'"),
    ({"OR": {"kind": "tea"}}, r"'OR' takes a non-empty list of filters, got a dict; write "
                              r"\{'OR': \[\{'kind': 'tea'\}\]\}"),
    ({"NOT": {"kind": "tea"}}, "'NOT' takes a non-empty list of filters, got a dict"),
    ({"AND": []}, "'AND' takes a non-empty list of filters"),
    ({"kind": {"in": "tea"}}, "'in' takes a non-empty list of values"),
    ({"rating": {"gt": None}}, "'gt' orders numbers or strings, got NoneType"),
    ({"rating": {"gte": True}}, "'gte' orders numbers or strings, got bool"),
    ({"kind": None}, r"None is not a value to compare with; write \{'kind': '\*'\}"),
    ({"kind": {"ne": None}}, "None is not a value to compare with"),
    ({"kind": {"eq": ["tea"]}}, "expected a string, number or boolean, got list"),
    ({"$or": [{"kind": "tea"}]}, "not part of the filter language"),
])
def test_filters_outside_the_language_are_refused_before_the_store(impl, filters, problem):
    notes = bound(impl.ltm, "k")
    impl.record_core_calls()
    with pytest.raises(FilterError, match=problem):
        notes.get(filters=filters)
    with pytest.raises(FilterError, match=problem):
        notes.search("tea", filters=filters)
    assert impl.core_calls == []


# ------------------------------------------------------------------ behaviour


DRINKS = {"green tea", "black tea", "espresso", "water"}


def drinks(impl):
    notes = bound(impl.ltm, "k")
    notes.add(["green tea", "black tea", "espresso", "water"], [
        {"kind": "tea", "rating": 5, "origin": "Japan", "day": "2024-05-01", "organic": True},
        {"kind": "tea", "rating": 3, "origin": "India", "day": "2023-11-20T08:30:00+05:30"},
        {"kind": "coffee", "rating": 4, "origin": "Italy", "day": "2024-01-15",
         "organic": False},
        {"kind": None, "rating": 1.0, "day": 20240101},
    ])
    return notes


@pytest.mark.parametrize("filters, expected", [
    ({"kind": "tea"}, {"green tea", "black tea"}),
    ({"kind": {"eq": "coffee"}}, {"espresso"}),
    ({"kind": {"ne": "tea"}}, {"espresso", "water"}),              # None: not equal
    ({"kind": {"in": ["tea", "coffee"]}}, {"green tea", "black tea", "espresso"}),
    ({"kind": ["tea", "coffee"]}, {"green tea", "black tea", "espresso"}),  # shorthand: in
    ({"kind": {"nin": ["tea"]}}, {"espresso", "water"}),
    ({"rating": 1}, {"water"}),                                    # 1 equals 1.0
    ({"organic": True}, {"green tea"}),
    ({"organic": {"ne": True}}, {"black tea", "espresso", "water"}),  # missing: not equal
    ({"rating": {"gte": 4}}, {"green tea", "espresso"}),
    ({"rating": {"gt": 3, "lt": 5}}, {"espresso"}),
    ({"rating": {"lte": 1}}, {"water"}),
    ({"rating": {"lt": "9"}}, set()),                              # numbers vs text: no
    ({"day": {"gte": "2024-01-01"}}, {"green tea", "espresso"}),   # ISO dates order as text
    ({"day": {"lt": "2023-11-20T04:00:00Z"}}, set()),              # ... not as instants
    ({"day": {"gt": 20000000}}, {"water"}),                        # ... numbers as numbers
    ({"origin": {"gt": "India"}}, {"green tea", "espresso"}),
    ({"created_at": {"gte": "2000-01-01"}}, DRINKS),               # the store's own dates
    ({"NOT": [{"hash": "*"}]}, DRINKS),                            # Mem0's own fields are
    ({"data": {"ne": "water"}}, DRINKS),                           # ... not metadata
    ({"origin": {"contains": "ap"}}, {"green tea"}),
    ({"origin": {"icontains": "INDIA"}}, {"black tea"}),
    ({"kind": "*"}, {"green tea", "black tea", "espresso"}),       # present and not None
    ({"NOT": [{"kind": "*"}]}, {"water"}),
    ({"organic": "*"}, {"green tea", "espresso"}),
    ({"OR": [{"kind": "coffee"}, {"rating": 1}]}, {"espresso", "water"}),
    ({"AND": [{"kind": "tea"}, {"rating": {"lt": 5}}]}, {"black tea"}),
    ({"NOT": [{"kind": "tea"}]}, {"espresso", "water"}),
    ({"NOT": [{"kind": "tea"}, {"rating": 1}]}, {"espresso"}),     # none of them
    ({"kind": "tea", "NOT": [{"origin": "India"}]}, {"green tea"}),
    ({"OR": [{"AND": [{"kind": "tea"}, {"day": {"gt": "2024"}}]}, {"organic": False}]},
     {"green tea", "espresso"}),
])
def test_filters_mean_the_same_on_every_store(impl, filters, expected):
    notes = drinks(impl)
    assert {i.value for i in notes.get(filters=filters)} == expected
    assert {i.value for i in notes.search("green black tea espresso water", limit=10,
                                          filters=filters)} == expected


def test_a_batched_add_returns_ids_in_input_order_with_each_items_metadata(impl):
    notes = bound(impl.ltm, "k")
    ids = notes.add([f"item {n}" for n in range(30)], [{"n": n} for n in range(30)])
    by_id = {item.id: item for item in notes.get(ids)}
    assert [(by_id[i].value, by_id[i].metadata["n"]) for i in ids] == [
        (f"item {n}", n) for n in range(30)]


def test_changing_an_item_read_back_changes_nothing_stored(impl):
    notes = bound(impl.ltm, "k")
    [memory_id] = notes.add(["green tea"], [{"cups": 2}])
    for read in (notes.get([memory_id]), notes.get(), notes.search("tea", limit=1)):
        read[0].metadata["cups"] = 99
        read[0].metadata["extra"] = True
    assert [dict(item.metadata) for item in notes.get([memory_id])] == [{"cups": 2}]
    assert [dict(item.metadata) for item in notes.search("tea", limit=1)] == [{"cups": 2}]


def test_search_and_get_honour_limit_beyond_mem0s_default_of_20(impl):
    notes = bound(impl.ltm, "k")
    notes.add([f"tea note {n}" for n in range(25)])
    assert len(notes.search("tea note", limit=3)) == 3
    assert len(notes.search("tea note", limit=25)) == 25
    assert len(notes.search("tea note", limit=40)) == 25
    assert len(notes.get(limit=5)) == 5
    assert len(notes.get(limit=40)) == 25


def test_erasing_a_key_removes_every_set_of_it_and_nothing_else(impl):
    bound(impl.ltm, "alice", "prefs").add(["tea", "cats"])
    bound(impl.ltm, "alice", "orders").add("teapot")
    bound(impl.ltm, "bob", "prefs").add("coffee")
    assert impl.ltm.erase_key("alice") == 3
    assert impl.raw_values("alice", "prefs") == impl.raw_values("alice", "orders") == []
    assert impl.raw_values("bob", "prefs") == ["coffee"]


def test_deleting_a_set_deletes_it_for_the_current_key_only(impl):
    bound(impl.ltm, "alice").add("tea")
    bound(impl.ltm, "bob").add("coffee")
    impl.ltm.switch_context("alice", "obs")
    assert impl.ltm.delete_memory_set("notes") is True
    assert impl.ltm.delete_memory_set("notes") is False
    assert impl.raw_values("bob", "notes") == ["coffee"]


# What ``from flink_agents_ltm.testing.conformance import *`` brings into a test module:
# the fixtures the tests use and every test.
__all__ = ["START", "MemoryClock", "MemoryFactory", "MemoryUnderTest", "clock", "impl",
           "memory_of",
           *sorted(name for name in dict(globals()) if name.startswith("test_"))]
