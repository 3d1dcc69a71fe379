"""A local job's Python workers get this interpreter and this program's import path,
unless the user chose; a cluster job is left to the cluster's configuration."""

import os
import sys
import sysconfig
from pathlib import Path

import pytest

from flink_agents_ltm.api.python_workers import configure_python_workers, worker_import_path

ROOT = Path(__file__).resolve().parents[2]


def java_configuration(**values):
    from pyflink.java_gateway import get_gateway

    conf = get_gateway().jvm.org.apache.flink.configuration.Configuration()
    for key, value in values.items():
        conf.setString(key, value)
    return conf


def test_the_import_path_has_site_packages_and_this_checkout_but_not_the_stdlib(
        tmp_path, monkeypatch):
    # as for a program run outside the checkout: the package comes from the editable
    # install's import hook, which the embedded interpreter does not run
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p and Path(p).resolve() != ROOT])
    path = worker_import_path()
    assert sysconfig.get_paths()["purelib"] in path
    assert str(ROOT) in path  # an editable install: its finder is not seen by Pemja
    base_stdlib = sysconfig.get_path("stdlib", vars={"base": sys.base_prefix})
    assert str(Path(base_stdlib).resolve()) not in path
    assert all(os.path.isdir(entry) for entry in path)
    assert len(path) == len(set(path))


@pytest.mark.parametrize("target", ["local", None])
def test_a_local_job_gets_this_interpreter_and_import_path(target):
    conf = java_configuration(**({"execution.target": target} if target else {}))
    applied = configure_python_workers(conf)
    assert set(applied) == {"python.executable", "python.client.executable",
                            "python.pythonpath"}
    assert conf.getString("python.executable", None) == sys.executable
    assert conf.getString("python.client.executable", None) == sys.executable
    assert conf.getString("python.pythonpath", None).split(os.pathsep) == worker_import_path()


def test_what_the_user_set_is_kept():
    conf = java_configuration(**{"execution.target": "local",
                                 "python.executable": "/opt/py/bin/python",
                                 "python.pythonpath": "/opt/mine"})
    assert set(configure_python_workers(conf)) == {"python.client.executable"}
    assert conf.getString("python.executable", None) == "/opt/py/bin/python"
    assert conf.getString("python.pythonpath", None) == "/opt/mine"


def test_a_job_for_a_cluster_is_left_to_the_clusters_configuration():
    conf = java_configuration(**{"execution.target": "remote"})
    assert configure_python_workers(conf) == {}
    assert not conf.containsKey("python.executable")
