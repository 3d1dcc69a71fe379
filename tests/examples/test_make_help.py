"""`make help` lists every target of the Makefile, each with what it does."""

import re
import subprocess

from tests.job_runner import ROOT


def test_make_help_lists_every_target_with_a_description():
    targets = re.findall(r"^([a-z0-9-]+):", (ROOT / "Makefile").read_text(), re.M)
    listed = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.splitlines()
    described = {line.split()[0]: line.split(None, 1)[1] for line in listed if line.strip()}
    assert sorted(described) == sorted(set(targets))
    assert {"lint", "test-python", "demo", "examples"} <= set(described)
