"""Install size and worker RSS of the default path, before and after the lean install.

Install size: the files of every distribution an install pulls in (the closure of
``flink-agents-ltm`` with the given extras in this venv, pip excluded), so it needs the
``dev`` install. ``before`` is what every install got earlier (today's ``dev``
closure: all parts were plain dependencies).

Worker RSS: a fresh Python process that opens long-term memory as a job would, adds
and searches 50 items, then reports its peak RSS (VmHWM). ``before`` rows rebuild
the earlier setups: embedded Qdrant with MiniLM (the earlier default), and a
configured embedding model with MiniLM loaded anyway (the earlier factory built
MiniLM before replacing it).

    python -m bench.footprint [--adds 50] [--setups embedded+minilm ...]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

WORKER = """
import json, re, sys, tempfile
from pathlib import Path
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
setup = sys.argv[1]
home = Path(tempfile.mkdtemp())
store = ({"provider": "qdrant", "config": {"path": str(home / "q"), "on_disk": True}}
         if setup.startswith("qdrant") else None)
embedder = "minilm" if "minilm" in setup else "hashing"
if setup.endswith("+torch"):  # what the earlier factory did for a configured model
    from flink_agents_ltm.integrations.mem0.local_embedder import LocalMiniLmEmbedding
    LocalMiniLmEmbedding().embed("loaded anyway")
memory, release = acquire_memory(StoreSpec("job", vector_store=store, embedder=embedder,
                                           base_dir=home))
ltm = Mem0LongTermMemory("job", memory)
for n in range(int(sys.argv[2])):
    ltm.switch_context(f"key-{n % 5}", "obs", True)
    notes = ltm.get_memory_set("notes")
    notes.add(f"note {n} about order {n * 7}")
    notes.search("where is my order", limit=5)
status = Path("/proc/self/status").read_text()
print(json.dumps({key: int(re.search(key + r":\\s+(\\d+)", status).group(1)) // 1024
                  for key in ("VmHWM", "VmRSS")}))
release()
"""


def closure(name: str, extras: tuple[str, ...]) -> set[str]:
    seen: set[str] = set()
    todo = [(name, extras)]
    while todo:
        dist_name, wanted = todo.pop()
        key = _canonical(dist_name)
        dist = metadata.distribution(dist_name)
        if key in seen and not wanted:
            continue
        seen.add(key)
        for text in dist.requires or []:
            requirement = Requirement(text)
            environments = [{"extra": extra} for extra in wanted] or [{"extra": ""}]
            if requirement.marker and not any(requirement.marker.evaluate(env)
                                              for env in environments):
                continue
            if _canonical(requirement.name) == key:  # an extra naming its own package
                todo.append((dist_name, tuple(requirement.extras)))
            elif _canonical(requirement.name) not in seen:
                todo.append((requirement.name, tuple(requirement.extras)))
    return seen


def size_mb(names: set[str]) -> float:
    total = 0
    for name in names:
        dist = metadata.distribution(name)
        for file in dist.files or []:
            path = Path(dist.locate_file(file))
            if path.is_file():
                total += path.stat().st_size
    return total / 1e6


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def worker_rss(setup: str, adds: int = 50) -> dict[str, int]:
    result = subprocess.run([sys.executable, "-c", WORKER, setup, str(adds)], capture_output=True,
                            text=True, timeout=600, cwd=tempfile.gettempdir())
    if result.returncode != 0:
        raise RuntimeError(f"worker {setup} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


SETUPS = {
    "before: default (embedded Qdrant + MiniLM)": "qdrant+minilm",
    "now: default (embedded SQLite + MiniLM)": "embedded+minilm",
    "before: a configured embedding model (MiniLM loaded anyway)": "embedded+hashing+torch",
    "now: a configured embedding model": "embedded+hashing",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adds", type=int, default=50, help="adds and searches per worker")
    parser.add_argument("--setups", nargs="+", choices=list(SETUPS.values()),
                        default=list(SETUPS.values()), help="workers to measure")
    args = parser.parse_args()
    package = "flink-agents-ltm"
    installs = {
        "before: every install (all parts were dependencies)": ("dev",),
        "now: base (a configured embedding model, embedded store)": (),
        "now: default embedded path [local-embedder]": ("local-embedder",),
        "now: [pgvector]": ("pgvector",),
        "now: [dev] (tests, bundled Postgres)": ("dev",),
    }
    print(f"{'install':<60}{'MB':>8}{'distributions':>15}")
    for label, extras in installs.items():
        names = closure(package, extras) - {"pip"}
        print(f"{label:<60}{size_mb(names):>8.0f}{len(names):>15}", flush=True)

    print(f"\n{f'worker ({args.adds} adds and searches)':<62}{'peak RSS MB':>12}{'RSS MB':>8}")
    for label, setup in SETUPS.items():
        if setup not in args.setups:
            continue
        rss = worker_rss(setup, args.adds)
        print(f"{label:<62}{rss['VmHWM']:>12}{rss['VmRSS']:>8}", flush=True)


if __name__ == "__main__":
    main()
