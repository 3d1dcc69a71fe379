"""The main job runs on PyFlink's mini-cluster and recalls only each customer's own messages."""

import json
import subprocess
import sys
from collections import defaultdict
from importlib import resources

import pytest


@pytest.mark.cluster
def test_the_demo_recalls_only_each_customers_own_messages(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "flink_agents_ltm.examples.customer_memory", "--home",
         str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]

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
