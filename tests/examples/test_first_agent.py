"""The README's "Writing an agent" is a file that runs as written, in a fresh shell."""

import ast
import re
from importlib import resources

import pytest

from tests.job_runner import ROOT, failure, run_python

EXAMPLE = resources.files("flink_agents_ltm.examples").joinpath("first_agent.py")


def readme_block_after(heading: str) -> str:
    """The first ```python block of the README section ``heading``."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index(f"\n{heading}\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def replies(stdout: str) -> dict[str, list[tuple[int, list[str]]]]:
    """Each customer's replies in order (customers run concurrently, so only the order
    within a customer is fixed)."""
    by_customer: dict[str, list[tuple[int, list[str]]]] = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            reply = ast.literal_eval(line)
            by_customer.setdefault(reply["customer"], []).append(
                (reply["message"], sorted(reply["recalled"])))
    return by_customer


def test_the_readme_shows_the_example_file_exactly():
    assert readme_block_after("## Writing an agent") == EXAMPLE.read_text()


@pytest.mark.cluster
def test_the_example_runs_as_written_and_remembers_across_runs(user_dirs):
    """Process mode (a bare environment's default) without any python.* option: the
    Python workers still find PyFlink and this package."""
    cwd, scratch, home = user_dirs
    command = ["-m", "flink_agents_ltm.examples.first_agent"]
    first = run_python(command, cwd, scratch, home)
    assert first.returncode == 0, failure(first)
    assert replies(first.stdout) == {
        "alice": [(1, []), (2, ["My teapot has not arrived yet."])],
        "bob": [(1, [])],
    }

    second = run_python(command, cwd, scratch, home)
    assert second.returncode == 0, failure(second)
    # Short-term memory (the counter) belongs to the job run; long-term memory outlives it.
    assert replies(second.stdout) == {
        "alice": [(1, ["Any news about my teapot?", "My teapot has not arrived yet."]),
                  (2, ["Any news about my teapot?", "My teapot has not arrived yet."])],
        "bob": [(1, ["Can I change my delivery address?"])],
    }
