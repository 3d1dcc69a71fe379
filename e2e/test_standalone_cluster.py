"""Agent jobs on a real standalone Flink cluster (started by scripts/flink-cluster) whose
two task slots run two Python worker processes, with long-term memory in a real pgvector
server (started by scripts/pgvector-server) or in the embedded store."""

import json
import subprocess
import sys
import sysconfig
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from tests.pgvector.server import ROOT, rows_in_postgres

JOB = str(ROOT / "e2e" / "jobs" / "ltm_agent_job.py")
JOB_FOLDER = str(ROOT / "e2e" / "jobs")
SITE_PACKAGES = sysconfig.get_paths()["purelib"]
# The default venv's build goes to target/; another Flink's (a .venv-flink-<version> running
# these tests) is built against that install's jars by scripts/java-bridge-props' properties.
DEFAULT_VENV = Path(sys.prefix).resolve() == (ROOT / ".venv").resolve()
MAVEN_PROPS = [] if DEFAULT_VENV else subprocess.run(
    [str(ROOT / "scripts" / "java-bridge-props"), sys.executable], capture_output=True,
    text=True, check=True).stdout.split()
BUILD_DIR = next((Path(p.split("=", 1)[1]) for p in MAVEN_PROPS if p.startswith("-Dbuild.dir=")),
                 ROOT / "java-bridge" / "target")
JAR = BUILD_DIR / "flink-agents-ltm-java-bridge-0.1.0-SNAPSHOT.jar"
KEYS, NOTES = 8, 3

pytestmark = pytest.mark.cluster


def results_of(client: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line[len("RESULT "):]) for line in client.stdout.splitlines()
            if line.startswith("RESULT ")]


def test_two_python_workers_share_pgvector_and_every_key_reads_only_its_own_notes(
        cluster, scratch):
    store = json.loads(json.dumps(cluster.vector_store))
    store["config"]["collection_name"] = f"e2e_{uuid.uuid4().hex[:10]}"
    store_file = scratch / "store.json"  # the password stays out of argv and Flink's log
    store_file.touch(mode=0o600)
    store_file.write_text(json.dumps(store))
    client = cluster.run("-py", JOB, "-pyfs", JOB_FOLDER, "--job-id", "e2e-shared",
                         "--keys", str(KEYS), "--notes", str(NOTES), "--mode", "process",
                         "--parallelism", "2", "--vector-store-file", str(store_file),
                         "--base-dir", str(scratch))
    assert client.returncode == 0, cluster.summary_of(client)
    assert "EmbeddedStoreInUseError" not in client.stdout + client.stderr
    results = results_of(client)
    assert len(results) == KEYS * NOTES
    assert len({r["pid"] for r in results}) == 2  # two Python worker processes, one store
    for r in results:  # inputs of a key run in order: note n sees exactly notes 0..n
        assert r["seen"] == [f"{r['key']} note {i}" for i in range(r["n"] + 1)], r

    rows = rows_in_postgres(store)
    assert set(rows) == {r["id"] for r in results}
    by_key = defaultdict(list)
    for payload in rows.values():
        assert payload["user_id"] == "e2e-shared" and payload["run_id"] == "notes"
        assert payload["data"].startswith(payload["agent_id"] + " "), payload
        by_key[payload["agent_id"]].append(payload["data"])
    assert {k: sorted(v) for k, v in by_key.items()} == {
        f"key-{k:02d}": [f"key-{k:02d} note {n}" for n in range(NOTES)] for k in range(KEYS)}


@pytest.mark.flink_smoke  # the standalone-cluster job of every supported Flink's smoke set
def test_two_python_workers_share_the_embedded_store_and_every_key_reads_only_its_own_notes(
        cluster, scratch):
    rendezvous = scratch / "rendezvous"  # both workers hold the store open at the same time
    rendezvous.mkdir()
    client = cluster.run("-py", JOB, "-pyfs", JOB_FOLDER, "--job-id", "e2e-embedded",
                         "--keys", str(KEYS), "--notes", str(NOTES), "--mode", "process",
                         "--parallelism", "2", "--base-dir", str(scratch),
                         "--rendezvous", str(rendezvous))
    assert client.returncode == 0, cluster.summary_of(client)
    results = results_of(client)
    assert len(results) == KEYS * NOTES
    assert len({r["pid"] for r in results}) == 2  # two Python worker processes, one file
    assert len(list(rendezvous.iterdir())) == 2
    for r in results:  # each worker reads what it and the other wrote for its keys only
        assert r["seen"] == [f"{r['key']} note {i}" for i in range(r["n"] + 1)], r

    from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory

    assert (scratch / "e2e-embedded" / "vectors.sqlite3").is_file()
    memory, release = acquire_memory(StoreSpec("e2e-embedded", embedder="hashing",
                                               base_dir=scratch))
    try:
        rows = memory.get_all(filters={"user_id": "e2e-embedded"}, top_k=1000)["results"]
    finally:
        release()
    assert {row["id"] for row in rows} == {r["id"] for r in results}
    by_key = defaultdict(list)
    for row in rows:
        by_key[row["agent_id"]].append(row["memory"])
    assert {k: sorted(v) for k, v in by_key.items()} == {
        f"key-{k:02d}": [f"key-{k:02d} note {n}" for n in range(NOTES)] for k in range(KEYS)}


def java_job_jar() -> Path:
    """The job's jar, rebuilt (without its tests) when a source is newer than the jar."""
    sources = [ROOT / "java-bridge" / "pom.xml",
               *(ROOT / "java-bridge" / "src" / "main").rglob("*.java")]
    if not JAR.exists() or max(p.stat().st_mtime for p in sources) > JAR.stat().st_mtime:
        subprocess.run(["mvn", "-o", "-B", "-q", "package", "-DskipTests", *MAVEN_PROPS],
                       cwd=ROOT / "java-bridge", check=True, timeout=600)
    return JAR


def run_java_job(cluster, scratch: Path, keys: list[str], *args: str) -> list[dict]:
    """MemoryAgentJob (the customer-memory example on the Java agent API) at parallelism 2 on
    NOTES notes per key (``<key> note <n>``, in order n = 0, 1, ...); answers its JSON replies
    as dicts, once the job finished."""
    notes = scratch / "notes.csv"
    notes.write_text("".join(f"{k},{k} note {n}\n" for n in range(NOTES) for k in keys))
    client = cluster.run("-c", "org.flinkagents.ltm.job.MemoryAgentJob", str(java_job_jar()),
                         "--python", sys.executable,
                         "--pythonpath", f"{SITE_PACKAGES}:{ROOT}",
                         "--input", str(notes), "--parallelism", "2", *args)
    assert client.returncode == 0, cluster.summary_of(client)
    return [json.loads(line) for line in client.stdout.splitlines()
            if line.startswith('{"customer"')]


def check_each_key_saw_only_its_own_notes(lines: list[dict], keys: list[str]) -> None:
    assert len(lines) == len(keys) * NOTES, lines
    seqs = defaultdict(list)
    for line in lines:
        assert line["text"] == f"{line['customer']} note {line['seq'] - 1}", line
        assert len(line["recalled"]) == min(line["seq"] - 1, 2), line
        assert all(hit.startswith(line["customer"] + " ") for hit in line["recalled"]), line
        seqs[line["customer"]].append(line["seq"])
    assert dict(seqs) == {k: list(range(1, NOTES + 1)) for k in keys}


def test_the_java_agent_job_runs_on_the_same_cluster(cluster, scratch):
    keys = ["ann", "ben", "cho", "dev"]
    lines = run_java_job(cluster, scratch, keys, "--base-dir", str(scratch / "ltm"))
    check_each_key_saw_only_its_own_notes(lines, keys)


def test_the_java_agent_job_on_two_subtasks_shares_pgvector_and_keys_see_only_their_notes(
        cluster, scratch):
    store = json.loads(json.dumps(cluster.vector_store))
    store["config"]["collection_name"] = f"e2e_java_{uuid.uuid4().hex[:10]}"
    keys = ["ann", "ben", "cho", "dev", "eve", "fay"]
    store_file = scratch / "java-store.json"  # the password stays out of argv
    store_file.touch(mode=0o600)
    store_file.write_text(json.dumps(store))
    lines = run_java_job(cluster, scratch, keys, "--vector-store-file", str(store_file),
                         "--memory-job-id", "e2e-java-shared", "--base-dir", str(scratch))

    check_each_key_saw_only_its_own_notes(lines, keys)
    assert not (scratch / "e2e-java-shared" / "vectors.sqlite3").exists()  # no embedded store

    rows = rows_in_postgres(store)
    by_key = defaultdict(list)
    for payload in rows.values():
        assert payload["user_id"] == "e2e-java-shared" and payload["run_id"] == "conversation"
        assert payload["data"].startswith(payload["agent_id"] + " "), payload
        by_key[payload["agent_id"]].append(payload["data"])
    assert {k: sorted(v) for k, v in by_key.items()} == {
        k: [f"{k} note {n}" for n in range(NOTES)] for k in keys}
