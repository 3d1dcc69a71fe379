"""The conformance kit, used as a memory author uses it: a test module of their own that
imports the kit's tests and gives a ``memory_factory``, run by pytest in a process of its
own. It passes on a memory that keeps the contract (the in-memory one, returned bare, so
the kit reads the store through the memory itself) and fails on one that does not (a
memory that ignores the key: every key shares one memory)."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

AUTHORS_MODULE = '''
import dataclasses

import pytest

from flink_agents_ltm.api.memory.long_term_memory import MemoryLimits
from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import InMemoryLongTermMemory
from flink_agents_ltm.testing.conformance import *  # noqa: F403


class KeyIgnoringMemory(InMemoryLongTermMemory):
    """Keeps every key's items in one place."""

    def _rows(self, scope):
        return super()._rows(dataclasses.replace(scope, partition_key="everyone"))


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
         "-p", "no:randomly", "-rf", "--rootdir", str(tmp_path), "-c", "/dev/null"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    counts = {word: int(number) for number, word in
              re.findall(r"(\d+) (passed|failed|error)", result.stdout.splitlines()[-1])}
    return counts, result.stdout + result.stderr


def test_the_kit_passes_on_a_memory_that_keeps_the_contract(tmp_path):
    counts, output = run_the_kit(tmp_path, "InMemoryLongTermMemory")
    assert counts.get("failed", 0) == counts.get("error", 0) == 0, output
    assert counts["passed"] > 80, output


def test_the_kit_fails_on_a_memory_that_ignores_the_key(tmp_path):
    counts, output = run_the_kit(tmp_path, "KeyIgnoringMemory")
    assert counts.get("failed", 0) > 0, output
    for test in ("test_a_key_reads_writes_and_deletes_only_its_own_items",
                 "test_by_id_access_never_reaches_another_keys_or_another_sets_items",
                 "test_erasing_a_key_removes_every_set_of_it_and_nothing_else",
                 "test_deleting_a_set_deletes_it_for_the_current_key_only"):
        assert f"FAILED test_my_memory.py::{test}" in output, test
