"""The audit log, beyond the conformance kit: the audit part of the contract
(:mod:`flink_agents_ltm.testing.conformance.audit`) runs on every implementation through
test_contract.py; here, the file itself (private, appends that survive an erasure, a
failure named in one line) and the option that attaches it."""

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
from flink_agents_ltm.testing.conformance.core import bound
from tests.memory.contracts import implementation

SECRET_VALUE = "alice's card ends in 4242"


@pytest.fixture
def audit(tmp_path):
    return MemoryAuditLog(tmp_path / "audit" / "memory-audit.jsonl")


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
