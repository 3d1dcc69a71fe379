"""The retrieval example runs offline on PyFlink's mini-cluster and answers every question
from the right knowledge-base entry, including one the side stream replaced mid-run."""

import itertools
import json
import subprocess
import sys
from importlib import resources

import pytest


@pytest.mark.cluster
def test_the_example_answers_each_question_from_the_expected_entry(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "flink_agents_ltm.examples.knowledge_base", "--home",
         str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    bundled = resources.files("flink_agents_ltm.examples").joinpath("knowledge_base.jsonl")
    records = [json.loads(line) for line in bundled.read_text().splitlines() if line.strip()]
    questions = [r["question"] for r in records if "question" in r]
    answers = {}
    lines = result.stdout.splitlines()
    for asked, answered in itertools.pairwise(lines):
        if asked.startswith("[") and answered.strip().startswith("-> "):
            answers[(asked[1:asked.index("]")].strip(), asked[asked.index("]") + 2:])] = \
                answered.strip()[3:]
    assert len(answers) == len(questions)
    for question in questions:
        given = answers[(question["customer"], question["text"])]
        assert given.startswith(question["expect"] + " ("), (question, given)
        assert question.get("expect_text", "") in given
    assert f"{len(records) - len(questions)} documents loaded" in result.stdout
    assert "shipping (updated)" in result.stdout
    assert " 0 answered from the wrong entry" in result.stdout
    assert (tmp_path / "qdrant").is_dir()
