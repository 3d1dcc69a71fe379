"""The worker pool on cancel and after its parent died (issue 19).

Cancel: the mailbox thread stops waiting for durable calls that hang the moment the task is
cancelled (Flink kills a TaskManager whose cancelled task has not exited after 180 s), and
close waits no grace. Dead parent: a worker whose parent process is gone starts no durable
call, checked in a real child process whose real parent is killed with SIGKILL."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from flink_agents_ltm.runtime.durable import DurableCall
from flink_agents_ltm.runtime.worker_pool import TaskCancelledError, ThreadWorkerPool

HOUR = 3600.0
JOIN_S = 60.0  # far below the calls' hour: the waiting thread must be back long before


def hanging_pool(release, cancelled=None, capacity=1):
    pool = ThreadWorkerPool(capacity, HOUR, "test-cancel", cancelled=cancelled)
    handles = [pool.submit(DurableCall(release.wait, (), {}), "p") for _ in range(capacity)]
    return pool, handles


def on_a_thread(fn):
    """Runs ``fn`` on a thread; answers ``(finished, what it raised)``."""
    raised = []

    def run():
        try:
            fn()
        except BaseException as error:  # noqa: BLE001 - the test looks at it
            raised.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(JOIN_S)
    return not thread.is_alive(), raised


@pytest.fixture
def release():
    event = threading.Event()
    yield event
    event.set()  # the hanging calls end with the test


def test_a_cancel_from_another_thread_stops_the_wait_for_a_hanging_call(release):
    pool, [handle] = hanging_pool(release)
    threading.Timer(0.3, pool.cancel).start()
    finished, raised = on_a_thread(lambda: pool.wait([handle], handle.deadline))
    assert finished, "the mailbox thread still waits for the call after the cancel"
    assert [type(e) for e in raised] == [TaskCancelledError]
    assert not handle.done


def test_the_tasks_cancelled_check_stops_a_submit_to_a_full_pool(release):
    flag = threading.Event()
    pool, _ = hanging_pool(release, cancelled=flag.is_set, capacity=2)
    threading.Timer(0.3, flag.set).start()
    finished, raised = on_a_thread(lambda: pool.submit(DurableCall(len, ((),), {}), "p"))
    assert finished, "a submit to the full pool still waits after the cancel"
    assert [type(e) for e in raised] == [TaskCancelledError]
    assert pool.in_flight == 2


def test_close_after_a_cancel_waits_no_grace_and_names_the_calls_left_running(release):
    pool, handles = hanging_pool(release, capacity=2)
    pool.cancel()
    left_running = []
    finished, raised = on_a_thread(lambda: left_running.extend(pool.close(HOUR)))
    assert finished and not raised
    assert set(left_running) == set(handles)


def test_a_wait_without_cancel_still_gets_the_calls_outcome(release):
    pool, [handle] = hanging_pool(release)
    threading.Timer(0.3, release.set).start()
    finished, raised = on_a_thread(lambda: pool.wait([handle], handle.deadline))
    assert finished and not raised and handle.done


# ---------------------------------------------------------------------- dead parent

CHILD = textwrap.dedent("""
    import json, os, sys, time
    from flink_agents_ltm.runtime.durable import DurableCall
    from flink_agents_ltm.runtime.parent_watchdog import ParentGuard
    from flink_agents_ltm.runtime.worker_pool import ThreadWorkerPool

    folder, wait_for_orphan = sys.argv[1], sys.argv[2] == "orphan"
    parent = os.getppid()
    pool = ThreadWorkerPool(2, 60, "test-parent", before_call=ParentGuard.of_parent().check)
    open(os.path.join(folder, "ready"), "w").close()
    while wait_for_orphan and os.getppid() == parent:
        time.sleep(0.01)

    def side_effect():
        open(os.path.join(folder, "side-effect"), "w").close()
        return "ran"

    handle = pool.submit(DurableCall(side_effect, (), {}), "p")
    pool.wait([handle], handle.deadline)
    result, error = handle.outcome()
    with open(os.path.join(folder, "outcome.json"), "w") as out:
        json.dump({"result": result, "error": type(error).__name__ if error else None,
                   "message": str(error) if error else None}, out)
""")

# The parent: starts the worker, waits until it is ready, then waits to be killed.
PARENT = textwrap.dedent("""
    import os, subprocess, sys, time
    folder, mode, child = sys.argv[1], sys.argv[2], sys.argv[3]
    worker = subprocess.Popen([sys.executable, "-c", child, folder, mode])
    open(os.path.join(folder, "worker.pid"), "w").write(str(worker.pid))
    while not os.path.exists(os.path.join(folder, "ready")):
        time.sleep(0.01)
    open(os.path.join(folder, "parent-ready"), "w").close()
    worker.wait() if mode == "alive" else time.sleep(600)
""")


def run_worker(tmp_path, mode):
    """The worker's outcome; with ``mode`` ``orphan`` its parent is killed first."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path), mode, CHILD],
                              env=env)
    worker_pid = None
    try:
        while not (tmp_path / "parent-ready").exists():
            assert parent.poll() is None, f"the parent ended with {parent.returncode}"
            threading.Event().wait(0.01)
        worker_pid = int((tmp_path / "worker.pid").read_text())
        if mode == "orphan":
            parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=60)
        outcome = tmp_path / "outcome.json"
        for _ in range(6000):
            if outcome.exists() and outcome.stat().st_size:
                break
            threading.Event().wait(0.01)
        return json.loads(outcome.read_text())
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if worker_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker_pid, signal.SIGKILL)


def test_a_worker_whose_parent_was_killed_starts_no_durable_call(tmp_path):
    outcome = run_worker(tmp_path, "orphan")
    assert outcome["error"] == "ParentGoneError", outcome
    assert "is gone" in outcome["message"]
    assert not (tmp_path / "side-effect").exists()


def test_a_worker_whose_parent_lives_runs_its_durable_call(tmp_path):
    outcome = run_worker(tmp_path, "alive")
    assert outcome == {"result": "ran", "error": None, "message": None}
    assert (tmp_path / "side-effect").exists()


# A process-mode worker as the operator wires it: the pool asks check_task_manager before a
# call; no watchdog thread runs, so only that check can stop the call.
GUARDED_WORKER = textwrap.dedent("""
    import os, sys
    from flink_agents_ltm.runtime import parent_watchdog
    from flink_agents_ltm.runtime.durable import DurableCall
    from flink_agents_ltm.runtime.worker_pool import ThreadWorkerPool

    pid, start_time, folder = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    parent_watchdog._guard = parent_watchdog.ParentGuard(pid, start_time)
    pool = ThreadWorkerPool(2, 60, "test-guarded",
                            before_call=parent_watchdog.check_task_manager)
    print("ready", flush=True)
    sys.stdin.readline()  # the TaskManager is gone now

    def side_effect():
        open(os.path.join(folder, "side-effect"), "w").close()

    handle = pool.submit(DurableCall(side_effect, (), {}), "p")
    pool.wait([handle], handle.deadline)
    print("the call ran", flush=True)
""")


def test_a_worker_whose_taskmanager_died_ends_before_its_next_durable_call(tmp_path):
    from flink_agents_ltm.runtime.parent_watchdog import _stat

    taskmanager = subprocess.Popen(["sleep", "600"])
    worker = None
    try:
        _, start_time = _stat(taskmanager.pid)
        worker = subprocess.Popen(
            [sys.executable, "-c", GUARDED_WORKER, str(taskmanager.pid), str(start_time),
             str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        assert worker.stdout.readline() == "ready\n"
        taskmanager.kill()
        taskmanager.wait()
        out, err = worker.communicate("go\n", timeout=60)
        assert worker.returncode == 70, (out, err)
        assert "the call ran" not in out
        assert f"the TaskManager (pid {taskmanager.pid}) of this Python worker" in err
        assert not (tmp_path / "side-effect").exists()
    finally:
        taskmanager.kill()
        taskmanager.wait()
        if worker is not None and worker.poll() is None:
            worker.kill()
            worker.wait()


def test_many_worker_threads_ask_at_once_whether_the_taskmanager_lives_without_an_error():
    # Every durable call asks right before it starts, from its own worker thread; a process-
    # mode job on pgvector failed its calls with "concurrent poll() invocation" when they
    # shared one poll object.
    from flink_agents_ltm.runtime.parent_watchdog import ParentGuard

    guard = ParentGuard.of_parent()
    errors: list[BaseException] = []
    answers: list[bool] = []

    def ask() -> None:
        try:
            answers.extend(guard.alive() for _ in range(20_000))
        except BaseException as error:  # noqa: BLE001 - the test reports it
            errors.append(error)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(answers) == 160_000 and all(answers)
