"""Mem0's process environment, fixed before ``mem0`` is imported.

Mem0 reads ``MEM0_TELEMETRY`` and ``MEM0_DIR`` once, at import. Left alone it
starts a PostHog client that calls the network (and delays interpreter exit by
~8 s offline) and writes into ``~/.mem0``. Hugging Face libraries likewise try
the hub unless told to stay offline. Values the user set explicitly win.
"""

from __future__ import annotations

import logging
import os
import sys

from flink_agents_ltm.api.home import home as project_home

log = logging.getLogger(__name__)

def prepare_environment() -> None:
    if "mem0" in sys.modules and "MEM0_TELEMETRY" not in os.environ:
        log.warning("mem0 was imported before flink_agents_ltm could turn its telemetry off")
    os.environ.setdefault("MEM0_TELEMETRY", "false")
    if "MEM0_DIR" not in os.environ:  # Mem0 creates it at import: make ours private first
        home = project_home()  # the home lists every job: private too, when we create it
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        mem0_dir = home / "mem0"
        mem0_dir.mkdir(mode=0o700, exist_ok=True)
        os.environ["MEM0_DIR"] = str(mem0_dir)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def import_mem0():
    """Import ``mem0`` with the environment above; returns the module."""
    prepare_environment()
    import mem0

    return mem0
