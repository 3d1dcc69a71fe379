"""The quickstart's first agent is a file that runs as written, in a fresh shell."""

import ast
import re
from importlib import resources

from tests.examples.docs_pages import DOCS, block_after

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


def reply_lines(stdout: str) -> list[str]:
    """The reply lines a run printed (a dict per line)."""
    return [line for line in stdout.splitlines() if line.startswith("{")]


# The example run as written, twice (the second with --again): in the wheel's venv,
# tests/install/test_local_embedder_profile.py (a run here repeated it in the dev venv).
