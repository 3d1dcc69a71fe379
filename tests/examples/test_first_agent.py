"""The quickstart's first agent is a file that runs as written, in a fresh shell."""

import ast
import re
from importlib import resources

import pytest

from tests.examples.docs_pages import DOCS, block_after
from tests.job_runner import failure, run_python

EXAMPLE = resources.files("flink_agents_ltm.examples").joinpath("first_agent.py")
QUESTIONS = {"alice": ["My teapot has not arrived yet.", "Any news about my teapot?"],
             "bob": ["Can I change my delivery address?"]}


def first_agent_listing() -> str:
    """The listing of the quickstart's "Your first agent"."""
    return block_after(DOCS / "quickstart.md", "## Your first agent")


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


def test_the_quickstart_shows_the_example_file_exactly():
    assert first_agent_listing() == EXAMPLE.read_text()


def sample_output(after: str) -> list[str]:
    """The lines of the quickstart's plain code block that follows the sentence ``after``."""
    text = (DOCS / "quickstart.md").read_text()
    return re.search(r"```\n(.*?)```", text[text.index(after):], re.S).group(1).splitlines()


@pytest.mark.cluster
def test_the_example_runs_as_written_and_a_second_run_recalls_the_first_runs_messages(
        user_dirs):
    """Process mode (a bare environment's default) without any python.* option: the
    Python workers still find PyFlink and this package. Run again with --again, as the
    quickstart says: each customer's new message recalls the first run's, both runs'
    messages stay side by side (a new run of a job never takes the last run's item ids),
    and both runs print what the quickstart shows."""
    cwd, scratch, home = user_dirs
    first = run_python(["-m", "flink_agents_ltm.examples.first_agent"], cwd, scratch, home)
    assert first.returncode == 0, failure(first)
    assert replies(first.stdout) == {
        "alice": [(1, []), (2, ["My teapot has not arrived yet."])],
        "bob": [(1, [])],
    }
    assert sorted(line for line in first.stdout.splitlines() if line.startswith("{")) == sorted(
        sample_output("It prints each reply"))
    assert [p.name for p in home.iterdir()] == ["support-bot"]
    again = run_python(["-m", "flink_agents_ltm.examples.first_agent", "--again"], cwd,
                       scratch, home)
    assert again.returncode == 0, failure(again)
    assert replies(again.stdout) == {"alice": [(1, sorted(QUESTIONS["alice"]))],
                                     "bob": [(1, QUESTIONS["bob"])]}
    assert sorted(line for line in again.stdout.splitlines() if line.startswith("{")) == sorted(
        sample_output("recalls what they wrote the day before"))

    from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
    from flink_agents_ltm.examples.first_agent import NEXT_DAY
    from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory

    memory = Mem0LongTermMemory.from_config(
        "support-bot", {LongTermMemoryOptions.BASE_DIR.key: str(home)})
    try:
        for customer, questions in QUESTIONS.items():
            memory.switch_context(customer, "after-two-runs", False)
            kept = [item.value for item in memory.get_memory_set("conversation").get()]
            assert sorted(kept) == sorted(
                questions + [m["text"] for m in NEXT_DAY if m["customer"] == customer])
    finally:
        memory.close()
