"""Start and stop servers through the project's scripts, for the tests' session fixtures.

Servers get a free loopback port and a folder under the repository's ``.work/`` (when
the tests run as root, postgres runs as another user, who cannot enter pytest's 0700
temp folders), or under ``/tmp`` when the checkout itself lies below a folder that other
users may not enter (a clone in ``/root``, say). Both are removed at the end.
"""

from __future__ import annotations

import json
import os
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


def run_script(name: str, *args: str, check: bool = True, timeout: float = 120,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(SCRIPTS / name), *args], capture_output=True, text=True,
                            timeout=timeout, env={**os.environ, **(env or {})})
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


def installed_postgres() -> dict:
    """What ``scripts/pgvector-server locate`` reports: ``bin``, ``version``, ``vector_so``."""
    return json.loads(run_script("pgvector-server", "locate").stdout)


def copy_of_the_install(dest: Path) -> Path:
    """The script's PostgreSQL install copied (hard links where possible) below ``dest`` in
    the wheel's layout, which its programs' RPATH needs
    (``<pkg>/<install>/bin/../../../<pkg>.libs``); returns the copy's bin folder."""
    install = Path(installed_postgres()["bin"]).resolve().parent
    package = install.parent

    def link_or_copy(source: str, target: str) -> None:
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)

    dest.mkdir(mode=0o755, exist_ok=True)
    dest.chmod(0o755)  # postgres runs as another user when the tests run as root
    shutil.copytree(install, dest / package.name / install.name, symlinks=True,
                    copy_function=link_or_copy)
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, dest / libs.name, symlinks=True, copy_function=link_or_copy)
    for folder in (dest / package.name, dest / package.name / install.name):
        folder.chmod(0o755)
    return dest / package.name / install.name / "bin"


def file_offset(library: Path, function: str) -> int:
    """Where ``function``'s first instruction lies in the file ``library`` (its symbol's
    address, mapped through the LOAD segment that holds it)."""
    symbols = subprocess.run(["readelf", "-sW", str(library)], capture_output=True, text=True,
                             check=True).stdout
    address = next(int(fields[1], 16) for fields in map(str.split, symbols.splitlines())
                   if len(fields) >= 8 and fields[3] == "FUNC" and fields[7] == function)
    segments = subprocess.run(["readelf", "-lW", str(library)], capture_output=True, text=True,
                              check=True).stdout
    for fields in map(str.split, segments.splitlines()):
        if fields[:1] == ["LOAD"]:
            offset, start, size = int(fields[1], 16), int(fields[2], 16), int(fields[4], 16)
            if start <= address < start + size:
                return address - start + offset
    raise LookupError(f"{function} lies in no LOAD segment of {library}")


def with_illegal_instruction(library: Path, function: str) -> None:
    """Replace ``library`` (a new file: hard links and running backends keep the old one)
    by a copy whose ``function`` starts with ``ud2``, the instruction x86-64 defines as
    invalid: calling it raises SIGILL on every CPU, as AVX-512 code does on a CPU without it."""
    code = bytearray(library.read_bytes())
    at = file_offset(library, function)
    code[at:at + 2] = b"\x0f\x0b"  # ud2
    temporary = library.with_name(library.name + ".new")
    temporary.write_bytes(bytes(code))
    temporary.chmod(0o755)
    temporary.replace(library)
