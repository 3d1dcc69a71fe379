"""Where long-term memory lives when nothing says where: ``~/.flink-agents-ltm``.

Every other test sets ``$FLINK_AGENTS_LTM_HOME`` (tests/conftest.py). This one runs a
fresh Python with neither it nor ``MEM0_DIR`` set and ``HOME`` pointing at a folder of
the test, as a user's first run does: the home folder is made when the package is
imported, which an in-process test cannot repeat.
"""

import os
import stat
import subprocess
import sys

FIRST_RUN = """
import shutil
from pathlib import Path
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory

def remembered():
    ltm = Mem0LongTermMemory.from_config("support-bot")
    try:
        ltm.switch_context("alice", "obs-1", False)
        conversation = ltm.get_memory_set("conversation")
        before = [item.value for item in conversation.get()]
        conversation.add("My teapot has not arrived yet.")
        return before
    finally:
        ltm.close()

print(remembered())
print(remembered())
shutil.rmtree(Path.home() / ".flink-agents-ltm" / "support-bot")  # the README's fresh start
print(remembered())
"""


def mode(path) -> str:
    return f"{stat.S_IMODE(path.stat().st_mode):04o}"


def test_without_flink_agents_ltm_home_memory_lives_in_a_private_folder_per_job_under_the_home(
        tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("FLINK_AGENTS_LTM_HOME", "MEM0_DIR")}
    env["HOME"] = str(tmp_path)
    result = subprocess.run([sys.executable, "-c", FIRST_RUN], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == [
        "[]", "['My teapot has not arrived yet.']",  # the second run remembers the first
        "[]"]  # deleting ~/.flink-agents-ltm/support-bot started afresh

    home = tmp_path / ".flink-agents-ltm"
    assert (home / "support-bot" / "vectors.sqlite3").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".flink-agents-ltm"]
    modes = {str(p.relative_to(tmp_path)): mode(p) for p in [home, *home.rglob("*")]}
    assert modes[".flink-agents-ltm"] == "0700", modes
    assert modes[".flink-agents-ltm/support-bot"] == "0700", modes
    assert modes[".flink-agents-ltm/support-bot/vectors.sqlite3"] == "0600", modes
    assert {p: m for p, m in modes.items() if int(m, 8) & 0o077} == {}
