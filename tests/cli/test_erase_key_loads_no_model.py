"""``flink-agents-ltm erase-key`` loads no model (README, "Erasure that erases"): the
installed command, run in a process of its own through its console-script entry point,
erases a job of the embedded default (whose model is MiniLM) without importing any
library a model needs."""

import json
import os
import subprocess
import sys

import yaml

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory

MODEL_LIBRARIES = ("torch", "sentence_transformers", "transformers")
# Runs the command as its console script does, then says which model libraries got imported.
COMMAND_AND_ITS_IMPORTS = f"""
import atexit, json, sys
from importlib.metadata import entry_points
atexit.register(lambda: print("imported:", json.dumps(
    sorted(name for name in {MODEL_LIBRARIES!r} if name in sys.modules))))
(command,) = entry_points(group="console_scripts", name="flink-agents-ltm")
sys.argv[0] = "flink-agents-ltm"
sys.exit(command.load()())
"""


def test_erase_key_erases_the_default_store_without_importing_a_model_library(tmp_path):
    store_dir = tmp_path / "ltm"
    memory, release = acquire_memory(StoreSpec("cli-job", embedder="hashing",
                                               base_dir=store_dir))
    try:
        ltm = Mem0LongTermMemory("cli-job", memory)
        ltm.switch_context("customer-7", "obs-1", False)
        ltm.get_memory_set("profile").add(["likes green tea", "lives in Oslo"])
    finally:
        release()
    config = tmp_path / "ltm.yaml"
    config.touch(mode=0o600)
    config.write_text(yaml.safe_dump({"long-term-memory.embedded.base-dir": str(store_dir)}))
    env = {k: v for k, v in os.environ.items() if k != "FLINK_AGENTS_LTM_CONFIG"}

    result = subprocess.run(
        [sys.executable, "-c", COMMAND_AND_ITS_IMPORTS, "erase-key", "--job-id", "cli-job",
         "--key", "customer-7", "--config", str(config), "--json"],
        capture_output=True, text=True, env=env, timeout=300)

    assert result.returncode == 0, result.stderr[-3000:]
    erased, imported = result.stdout.splitlines()
    assert json.loads(erased)["erased"] == 2
    assert imported == "imported: []"
