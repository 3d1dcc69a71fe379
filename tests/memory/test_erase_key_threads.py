"""``erase_key`` runs on any thread (README, "Mailbox thread"): a worker thread erases
a key of real Mem0 (hashing embedder, the embedded default and in-memory Qdrant)
built on the test's thread, which is the memory's mailbox thread."""

import pytest

from flink_agents_ltm.api.memory.mailbox import MailboxThreadError
from tests.memory.conftest import rows_of, run_on_worker


def test_erase_key_on_another_thread_removes_every_set_of_the_key_and_spares_other_keys(
        ltm, mem0_memory):
    notes = {("customer-7", "profile"): ["likes green tea", "lives in Oslo"],
             ("customer-7", "orders"): ["order 1: a teapot"],
             ("customer-8", "profile"): ["likes espresso"]}
    for (key, set_name), values in notes.items():
        ltm.switch_context(key, f"obs-{key}", False)
        ltm.get_memory_set(set_name).add(values)

    assert run_on_worker(lambda: ltm.erase_key("customer-7")) == 3

    assert rows_of(mem0_memory, "customer-7", "profile") == []
    assert rows_of(mem0_memory, "customer-7", "orders") == []
    assert rows_of(mem0_memory, "customer-8", "profile") == ["likes espresso"]
    with pytest.raises(MailboxThreadError):  # what the mailbox thread alone may do
        run_on_worker(lambda: ltm.get_memory_set("profile"))
