"""The Python workers of a job on the local mini-cluster run the program's interpreter.

PyFlink starts the agent's Python code in one of two ways, and neither sees the
virtual environment the program runs in unless told:

* process mode (the default) runs ``python.executable``, which is ``python``
  on the ``PATH`` unless set: often an interpreter without PyFlink;
* thread mode embeds CPython in the TaskManager's JVM (Pemja). It boots with
  the base interpreter's prefix, so it neither reads the venv's ``pyvenv.cfg``
  nor processes ``.pth`` files: the venv's site-packages and an editable
  install of this package are invisible.

So when the job runs on the local mini-cluster (``execution.target`` local,
where the workers run on this machine), :func:`configure_python_workers` sets
``python.executable`` and ``python.client.executable`` to this interpreter and
``python.pythonpath`` to this program's import path: its ``sys.path`` without
the standard library (the program's folder and the venv's site-packages), plus
the folder this package is imported from. An option the user set is left as
it is. On a cluster the workers run elsewhere, so nothing is guessed: the
cluster's ``config.yaml`` names its Python (``scripts/flink-cluster`` does).
"""

from __future__ import annotations

import logging
import os
import sys
import sysconfig
from pathlib import Path
from typing import Any

__all__ = ["LOCAL_TARGETS", "configure_python_workers", "worker_import_path"]

log = logging.getLogger(__name__)

LOCAL_TARGETS = ("local", "minicluster")
EXECUTABLE_OPTIONS = ("python.executable", "python.client.executable")
PYTHONPATH_OPTION = "python.pythonpath"


def worker_import_path() -> list[str]:
    """The folders this program imports from, minus the standard library (the
    embedded interpreter has its own), plus this package's folder, in order."""
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    stdlib = {Path(sysconfig.get_path(name, vars=base)).resolve()
              for name in ("stdlib", "platstdlib")}
    stdlib |= {lib / "lib-dynload" for lib in stdlib}
    package_root = Path(__file__).resolve().parents[2]
    found: list[str] = []
    for entry in [*sys.path, str(package_root)]:
        folder = Path(entry or os.getcwd()).resolve()
        if folder.is_dir() and folder not in stdlib and str(folder) not in found:
            found.append(str(folder))
    return found


def configure_python_workers(flink_configuration: Any) -> dict[str, str]:
    """Set the Python options the user left unset on a local job's Java
    ``Configuration``; returns what was set (empty on a cluster)."""
    target = flink_configuration.getString("execution.target", None)
    if target is not None and target not in LOCAL_TARGETS:
        return {}
    chosen = dict.fromkeys(EXECUTABLE_OPTIONS, sys.executable)
    chosen[PYTHONPATH_OPTION] = os.pathsep.join(worker_import_path())
    applied = {key: value for key, value in chosen.items()
               if not flink_configuration.containsKey(key)}
    for key, value in applied.items():
        flink_configuration.setString(key, value)
    if applied:
        log.info("Python workers of this local job: %s (set these options to choose otherwise)",
                 ", ".join(f"{key}={value}" for key, value in applied.items()))
    return applied
