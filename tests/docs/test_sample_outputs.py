"""The sample outputs and help texts say what the runs do. The demo's sample (README and
quickstart) is compared with a real run's output by tests/examples/test_customer_memory.py;
here, without running a job: its counts follow from the bundled messages and the example's
search limit, its lines are the bundle's, and `make help` says "twice" only of a target that
runs its example twice."""

from __future__ import annotations

import json
import re
from collections import Counter
from importlib import resources

import pytest

from tests.examples.docs_pages import DOCS, README, RECALLED, demo_sample, demo_sample_mismatches
from tests.job_runner import ROOT

EXAMPLES = resources.files("flink_agents_ltm.examples")
PAGES = [README, DOCS / "quickstart.md"]


def bundled() -> list[dict[str, str]]:
    text = EXAMPLES.joinpath("customer_messages.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def expected_summary() -> str:
    """The demo's summary for its bundled messages on a fresh store: a customer's n-th message
    recalls their n-1 earlier ones, at most the example's search limit."""
    limit = int(re.search(r"conversation\.search\(text, limit=(\d+)\)",
                          EXAMPLES.joinpath("customer_memory.py").read_text()).group(1))
    per_customer = Counter(message["customer"] for message in bundled())
    recalled = sum(min(seq, limit) for n in per_customer.values() for seq in range(n))
    counts = ", ".join(f"{c}: {n}" for c, n in sorted(per_customer.items()))
    return (f"{sum(per_customer.values())} messages remembered for {len(per_customer)} customers"
            f" (short-term counters: {counts}); {recalled} memories recalled, 0 of them from "
            "another customer")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_demos_sample_summary_is_what_the_bundled_messages_give(page):
    (summary,) = [line for line in demo_sample(page) if line.startswith("done in ")]
    assert re.sub(r"^done in [\d.]+ s: ", "", summary) == expected_summary()


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_demos_sample_lines_are_the_bundled_messages_of_their_customer(page):
    seen: dict[str, list[str]] = {}
    history = {}
    for message in bundled():
        said = seen.setdefault(message["customer"], [])
        said.append(message["text"])
        history[f"[{message['customer']:>5}] #{len(said)} {message['text']}"] = said[:-1]
    header = None
    for line in demo_sample(page):
        if line.startswith("["):
            header = line
            assert line in history, line
        elif line.startswith(RECALLED):
            assert line.removeprefix(RECALLED) in history[header], line
    assert header is not None, f"{page.name}'s sample shows no message line"


def test_a_sample_is_compared_with_a_run_line_by_line_but_for_the_time():
    run = ("customer-memory demo: 16 messages, ...\n[alice] #1 Hi\n[  bob] #1 Yo\n"
           f"[alice] #2 Tea\n{RECALLED}Hi\n\ndone in 12.3 s: 3 messages; 1 memories recalled\n")
    assert demo_sample_mismatches(
        ["[alice] #2 Tea", f"{RECALLED}Hi", "...", "done in 14.0 s: 3 messages; 1 memories "
         "recalled"], run) == []
    assert demo_sample_mismatches(
        ["[alice] #2 Tea", f"{RECALLED}Yo", "[alice] #3 Tea", "done in 14.0 s: 3 messages; 2 "
         "memories recalled"], run) == [f"{RECALLED}Yo", "[alice] #3 Tea",
                                        "done in 14.0 s: 3 messages; 2 memories recalled"]


def test_make_help_says_twice_only_of_the_target_that_runs_its_example_twice():
    makefile = (ROOT / "Makefile").read_text()
    twice = re.findall(r"^([a-z0-9-]+):.*## .*\btwice\b", makefile, re.M)
    assert twice == ["example-first-agent"]
    recipe = re.search(r"^example-first-agent:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    runs = re.findall(r"-m flink_agents_ltm\.examples\.first_agent(.*)", recipe)
    assert [args.strip() for args in runs] == ["", "--again"]
