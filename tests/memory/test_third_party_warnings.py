"""Mem0's "Failed to load spaCy" warnings (spaCy is not a dependency; Mem0 goes on without
it) do not reach a user's terminal once long-term memory is opened through this package,
while the user's own warnings and Mem0's other loggers still do."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import logging
logging.basicConfig(format="%(name)s %(levelname)s %(message)s")
import flink_agents_ltm.integrations.mem0.memory_factory
from mem0.utils import spacy_models
spacy_models.get_nlp_lemma()          # Mem0's own call: logs its warning when spaCy is missing
logging.getLogger("mem0.utils.spacy_models").error("an error of Mem0's still shows")
logging.getLogger("my_job").warning("the user's warning still shows")
logging.getLogger("mem0.memory.main").warning("Mem0's other warnings still show")
"""


def test_mem0s_spacy_warning_is_silenced_and_nothing_else():
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "spaCy" not in result.stderr, result.stderr
    assert "an error of Mem0's still shows" in result.stderr
    assert "my_job WARNING the user's warning still shows" in result.stderr
    assert "mem0.memory.main WARNING Mem0's other warnings still show" in result.stderr
