"""The quickstart's install lines are what CI runs (.ci/run takes them from the page with
scripts/doc-commands): the extractor returns the page's block as written, fails on a page
without it, and the block builds this version's wheel and installs it outside the checkout."""

from __future__ import annotations

import runpy
import subprocess
import sys

import pytest

import flink_agents_ltm
from flink_agents_ltm.integrations.extras import EXTRAS
from tests.job_runner import ROOT

EXTRACTOR = ROOT / "scripts" / "doc-commands"
QUICKSTART = ROOT / "docs" / "quickstart.md"
commands = runpy.run_path(str(EXTRACTOR))["commands"]
WHEEL = f"dist/flink_agents_ltm-{flink_agents_ltm.__version__}-py3-none-any.whl"


def test_the_extractor_returns_the_named_bash_block_as_written():
    page = ("text\n<!-- commands: other -->\n```bash\nnot this\n```\n"
            "<!-- commands: try -->\n```bash\necho one  # a comment\n\ncd ..\n```\nafter\n")
    assert commands(page, "try") == ["echo one  # a comment", "", "cd .."]


@pytest.mark.parametrize("page", ["no block\n", "<!-- commands: try -->\ntext\n",
                                  "<!-- commands: try -->\n```bash\necho unclosed\n"])
def test_the_extractor_fails_with_one_line_on_a_page_without_a_complete_block(page, tmp_path):
    path = tmp_path / "page.md"
    path.write_text(page)
    result = subprocess.run([sys.executable, str(EXTRACTOR), str(path), "try"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "'try'" in result.stderr


def test_the_quickstarts_block_builds_this_versions_wheel_and_installs_it_outside_the_checkout():
    lines = [line.split("#")[0].strip() for line in commands(QUICKSTART.read_text(),
                                                              "install-from-wheel")]
    assert lines[0] == "scripts/build-wheel"
    assert "python3.11 -m venv ../my-agents/.venv" in lines
    assert f"../my-agents/.venv/bin/pip install '{WHEEL}[local-embedder]'" in lines
    assert lines[lines.index("cd ../my-agents") + 1:] == [
        ".venv/bin/flink-agents-ltm-demo",
        ".venv/bin/python -m flink_agents_ltm.examples.first_agent"]


def test_the_quickstart_names_this_versions_wheel_with_each_extra_and_no_index_line():
    text = QUICKSTART.read_text()
    for extra in EXTRAS:
        assert f"pip install '{WHEEL}[{extra.name}]'" in text, extra.name
    # the package is on no index: no page tells a user to install it by name
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        assert "pip install 'flink-agents-ltm" not in page.read_text(), page


def test_ci_runs_the_quickstarts_block_with_the_extractor():
    assert "scripts/doc-commands docs/quickstart.md install-from-wheel" in (
        ROOT / ".ci" / "run").read_text()
