"""Throughput of a Java agent (java-bridge's agent API) whose action awaits a 100 ms durable
call, and what reading and writing long-term memory adds to a Java action.

For 1 to 64 keys in flight, events per second of ``CountingAgentJob`` (java-bridge; each
input's action makes one ``durableExecuteAsync`` call that sleeps 100 ms, on a pool of
``--workers`` threads) against the ideal ``min(keys, workers) / latency`` (target: at least
80 %, as the Python runtime in bench/durable_async_throughput.py). Throughput is measured from
the first call's start to the last call's end (times taken inside the calls), so JVM and
job start-up are left out. Then, on one key, the mean duration of the same durable call when
it reads the key's memory set (``MemorySet.get``) and adds one item, against the call that
only returns: the per-call cost of a Java action using LTM (embedded store, hashing embedder).
The same operations made from a Python action are measured by bench/java_bridge_overhead.

Runs on a local mini-cluster (parallelism 1, no checkpoints) in one JVM with Flink's jars from
the pip-installed PyFlink, as java-bridge/run-local does.

    python -m bench.java_agent_throughput [--keys 1 2 4 8 16 32 64] [--events-per-key 10]
        [--memory-events 100] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from bench._results import add_json_argument, write_results

ROOT = Path(__file__).resolve().parent.parent
BRIDGE = ROOT / "java-bridge"
CLASSES = BRIDGE / "target" / "classes"
LATENCY_MS = 100
WORKERS = 32
KEYS = [1, 2, 4, 8, 16, 32, 64]
OPENS = ["--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
         *(f"--add-opens=java.base/{package}=ALL-UNNAMED" for package in (
             "java.lang", "java.net", "java.io", "java.nio", "sun.nio.ch",
             "java.lang.reflect", "java.text", "java.time", "java.util",
             "java.util.concurrent", "java.util.concurrent.atomic",
             "java.util.concurrent.locks"))]


def run_job(home: str, *job_args: str) -> list[dict]:
    """CountingAgentJob's results (one dict per input) on a local mini-cluster."""
    site_packages = Path(sysconfig.get_paths()["purelib"])
    pyflink = site_packages / "pyflink"
    classpath = os.pathsep.join([str(CLASSES), str(pyflink / "lib" / "*"),
                                 str(pyflink / "opt" / "flink-python-2.3.0.jar")])
    command = ["java", *OPENS, "-Dlog4j2.level=ERROR",
               f"-Dlog4j.configurationFile={BRIDGE / 'conf' / 'log4j2-local.properties'}",
               f"-Djava.io.tmpdir={home}", "-cp", classpath,
               "org.flinkagents.ltm.job.CountingAgentJob", "--python", sys.executable,
               "--pythonpath", f"{site_packages}{os.pathsep}{ROOT}", "--base-dir", home,
               "--parallelism", "1", "--checkpoint-ms", "0", *job_args]
    env = dict(os.environ, FLINK_AGENTS_LTM_HOME=home, TQDM_DISABLE="1")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0 or "DONE" not in done.stdout:
        raise SystemExit(f"CountingAgentJob failed (exit {done.returncode}):\n"
                         + "\n".join((done.stdout + done.stderr).splitlines()[-30:]))
    return [json.loads(line[len("RESULT "):]) for line in done.stdout.splitlines()
            if line.startswith("RESULT ")]


def throughput(results: list[dict]) -> float:
    span_ms = max(r["end"] for r in results) - min(r["start"] for r in results)
    return len(results) / (span_ms / 1000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, nargs="+", default=KEYS,
                        help="keys in flight, one job each")
    parser.add_argument("--events-per-key", type=int, default=10)
    parser.add_argument("--memory-events", type=int, default=100,
                        help="inputs of the one-key runs with and without LTM (0: no such runs)")
    add_json_argument(parser)
    args = parser.parse_args()
    compiled = CLASSES / "org/flinkagents/ltm/job/CountingAgentJob.class"
    sources = [BRIDGE / "pom.xml", *(BRIDGE / "src" / "main").rglob("*.java")]
    if (not compiled.exists()
            or max(p.stat().st_mtime for p in sources) > compiled.stat().st_mtime):
        subprocess.run(["mvn", "-o", "-q", "-B", "compile"], cwd=BRIDGE, check=True)
    print(f"Java action awaits a {LATENCY_MS} ms durable call; {WORKERS} worker threads; "
          f"{args.events_per_key} events per key; local mini-cluster, parallelism 1")
    print(f"{'keys':>5} {'ideal ev/s':>11} {'java ev/s':>10} {'% of ideal':>11}")
    series: dict[str, list[tuple[int, float]]] = {"ideal": [], "java agent": []}
    with tempfile.TemporaryDirectory(prefix="java-agent-bench-") as home:
        for keys in args.keys:
            ideal = min(keys, WORKERS) * 1000 / LATENCY_MS
            results = run_job(home, "--events", str(keys * args.events_per_key),
                              "--keys", str(keys), "--sleep-ms", str(LATENCY_MS),
                              "--no-memory", "--workers", str(WORKERS))
            assert len(results) == keys * args.events_per_key
            rate = throughput(results)
            print(f"{keys:>5} {ideal:>11.1f} {rate:>10.1f} {100 * rate / ideal:>10.0f}%",
                  flush=True)
            series["ideal"].append((keys, ideal))
            series["java agent"].append((keys, rate))
        per_call = {}
        for label, extra in (("without LTM", ["--no-memory"]), ("with LTM get+add", [])):
            if not args.memory_events:  # 0: the throughput runs only
                break
            results = run_job(home, "--events", str(args.memory_events), "--keys", "1",
                              "--memory-job-id", f"bench-{len(per_call)}", "--workers", "1",
                              *extra)
            per_call[label] = statistics.mean(r["end"] - r["start"] for r in results)
        if per_call:  # the one-key runs with and without long-term memory
            print(f"one key, {args.memory_events} inputs: durable call without LTM "
                  f"{per_call['without LTM']:.2f} ms, reading the key's set and adding one item "
                  f"{per_call['with LTM get+add']:.2f} ms per call (Java LTM ms/call "
                  f"{per_call['with LTM get+add'] - per_call['without LTM']:.2f})")
    write_results(args.json, bench="java_agent_throughput", series=series,
                  title=f"Java actions awaiting a {LATENCY_MS} ms durable call, "
                        f"{WORKERS} workers", x_label="keys in flight",
                  y_label="events per second")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
