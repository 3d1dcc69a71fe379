"""One PyFlink gateway per session, and a factory of thread-mode environments on it.

Every job runs on PyFlink's local mini-cluster in thread mode (the embedded
interpreter needs the venv's site-packages and this checkout on its path).
Flink's temp files and logs go to one folder removed at the end of the session.
"""

import atexit
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_scratch = tempfile.mkdtemp(prefix="flink-agents-ltm-flink-")
for sub in ("py", "jvm", "log"):
    os.makedirs(os.path.join(_scratch, sub))
os.environ.setdefault("TMPDIR", os.path.join(_scratch, "py"))
os.environ.setdefault("JVM_ARGS", f"-Djava.io.tmpdir={os.path.join(_scratch, 'jvm')}")
os.environ.setdefault("FLINK_LOG_DIR", os.path.join(_scratch, "log"))
tempfile.tempdir = None  # re-read TMPDIR
atexit.register(shutil.rmtree, _scratch, ignore_errors=True)  # also when no job ran


def _add_prometheus_reporter_to_the_gateway_classpath():
    """The local mini-cluster finds metric reporters on its classpath only (not in
    ``plugins/``); PyFlink's gateway puts ``HADOOP_CLASSPATH`` on it. Must happen before
    the first job launches the gateway."""
    import pyflink

    from flink_agents_ltm.flink_compat import prometheus_reporter_jar

    jar = prometheus_reporter_jar(Path(pyflink.__file__).resolve().parent)
    if jar is not None:
        current = os.environ.get("HADOOP_CLASSPATH")
        os.environ["HADOOP_CLASSPATH"] = os.pathsep.join(filter(None, [current, str(jar)]))


_add_prometheus_reporter_to_the_gateway_classpath()


def flink_configuration(**options):
    from pyflink.common import Configuration

    conf = Configuration()
    base = {
        "python.execution-mode": "thread",
        "python.pythonpath": os.pathsep.join(
            [sysconfig.get_paths()["purelib"], str(ROOT), str(ROOT / "tests")]),
        "python.executable": sys.executable,
        "python.client.executable": sys.executable,
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": "2",
        "restart-strategy.fixed-delay.delay": "500 ms",
        "parallelism.default": "1",
    }
    base.update({k: str(v) for k, v in options.items()})
    for key, value in base.items():
        conf.set_string(key, value)
    return conf


@pytest.fixture(scope="session")
def flink_env():
    """``flink_env(**flink_options)`` -> a fresh StreamExecutionEnvironment on the
    session's gateway (one JVM for the whole session)."""
    from pyflink.datastream import StreamExecutionEnvironment

    def make(**options):
        return StreamExecutionEnvironment.get_execution_environment(flink_configuration(**options))

    yield make
    shutil.rmtree(_scratch, ignore_errors=True)
