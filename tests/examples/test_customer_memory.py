"""The main job runs on PyFlink's mini-cluster and recalls only each customer's own messages."""

import json
from collections import defaultdict
from importlib import resources

import pytest

from tests.examples.docs_pages import DOCS, README, demo_sample, demo_sample_mismatches
from tests.job_runner import failure, run_python


@pytest.mark.cluster
@pytest.mark.flink_smoke  # the demo, on every supported Flink version (make test-flink)
def test_the_demo_recalls_only_each_customers_own_messages(user_dirs):
    """Thread mode, as `make demo` runs it, with no python.* option set by the demo."""
    cwd, scratch, home = user_dirs
    result = run_python(["-m", "flink_agents_ltm.examples.customer_memory", "--home",
                         str(home)], cwd, scratch, home)
    assert result.returncode == 0, failure(result)

    bundled = resources.files("flink_agents_ltm.examples").joinpath("customer_messages.jsonl")
    said = defaultdict(set)
    for line in bundled.read_text().splitlines():
        message = json.loads(line)
        said[message["customer"]].add(message["text"])

    recalled, customer = defaultdict(list), None
    for line in result.stdout.splitlines():
        if line.startswith("[") and "] " in line:
            customer = line[1:line.index("]")].strip()
        elif line.strip().startswith("recalled: "):
            recalled[customer].append(line.strip()[len("recalled: "):])
    assert set(recalled) == set(said)
    for name, memories in recalled.items():
        assert set(memories) <= said[name], f"{name} recalled another customer's message"
    assert "16 messages remembered for 4 customers" in result.stdout
    assert " 0 of them from another customer" in result.stdout
    # the README's and the quickstart's sample outputs are what this run printed
    for page in (README, DOCS / "quickstart.md"):
        assert demo_sample_mismatches(demo_sample(page), result.stdout) == [], page.name
