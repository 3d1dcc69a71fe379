"""The Flink configuration every bench job runs with: PyFlink's local mini-cluster in thread
mode, parallelism 1, no restarts, this interpreter and this checkout on the Python path."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def local_configuration(extra: dict[str, str] | None = None) -> Any:
    """A ``pyflink.common.Configuration`` for a bench job; ``extra`` adds or overrides keys."""
    from pyflink.common import Configuration

    conf = Configuration()
    for key, value in {
        "python.execution-mode": "thread",
        "python.pythonpath": os.pathsep.join([sysconfig.get_paths()["purelib"], str(ROOT)]),
        "python.executable": sys.executable,
        "python.client.executable": sys.executable,
        "restart-strategy.type": "none",
        "parallelism.default": "1",
        **(extra or {}),
    }.items():
        conf.set_string(key, value)
    return conf
