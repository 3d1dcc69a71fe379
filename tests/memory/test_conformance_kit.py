"""The conformance kit, used as a memory author uses it: a test module of their own that
imports the kit's tests and gives a ``memory_factory``, run by pytest in a process of its
own. It passes on a memory that keeps the contract (the in-memory one, returned bare, so
the kit reads the store through the memory itself) and fails, in the tests that name the
broken rule, on ones that do not: a memory that ignores the key (every key shares one
memory), one that ignores expiry (it stores no expiry, so expired items are still read),
and one whose update is not confined to its key and set."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from flink_agents_ltm.testing.conformance import expiry, update

ROOT = Path(__file__).resolve().parents[2]

AUTHORS_MODULE = '''
import dataclasses

import pytest

from flink_agents_ltm.api.memory.expiry import EXPIRY_FIELDS
from flink_agents_ltm.api.memory.long_term_memory import MemoryLimits
from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import InMemoryLongTermMemory
from flink_agents_ltm.testing.conformance import *  # noqa: F403


class KeyIgnoringMemory(InMemoryLongTermMemory):
    """Keeps every key's items in one place."""

    def _rows(self, scope):
        return super()._rows(dataclasses.replace(scope, partition_key="everyone"))


class ExpiryIgnoringMemory(InMemoryLongTermMemory):
    """Stores no expiry: an item is read after its ttl as before it."""

    def _add(self, scope, items):
        return super()._add(scope, [dataclasses.replace(item, metadata={
            k: v for k, v in item.metadata.items() if k not in EXPIRY_FIELDS})
            for item in items])


class ByIdUnscopedMemory(InMemoryLongTermMemory):
    """Finds an item by its id alone, in any key or set of the job, to read or update it."""

    def _where(self, scope, ids):
        for (job, key, set_name), rows in list(self._sets.items()):
            if job == scope.job_id and any(i in rows for i in ids):
                return dataclasses.replace(scope, partition_key=key, set_name=set_name)
        return scope

    def _get(self, scope, ids, filters, limit):
        return super()._get(scope if ids is None else self._where(scope, ids), ids, filters,
                            limit)

    def _update(self, scope, item, keep_metadata):
        return super()._update(self._where(scope, [item.id]), item, keep_metadata)


class UpdateMisfilingMemory(InMemoryLongTermMemory):
    """Writes an updated item back under another key (as a store that rewrites a row
    without its scope would): the set keeps the old text."""

    def _update(self, scope, item, keep_metadata):
        if item.id not in self._rows(scope):
            return False
        return bool(self._add(dataclasses.replace(scope, partition_key="everyone"), [item]))


@pytest.fixture
def memory_factory():
    return lambda job_id, limits: {MEMORY}(job_id, limits=limits or MemoryLimits())
'''


def run_the_kit(tmp_path: Path, memory: str) -> tuple[dict[str, int], str]:
    """(counts of passed and failed tests, pytest's output) of the kit on ``memory``."""
    module = tmp_path / "test_my_memory.py"
    module.write_text(textwrap.dedent(AUTHORS_MODULE).replace("{MEMORY}", memory))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(module), "-q", "-p", "no:cacheprovider",
         "-p", "no:randomly", "-rfs", "--rootdir", str(tmp_path), "-c", "/dev/null"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    counts = {word: int(number) for number, word in
              re.findall(r"(\d+) (passed|failed|error|skipped)", result.stdout.splitlines()[-1])}
    return counts, result.stdout + result.stderr


def test_the_kit_passes_on_a_memory_that_keeps_the_contract(tmp_path):
    counts, output = run_the_kit(tmp_path, "InMemoryLongTermMemory")
    assert counts.get("failed", 0) == counts.get("error", 0) == 0, output
    assert counts["passed"] >= 130, output
    # A bare memory gives no second job on its store: the two tests of jobs kept apart skip.
    assert counts.get("skipped") == 2 and "no MemoryUnderTest.open_job" in output, output


def test_the_kit_fails_on_a_memory_that_ignores_the_key(tmp_path):
    counts, output = run_the_kit(tmp_path, "KeyIgnoringMemory")
    assert counts.get("failed", 0) > 0, output
    for test in ("test_a_key_reads_writes_and_deletes_only_its_own_items",
                 "test_by_id_access_never_reaches_another_keys_or_another_sets_items",
                 "test_erasing_a_key_removes_every_set_of_it_and_nothing_else",
                 "test_deleting_a_set_deletes_it_for_the_current_key_only"):
        assert f"FAILED test_my_memory.py::{test}" in output, test


def the_failed_tests(output: str) -> set[str]:
    return set(re.findall(r"^FAILED test_my_memory\.py::(\w+)", output, re.MULTILINE))


def test_the_kit_fails_on_a_memory_that_ignores_expiry(tmp_path):
    _, output = run_the_kit(tmp_path, "ExpiryIgnoringMemory")
    failed = the_failed_tests(output)
    for test in ("test_an_item_with_a_ttl_is_read_until_it_expires_and_is_invisible_at_once_after",
                 "test_the_default_ttl_applies_to_writes_that_name_none_and_none_means_forever",
                 "test_a_sweep_deletes_only_expired_items_in_bounded_batches",
                 "test_a_caller_filter_may_read_the_expiry_to_find_items_about_to_expire"):
        assert test in failed, output
    assert failed <= set(expiry.__all__), failed  # and nothing but the expiry part


def test_the_kit_fails_on_a_memory_whose_update_reaches_another_keys_item(tmp_path):
    _, output = run_the_kit(tmp_path, "ByIdUnscopedMemory")
    assert the_failed_tests(output) == {
        "test_an_id_outside_the_set_is_not_found_by_update_and_its_row_is_untouched",
        "test_by_id_access_never_reaches_another_keys_or_another_sets_items"}, output


def test_the_kit_fails_on_a_memory_whose_update_writes_outside_its_key(tmp_path):
    _, output = run_the_kit(tmp_path, "UpdateMisfilingMemory")
    failed = the_failed_tests(output)
    for test in ("test_an_update_rewrites_the_item_in_place_and_search_finds_the_new_text",
                 "test_metadata_none_keeps_the_items_metadata_and_a_dict_replaces_it_whole",
                 "test_a_replayed_action_that_adds_and_updates_leaves_one_row_with_the_updated_value"):
        assert test in failed, output
    # and nothing but the update part, and the expiry part's test of an update's expiry
    assert failed <= {*update.__all__, "test_an_update_sets_a_new_ttl_or_keeps_the_items_expiry"
                      }, failed
