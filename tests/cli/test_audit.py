"""``flink-agents-ltm audit``: an auditor asks "was key K erased, and when" from a shell and
gets the job's audit records (ids and times, never text); a key's records can be removed."""

from __future__ import annotations

import json

from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec
from tests.cli.test_erase_key import BASE_DIR, private_config, remember, run_cli

ENABLED = "long-term-memory.audit-log.enabled"


def test_erase_key_with_the_audit_log_on_leaves_a_record_audit_prints_for_the_key(tmp_path):
    store_dir = tmp_path / "ltm"
    remember("cli-job", StoreSpec("cli-job", embedder="hashing", base_dir=store_dir), {
        ("customer 7", "profile"): ["the passport number is 123", "likes tea"],
        ("customer-8", "profile"): ["someone else's note"]})
    config = private_config(tmp_path, {BASE_DIR: str(store_dir), ENABLED: True})

    erased = run_cli("erase-key", "--job-id", "cli-job", "--key", "customer 7",
                     "--key", "customer-8", "--config", str(config))
    printed = run_cli("audit", "--job-id", "cli-job", "--key", "customer 7",
                      "--config", str(config))

    assert erased.returncode == 0 and printed.returncode == 0, (erased.stderr, printed.stderr)
    [record] = [json.loads(line) for line in printed.stdout.splitlines()]
    assert (record["op"], record["job"], record["key"], record["count"]) == (
        "erase_key", "cli-job", "customer 7", 2)
    assert record["time"].endswith("Z")
    assert (store_dir / "audit" / "memory-audit.jsonl").stat().st_mode & 0o077 == 0


def test_audit_erase_key_removes_the_keys_records_and_spares_the_others(tmp_path):
    audit_file = tmp_path / "audit.jsonl"
    lines = [{"time": "t", "op": "add", "job": "j", "key": k, "set": "s", "ids": [i]}
             for k, i in (("alice", "id-a"), ("bob", "id-b"), ("alice", "id-c"))]
    audit_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    audit_file.chmod(0o600)

    removed = run_cli("audit", "--job-id", "j", "--erase-key", "alice", "--file", str(audit_file))
    left = run_cli("audit", "--job-id", "j", "--file", str(audit_file))

    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.splitlines() == [
        f"removed 2 audit records of key 'alice' of job 'j' from {audit_file}"]
    records = [json.loads(line) for line in left.stdout.splitlines()]
    assert [(r["op"], r["key"]) for r in records] == [("add", "bob"), ("erase_audit", None)]
    assert "id-a" not in audit_file.read_text() and "alice" not in audit_file.read_text()


def test_audit_without_a_log_exits_2_in_one_line_saying_which_option_writes_it(tmp_path):
    missing = tmp_path / "nowhere.jsonl"
    result = run_cli("audit", "--job-id", "j", "--file", str(missing))
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert str(missing) in line and ENABLED in line


def test_audit_explains_itself_with_help():
    result = run_cli("audit", "--help")
    assert result.returncode == 0
    assert "--erase-key" in result.stdout and "never a value" in result.stdout
