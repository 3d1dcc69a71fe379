"""Every ``pip install`` an error suggests works for the user who reads it: the line follows
pip's record of where this copy of the package came from (``direct_url.json``), and only a
copy installed by name (from a package index) is told to install by name."""

from __future__ import annotations

from flink_agents_ltm.integrations.extras import install_line, install_line_for
from tests.job_runner import ROOT


def test_a_copy_installed_from_a_wheel_file_is_told_that_wheels_path_with_the_extra(tmp_path):
    wheel = tmp_path / "flink_agents_ltm-0.1.0-py3-none-any.whl"
    wheel.touch()
    recorded = {"url": wheel.as_uri(), "archive_info": {}}
    assert install_line_for("local-embedder", recorded) == f"pip install '{wheel}[local-embedder]'"


def test_when_that_wheel_is_gone_the_line_says_how_to_build_it_again(tmp_path):
    wheel = tmp_path / "flink_agents_ltm-0.1.0-py3-none-any.whl"
    recorded = {"url": wheel.as_uri(), "archive_info": {}}
    assert install_line_for("pgvector", recorded) == (
        f"pip install '{wheel}[pgvector]' (that wheel is gone: scripts/build-wheel in a "
        "checkout builds it)")


def test_an_editable_checkout_is_told_pip_install_e_of_that_checkout():
    recorded = {"url": ROOT.as_uri(), "dir_info": {"editable": True}}
    assert install_line_for("faiss", recorded) == (
        f"pip install -e '{ROOT}[faiss]' (in the checkout: make install)")


def test_only_a_copy_installed_by_name_gets_the_index_line():
    assert install_line_for("local-embedder", None) == \
        "pip install 'flink-agents-ltm[local-embedder]'"
    assert install_line_for("", None) == "pip install 'flink-agents-ltm'"


def test_a_copy_from_another_url_is_told_that_url():
    url = "https://example.org/flink_agents_ltm-0.1.0-py3-none-any.whl"
    assert install_line_for("faiss", {"url": url, "archive_info": {}}) == (
        f"pip install 'flink-agents-ltm[faiss] @ {url}'")


def test_this_venvs_editable_install_gets_its_checkouts_line():
    # make install's .venv: pip recorded the checkout this test runs from
    line = install_line("local-embedder")
    assert line.startswith("pip install -e '") and line.endswith(
        "[local-embedder]' (in the checkout: make install)"), line


def test_a_checkouts_own_egg_info_found_first_does_not_hide_the_installed_record(
        tmp_path, monkeypatch):
    """An editable build leaves ``flink_agents_ltm.egg-info`` in the checkout, with no record
    of where the copy came from; with the checkout first on the path it is the first copy
    of the metadata found, and the line must still follow the installed copy's record."""
    egg_info = tmp_path / "flink_agents_ltm.egg-info"
    egg_info.mkdir()
    (egg_info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: flink-agents-ltm\n"
                                       "Version: 0.1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert install_line("mcp") == (f"pip install -e '{ROOT}[mcp]' (in the checkout: make "
                                   "install)")
