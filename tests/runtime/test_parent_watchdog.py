"""The watchdog of a process-mode Python worker, on real processes: when the process it
watches dies, the worker ends at once with no cleanup, whatever its threads are doing."""

import subprocess
import sys

from flink_agents_ltm.runtime import parent_watchdog

WORKER = """
import sys, threading, time
from flink_agents_ltm.runtime import parent_watchdog
pid, start_time = int(sys.argv[1]), int(sys.argv[2])
threading.Thread(target=parent_watchdog._watch, args=(pid, start_time), daemon=True).start()
print("watching", flush=True)
while True:                      # a busy worker: it never stops on its own
    time.sleep(0.01)
"""


def test_a_worker_ends_the_moment_the_process_it_watches_dies():
    taskmanager = subprocess.Popen(["sleep", "60"])
    try:
        _, start_time = parent_watchdog._stat(taskmanager.pid)
        worker = subprocess.Popen([sys.executable, "-c", WORKER, str(taskmanager.pid),
                                   str(start_time)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        assert worker.stdout.readline() == "watching\n"
        taskmanager.kill()
        assert worker.wait(timeout=10) == 70  # a worker that went on would time out
    finally:
        taskmanager.kill()
        taskmanager.wait()
    assert f"the TaskManager (pid {taskmanager.pid}) of this Python worker" in \
        worker.stderr.read()


def test_no_watchdog_starts_where_no_jvm_is_an_ancestor():
    assert parent_watchdog.jvm_ancestor() is None  # pytest is not run by a JVM
