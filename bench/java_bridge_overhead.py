"""Cost of one long-term-memory call from Java through Pemja against the same call in Python.

Both sides run in one JVM process, on one Python ``Mem0LongTermMemory`` (the
embedded default: MiniLM + the SQLite store), one key and one set: Java calls
``MemorySet.add``/``search`` on its ``PythonLongTermMemory`` (Java guards,
marshalling, ``to_python_memory_set``, result conversion), Python calls the
same operations on a set of the same memory, timed inside Python. Calls
alternate so that load and store growth hit both alike. Target: the bridge
adds under 5 % to an add or a search.

    python -m bench.java_bridge_overhead [--ops 200]

Builds ``java-bridge`` offline (``mvn -o``) if needed, then runs
``bench/java_bridge_overhead.java`` with Java's source launcher.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BRIDGE = ROOT / "java-bridge"

_sets: dict[tuple[str, str, str], object] = {}


def _python_set(handle: str, key: str, name: str):
    """The Python agent's view: a set obtained once from the same memory, bound to ``key``."""
    from flink_agents_ltm.bridge.java_gateway import gateway
    from flink_agents_ltm.bridge.memory_sets import to_python_memory_set

    found = _sets.get((handle, key, name))
    if found is None:
        ltm = gateway(handle).ltm
        found = _sets[(handle, key, name)] = to_python_memory_set(name, key, None, True, ltm=ltm)
    return found


def python_add(handle: str, key: str, name: str, text: str) -> int:
    """Nanoseconds of one ``MemorySet.add`` made in Python (called from the Java bench)."""
    memory_set = _python_set(handle, key, name)
    started = time.perf_counter_ns()
    memory_set.add(text)
    return time.perf_counter_ns() - started


def python_search(handle: str, key: str, name: str, query: str, limit: int) -> int:
    """Nanoseconds of one ``MemorySet.search`` made in Python."""
    memory_set = _python_set(handle, key, name)
    started = time.perf_counter_ns()
    memory_set.search(query, limit=limit)
    return time.perf_counter_ns() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=200, help="operations per side and kind")
    args = parser.parse_args()

    classes = BRIDGE / "target" / "classes"
    if not (classes / "org/flinkagents/ltm/runtime/memory/PythonLongTermMemory.class").exists():
        subprocess.run(["mvn", "-o", "-q", "-B", "compile"], cwd=BRIDGE, check=True)
    site_packages = Path(sysconfig.get_paths()["purelib"])
    pyflink = site_packages / "pyflink"
    # Flink's jars (the bridge logs through SLF4J and masks secrets with Flink's Jackson) and
    # Pemja, inside flink-python: the classpath of java-bridge/run-local.
    classpath = [str(classes), str(pyflink / "lib" / "*"),
                 str(pyflink / "opt" / "flink-python-2.3.0.jar")]
    with tempfile.TemporaryDirectory(prefix="java-bridge-bench-") as home:
        env = dict(os.environ, FLINK_AGENTS_LTM_HOME=home, TQDM_DISABLE="1")
        command = [
            "java",
            f"-Dflink.agents.ltm.python={sys.executable}",
            f"-Dflink.agents.ltm.pythonpath={site_packages}{os.pathsep}{ROOT}",
            "-Dlog4j2.level=ERROR",
            "-cp", os.pathsep.join(classpath),
            str(Path(__file__).with_suffix(".java")),
            str(args.ops), home,
        ]
        subprocess.run(command, env=env, check=True)


if __name__ == "__main__":
    main()
