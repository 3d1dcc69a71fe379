"""An agent author's type checker knows what each option holds (mypy, with this project's
settings), so a wrong value is found before the job runs."""

import re
import subprocess
import sys

from tests.job_runner import ROOT

PROGRAM = '''
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions

config = AgentsExecutionEnvironment.get_execution_environment(env=object()).get_config()
reveal_type(config.get(AgentsOptions.ASYNC_CAPACITY))
reveal_type(config.get(AgentsOptions.RETAIN_ACTION_STATE))
reveal_type(config.get(AgentsOptions.SHORT_TERM_MEMORY_TTL_MS))
reveal_type(config.get(LongTermMemoryOptions.SEARCH_THRESHOLD))
reveal_type(config.get(LongTermMemoryOptions.VECTOR_STORE))
reveal_type(config.get(LongTermMemoryOptions.RERANKER))
config.set(AgentsOptions.ASYNC_CAPACITY, 8)
config.set(AgentsOptions.SHORT_TERM_MEMORY_TTL_MS, None)
config.set(AgentsOptions.ASYNC_CAPACITY, "8")
'''
WRONG_LINE = PROGRAM.splitlines().index('config.set(AgentsOptions.ASYNC_CAPACITY, "8")') + 1


def test_options_read_from_a_configuration_have_their_type_and_a_wrong_value_is_refused(
        tmp_path):
    program = tmp_path / "author.py"
    program.write_text(PROGRAM)
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", str(program)],
        cwd=ROOT, capture_output=True, text=True)
    revealed = re.findall(r'Revealed type is "(.*)"', checked.stdout)
    assert revealed == ["int", "bool", "int | None", "float",
                        "dict[str, Any] | str | None", "str | None"], checked.stdout
    errors = [line for line in checked.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, checked.stdout
    assert errors[0].startswith(f"{program}:{WRONG_LINE}:"), checked.stdout
