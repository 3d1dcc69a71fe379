"""The pgvector self-check, both ways it runs: ``scripts/pgvector-server start`` runs its SQL
through psql and stops a server it crashes, ``check_pgvector`` (for ``doctor``) runs it
through psycopg2.

A crash is made real, not mocked: a copy of the server's install whose vector.so has
``hnswbuild`` start with ``ud2``, the instruction x86-64 defines as invalid. The kernel then
kills the backend with SIGILL at the HNSW build, exactly as an AVX-512 instruction does on a
CPU without AVX-512, and the postmaster goes into crash recovery."""

from __future__ import annotations

import json
import re
import shutil
import socket
import uuid
from pathlib import Path

import psycopg2
import pytest

from flink_agents_ltm.integrations.mem0.providers.pgvector.selfcheck import (
    PgvectorSelfCheckError,
    check_pgvector,
    cpu_summary,
)
from tests.pgvector.server import (
    copy_of_the_install,
    free_port,
    run_script,
    scratch_dir,
    with_illegal_instruction,
)
from tests.pgvector.test_pgvector_server import alive


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def postmaster_pids(log: Path) -> list[int]:
    return [int(pid) for pid in re.findall(r"\[(\d+)\] LOG:  starting PostgreSQL",
                                           log.read_text())]


@pytest.fixture
def server_folder():
    folder = scratch_dir("test-pgvector-check-")
    yield folder
    run_script("pgvector-server", "stop", "--dir", str(folder), check=False)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def install_copy():
    folder = scratch_dir("test-pginstall-")
    folder.chmod(0o755)  # postgres (when we are root) must enter it, or the script copies it
    yield copy_of_the_install(folder / "install")
    shutil.rmtree(folder, ignore_errors=True)


def test_start_passes_the_self_check_and_prints_no_password(server_folder):
    password = f"marker-{uuid.uuid4().hex}"
    started = run_script("pgvector-server", "start", "--dir", str(server_folder), "--port",
                         str(free_port()), env={"PGVECTOR_PASSWORD": password})

    assert "self-check passed" in started.stderr
    assert "HNSW build" in started.stderr
    assert password not in started.stdout + started.stderr
    assert "--output FILE" in started.stdout  # says where the password is instead
    assert json.loads((server_folder / "settings.json").read_text())["password"] == password
    again = run_script("pgvector-server", "start", "--dir", str(server_folder))  # running
    assert "already running" in again.stderr
    assert password not in again.stdout + again.stderr
    status = run_script("pgvector-server", "status", "--dir", str(server_folder))
    assert password not in status.stdout + status.stderr


def test_a_self_check_that_crashes_the_server_stops_it_and_names_the_signal_and_the_cpu(
        install_copy, server_folder):  # the server stops before its install goes
    with_illegal_instruction(install_copy.parent / "lib" / "postgresql" / "vector.so",
                             "hnswbuild")
    port = free_port()

    result = run_script("pgvector-server", "start", "--dir", str(server_folder), "--port",
                        str(port), "--pg-bin", str(install_copy), check=False)

    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "ERROR" in line]
    assert errors == [result.stderr.splitlines()[-1]]  # one line, the last one
    [error] = errors
    assert "the vector extension crashed the server during the self-check step " \
           "'HNSW index build'" in error
    assert "signal 4 (SIGILL, illegal instruction)" in error
    assert cpu_summary() in error and "avx512f" in error
    assert "the server was stopped" in error
    log = server_folder / "log" / "postgres.log"
    assert "was terminated by signal 4" in log.read_text()
    [postmaster] = postmaster_pids(log)
    assert not alive(postmaster)  # not looping through recovery
    assert not listening(port)
    assert not (server_folder / "postgres.pid").exists()
    assert "LongTermMemoryOptions" not in result.stdout  # no settings for a broken server


def test_check_pgvector_passes_on_the_session_server_and_leaves_nothing_behind(
        pgvector_session):
    cfg = pgvector_session[0]["config"]

    summary = check_pgvector(cfg)

    assert summary.startswith("pgvector 0.8")
    assert f"at 127.0.0.1:{cfg['port']}/{cfg['dbname']}" in summary
    assert "HNSW build of 2000 384-dim rows" in summary and "\n" not in summary
    conn = psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                            user=cfg["user"], password=cfg["password"])
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_class WHERE relname LIKE "
                        "'flink_agents_ltm_selfcheck%'")
            assert cur.fetchone() == (0,)
    finally:
        conn.close()


def test_check_pgvector_names_a_backend_the_extension_crashed(install_copy, server_folder):
    port = free_port()
    run_script("pgvector-server", "start", "--dir", str(server_folder), "--port", str(port),
               "--pg-bin", str(install_copy))
    store = json.loads(run_script("pgvector-server", "status", "--dir", str(server_folder),
                                  "--json").stdout)
    # Backends load vector.so when they first use it: the next one loads the broken copy.
    with_illegal_instruction(install_copy.parent / "lib" / "postgresql" / "vector.so",
                             "hnswbuild")

    with pytest.raises(PgvectorSelfCheckError) as raised:
        check_pgvector(store["config"])

    message = str(raised.value)
    assert "\n" not in message
    assert f"127.0.0.1:{port}/mem0" in message
    assert "the vector extension crashed the server during the self-check step " \
           "'HNSW index build'" in message
    assert "avx512f" in message
    assert store["config"]["password"] not in message
    # The server now replays its WAL; a fast shutdown then hangs (PostgreSQL 18): stop
    # must see that and end it at the first try, not after pg_ctl's timeout.
    stopped = run_script("pgvector-server", "stop", "--dir", str(server_folder))
    assert "did not stop it" not in stopped.stderr, stopped.stderr
    assert not listening(port)


def test_check_pgvector_names_a_refused_login_without_the_password(pgvector_session):
    marker = f"wrong-{uuid.uuid4().hex}"
    cfg = dict(pgvector_session[0]["config"], password=marker)

    with pytest.raises(PgvectorSelfCheckError) as raised:
        check_pgvector(cfg)

    assert "cannot connect to the pgvector store at 127.0.0.1:" in str(raised.value)
    assert "password authentication failed" in str(raised.value)
    assert marker not in str(raised.value)


@pytest.mark.parametrize(("flags", "expected"), [
    ("fpu sse2 avx avx2 fma", "this CPU has avx2 and no avx512f"),
    ("fpu avx2 avx512f avx512bw", "this CPU has avx2 and avx512f"),
    ("fpu sse2", "this CPU has neither avx2 nor avx512f"),
])
def test_the_cpu_summary_reads_the_flags_of_proc_cpuinfo(tmp_path, flags, expected):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nmodel name\t: x\nflags\t\t: {flags}\n")
    assert cpu_summary(cpuinfo) == expected
