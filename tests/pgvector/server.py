"""Start and stop servers through the project's scripts, for the tests' session fixtures.

Servers get a free loopback port and a folder under the repository's ``.work/`` (when
the tests run as root, postgres runs as another user, who cannot enter pytest's 0700
temp folders), or under ``/tmp`` when the checkout itself lies below a folder that other
users may not enter (a clone in ``/root``, say). Both are removed at the end.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"


def _enterable_by_everyone(path: Path) -> bool:
    return all(parent.stat().st_mode & 0o001 for parent in path.resolve().parents)


WORK = (ROOT / ".work" if _enterable_by_everyone(ROOT / ".work")
        else Path("/tmp") / "flink-agents-ltm-work")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_script(name: str, *args: str, check: bool = True, timeout: float = 120
               ) -> subprocess.CompletedProcess:
    result = subprocess.run([str(SCRIPTS / name), *args], capture_output=True, text=True,
                            timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"{name} {' '.join(args)} failed ({result.returncode}):\n"
                           f"{result.stdout}\n{result.stderr}")
    return result


def rows_in_postgres(store: dict) -> dict[str, dict]:
    """id -> payload of every row of the store's table, read with plain SQL."""
    import psycopg2

    cfg = store["config"]
    conn = psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                            user=cfg["user"], password=cfg["password"])
    try:
        with conn.cursor() as cur:
            cur.execute(f'SELECT id::text, payload FROM "{cfg["collection_name"]}"')
            return dict(cur.fetchall())
    finally:
        conn.close()


def scratch_dir(prefix: str) -> Path:
    WORK.mkdir(exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=WORK))


@contextmanager
def pgvector_server():
    """Yields ``(vector_store, folder, seconds_to_start)``; the store dict is what
    ``LongTermMemoryOptions.VECTOR_STORE`` takes (copy it before changing it)."""
    folder = scratch_dir("test-pgvector-")
    started = time.monotonic()
    try:
        run_script("pgvector-server", "start", "--dir", str(folder), "--port", str(free_port()))
        seconds = time.monotonic() - started
        status = run_script("pgvector-server", "status", "--dir", str(folder), "--json")
        yield json.loads(status.stdout), folder, seconds
    finally:
        run_script("pgvector-server", "stop", "--dir", str(folder), check=False)
        shutil.rmtree(folder, ignore_errors=True)
