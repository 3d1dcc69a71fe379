"""``flink-agents-ltm erase-key``, run as the installed console script on real stores: the
embedded store in a folder and the session's pgvector server. The configuration travels
in a 0600 file or an environment variable, never in argv."""

from __future__ import annotations

import copy
import json
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg2
import pytest
import yaml

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from tests.pgvector.server import run_script

CLI = str(Path(sys.executable).parent / "flink-agents-ltm")
VECTOR_STORE = "long-term-memory.vector-store"
BASE_DIR = "long-term-memory.embedded.base-dir"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "FLINK_AGENTS_LTM_CONFIG"}
    environment.update(env or {})
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=environment,
                          timeout=300)


def private_config(folder: Path, options: dict) -> Path:
    path = folder / "ltm.yaml"
    path.touch(mode=0o600)
    path.write_text(yaml.safe_dump(options))
    return path


def remember(job: str, spec: StoreSpec, notes: dict[tuple[str, str], list[str]]) -> None:
    """Store ``notes[(key, set)]`` through the plugin, then close the store."""
    memory, release = acquire_memory(spec)
    try:
        ltm = Mem0LongTermMemory(job, memory)
        for (key, set_name), values in notes.items():
            ltm.switch_context(key, f"obs-{key}", False)
            ltm.get_memory_set(set_name).add(values)
    finally:
        release()


def values_of(job: str, spec: StoreSpec, key: str, set_name: str) -> list[str]:
    memory, release = acquire_memory(spec)
    try:
        ltm = Mem0LongTermMemory(job, memory)
        ltm.switch_context(key, None, True)
        return sorted(item.value for item in ltm.get_memory_set(set_name).get())
    finally:
        release()


def files_mentioning(folder: Path, marker: str) -> list[str]:
    needle = marker.encode()
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_erase_key_erases_every_set_of_the_key_from_the_embedded_store_and_no_file_keeps_it(
        tmp_path):
    store_dir = tmp_path / "ltm"
    marker = f"passport-{uuid.uuid4().hex}"
    spec = StoreSpec("cli-job", embedder="hashing", base_dir=store_dir)
    remember("cli-job", spec, {
        ("customer 7", "profile"): [f"{marker} is the passport", "likes tea"],
        ("customer 7", "orders"): [f"order for {marker}", "order two", "order three"],
        ("customer-8", "profile"): ["someone else's note"]})
    assert files_mentioning(store_dir, marker)  # the grep can see the text while it is stored
    config = private_config(tmp_path, {BASE_DIR: str(store_dir)})

    erased = run_cli("erase-key", "--job-id", "cli-job", "--key", "customer 7",
                     "--config", str(config))

    assert erased.returncode == 0, erased.stderr
    assert erased.stdout.splitlines() == [
        f"erased 5 items of key 'customer 7' of job 'cli-job' from the embedded store of job "
        f"'cli-job' under {store_dir}"]
    assert files_mentioning(store_dir, marker) == []
    assert values_of("cli-job", spec, "customer 7", "profile") == []
    assert values_of("cli-job", spec, "customer 7", "orders") == []
    assert values_of("cli-job", spec, "customer-8", "profile") == ["someone else's note"]


def test_erase_key_on_pgvector_takes_its_config_from_the_environment_and_spares_other_keys(
        pgvector_session, tmp_path):
    store = copy.deepcopy(pgvector_session[0])
    store["config"]["collection_name"] = f"cli_{uuid.uuid4().hex[:10]}"
    marker = f"passport-{uuid.uuid4().hex}"
    spec = StoreSpec("cli-pg", vector_store=store, embedder="hashing", base_dir=tmp_path)
    remember("cli-pg", spec, {("7", "profile"): [f"{marker} one", "two"],
                              ("7", "orders"): [f"{marker} three"],
                              ("8", "profile"): ["eight keeps this"]})
    password = store["config"]["password"]

    erased = run_cli("erase-key", "--job-id", "cli-pg", "--key", "7", "--key", "9", "--json",
                     env={"FLINK_AGENTS_LTM_CONFIG": json.dumps({VECTOR_STORE: store})})

    assert erased.returncode == 0, erased.stderr
    lines = [json.loads(line) for line in erased.stdout.splitlines()]
    assert [(line["key"], line["erased"]) for line in lines] == [("7", 3), ("9", 0)]
    assert all(line["store"] == (f"the pgvector store at 127.0.0.1:{store['config']['port']}, "
                                 f"collection '{store['config']['collection_name']}'")
               for line in lines)
    assert password not in erased.stdout + erased.stderr
    cfg = store["config"]
    with psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                          user=cfg["user"], password=cfg["password"]) as conn, \
            conn.cursor() as cur:
        cur.execute(f'SELECT payload->>\'agent_id\', payload->>\'data\' FROM '
                    f'"{cfg["collection_name"]}"')
        assert cur.fetchall() == [("8", "eight keeps this")]
        cur.execute(f'SELECT count(*) FROM "{cfg["collection_name"]}" '
                    "WHERE payload::text LIKE %s", (f"%{marker}%",))
        assert cur.fetchone() == (0,)


def test_the_store_file_that_pgvector_server_writes_is_what_erase_key_takes(
        pgvector_session, tmp_path):
    store_file = tmp_path / "store.json"
    run_script("pgvector-server", "status", "--dir", str(pgvector_session[1]),
               "--output", str(store_file))
    store = json.loads(store_file.read_text())
    job = f"cli-file-{uuid.uuid4().hex[:8]}"
    spec = StoreSpec(job, vector_store=store, embedder="hashing", base_dir=tmp_path)
    remember(job, spec, {("7", "notes"): ["one", "two"], ("8", "notes"): ["stays"]})

    erased = run_cli("erase-key", "--job-id", job, "--key", "7", "--vector-store-file",
                     str(store_file))

    assert stat.S_IMODE(store_file.stat().st_mode) == 0o600
    assert erased.returncode == 0, erased.stderr
    assert erased.stdout == (f"erased 2 items of key '7' of job '{job}' from the pgvector "
                             f"store at 127.0.0.1:{store['config']['port']}\n")
    assert "warning" not in erased.stderr
    assert values_of(job, spec, "7", "notes") == []
    assert values_of(job, spec, "8", "notes") == ["stays"]


def test_a_wrong_password_fails_with_exit_1_naming_the_server_and_never_the_password(
        pgvector_session, tmp_path):
    store = copy.deepcopy(pgvector_session[0])
    marker = f"wrong-{uuid.uuid4().hex}"
    store["config"]["password"] = marker
    config = private_config(tmp_path, {VECTOR_STORE: store})

    failed = run_cli("erase-key", "--job-id", "cli-pg", "--key", "7", "--config", str(config),
                     "--verbose")

    assert failed.returncode == 1
    assert failed.stdout == ""
    assert f"cannot connect to the pgvector store at 127.0.0.1:{store['config']['port']}" in \
        failed.stderr
    assert "password authentication failed" in failed.stderr
    assert marker not in failed.stdout + failed.stderr


def test_erase_key_erases_from_the_embedded_store_while_a_running_job_holds_it(tmp_path):
    spec = StoreSpec("busy-job", embedder="hashing", base_dir=tmp_path)
    memory, release = acquire_memory(spec)  # this process holds the store, as a job would
    try:
        ltm = Mem0LongTermMemory("busy-job", memory)
        for key in ("7", "8"):
            ltm.switch_context(key, f"obs-{key}", False)
            ltm.get_memory_set("notes").add([f"note of {key}", f"another note of {key}"])
        config = private_config(tmp_path, {BASE_DIR: str(tmp_path)})

        erased = run_cli("erase-key", "--job-id", "busy-job", "--key", "7",
                         "--config", str(config))

        assert erased.returncode == 0, erased.stderr
        assert erased.stdout.startswith("erased 2 items of key '7' of job 'busy-job'")
        left = {}
        for key in ("7", "8"):  # the running job sees the erasure at once
            ltm.switch_context(key, None, True)
            left[key] = sorted(item.value for item in ltm.get_memory_set("notes").get())
    finally:
        release()
    assert left == {"7": [], "8": ["another note of 8", "note of 8"]}


@pytest.mark.parametrize(("options", "extra", "message"), [
    ({"long-term-memory.vector-sore": {}}, [], "unknown configuration key "
                                               "'long-term-memory.vector-sore'"),
    ({VECTOR_STORE: "my_store"}, [], "names the declared vector store 'my_store'"),
    ({"long-term-memory.embedding-model-setup": "my_model"}, [],
     "pass --embedding-dims with its vector size"),
    ({}, ["--embedding-dims", "0"], "--embedding-dims must be a positive number"),
], ids=["typo", "store by name", "declared model", "zero dims"])
def test_a_configuration_the_command_cannot_use_exits_2_naming_the_problem(
        tmp_path, options, extra, message):
    config = private_config(tmp_path, options)
    refused = run_cli("erase-key", "--job-id", "j", "--key", "7", "--config", str(config),
                      *extra)
    assert refused.returncode == 2
    assert message in refused.stderr


def test_a_job_with_its_own_embedding_model_is_erased_given_its_vector_size(tmp_path):
    spec = StoreSpec("own-model", embedder="hashing", base_dir=tmp_path)  # 384 dimensions
    remember("own-model", spec, {("7", "notes"): ["a note"]})
    config = private_config(tmp_path, {BASE_DIR: str(tmp_path),
                                       "long-term-memory.embedding-model-setup": "my_model",
                                       "long-term-memory.chat-model-setup": "my_llm"})

    wrong = run_cli("erase-key", "--job-id", "own-model", "--key", "7", "--config",
                    str(config), "--embedding-dims", "768")
    erased = run_cli("erase-key", "--job-id", "own-model", "--key", "7", "--config",
                     str(config), "--embedding-dims", "384")

    assert wrong.returncode == 1
    assert "holds 384-dimensional vectors but the embedding model produces 768" in wrong.stderr
    assert erased.returncode == 0, erased.stderr
    assert erased.stdout.startswith("erased 1 item of key '7'")


def test_secrets_are_refused_on_the_command_line_and_files_others_may_read_are_flagged(
        tmp_path):
    by_argv = run_cli("erase-key", "--job-id", "j", "--key", "7", "--vector-store", json.dumps(
        {"provider": "pgvector", "config": {"password": "hunter2"}}))
    shared = tmp_path / "ltm.json"
    shared.write_text(json.dumps({VECTOR_STORE: {"provider": "pgvector", "config": {
        "host": "127.0.0.1", "port": 1, "user": "u", "password": "hunter2",
        "connect_timeout_s": 2}}}))
    shared.chmod(0o644)
    flagged = run_cli("erase-key", "--job-id", "j", "--key", "7", "--config", str(shared))
    unset = run_cli("erase-key", "--job-id", "j", "--key", "7", "--config-env", "NO_SUCH_VAR")

    assert by_argv.returncode == 2 and "unrecognized arguments: --vector-store" in by_argv.stderr
    assert "hunter2" not in by_argv.stderr
    assert f"warning: {shared} holds a secret and other users may read it (mode 0644)" in \
        flagged.stderr
    assert flagged.returncode == 1 and "hunter2" not in flagged.stderr
    assert unset.returncode == 2
    assert "the environment variable NO_SUCH_VAR is unset or empty" in unset.stderr


def test_every_command_explains_itself_with_help():
    top = run_cli("--help")
    erase = run_cli("erase-key", "--help")
    assert top.returncode == 0 and "erase-key" in top.stdout
    assert erase.returncode == 0
    for option in ("--job-id", "--key", "--config", "--config-env", "--vector-store-file",
                   "--embedding-dims"):
        assert option in erase.stdout


def everything_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_job_id_without_an_embedded_store_is_refused_in_one_line_and_nothing_is_created(
        tmp_path):
    store_dir = tmp_path / "ltm"
    remember("real-job", StoreSpec("real-job", embedder="hashing", base_dir=store_dir),
             {("7", "notes"): ["a note"]})
    config = private_config(tmp_path, {BASE_DIR: str(store_dir)})
    before = everything_under(tmp_path)

    refused = run_cli("erase-key", "--job-id", "real-jbo", "--key", "7", "--config",
                      str(config))

    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"flink-agents-ltm erase-key: error: job 'real-jbo' has no embedded store under "
        f"{store_dir} (no real-jbo/vectors.sqlite3); check --job-id and the base folder "
        "(stores there: real-job)"]
    assert everything_under(tmp_path) == before


def test_a_job_id_without_rows_or_table_in_pgvector_is_refused_and_nothing_is_created(
        pgvector_session, tmp_path):
    store = copy.deepcopy(pgvector_session[0])
    table = f"cli_{uuid.uuid4().hex[:10]}"
    store["config"]["collection_name"] = table
    remember("pg-real", StoreSpec("pg-real", vector_store=store, embedder="hashing",
                                  base_dir=tmp_path / "ltm"), {("7", "notes"): ["kept"]})
    missing_table = copy.deepcopy(store)
    missing_table["config"]["collection_name"] = f"{table}_none"
    env = {"FLINK_AGENTS_LTM_HOME": str(tmp_path / "home")}
    before = everything_under(tmp_path)

    no_rows = run_cli("erase-key", "--job-id", "pg-rael", "--key", "7", env={
        **env, "FLINK_AGENTS_LTM_CONFIG": json.dumps({VECTOR_STORE: store})})
    no_table = run_cli("erase-key", "--job-id", "pg-real", "--key", "7", env={
        **env, "FLINK_AGENTS_LTM_CONFIG": json.dumps({VECTOR_STORE: missing_table})})

    where = f"the pgvector store at 127.0.0.1:{store['config']['port']}"
    assert (no_rows.returncode, no_rows.stdout) == (2, "")
    assert no_rows.stderr.splitlines() == [
        f"flink-agents-ltm erase-key: error: job 'pg-rael' has no memories in {where}, "
        f"collection '{table}' (no row of this job; nothing to erase); check --job-id"]
    assert (no_table.returncode, no_table.stdout) == (2, "")
    assert no_table.stderr.splitlines() == [
        f"flink-agents-ltm erase-key: error: job 'pg-real' has no store in {where}, "
        f"collection '{table}_none': its table '{table}_none' does not exist; check --job-id "
        "and the collection_name"]
    assert store["config"]["password"] not in no_rows.stderr + no_table.stderr
    cfg = store["config"]
    with psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                          user=cfg["user"], password=cfg["password"]) as conn, \
            conn.cursor() as cur:
        cur.execute("SELECT to_regclass(%s)", (f'"{table}_none"',))
        assert cur.fetchone() == (None,)
        cur.execute(f'SELECT payload->>\'data\' FROM "{table}"')
        assert cur.fetchall() == [("kept",)]
    assert everything_under(tmp_path) == before  # no job folder, no home
