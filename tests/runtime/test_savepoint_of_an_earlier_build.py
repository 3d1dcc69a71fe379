"""A savepoint taken by the previous build restores in this one and the job goes on as if
never stopped: keys parked mid-call, short-term counters, the long-term memory and the
action-state store the earlier build wrote, its state in the formats of then.

``fixtures/savepoint-8a78e2d`` (how it was made: its README) holds a savepoint of
``savepoint_job/savepoint_job.py`` taken by the build at 8a78e2d (stop with a savepoint,
inputs 0-239 over 16 keys, after 89 outputs, 10 charges in flight), and the folder the job
wrote (``work``: its embedded store, action-state store, charges and outputs). The test
resumes the job from it with this build, on a copy, to the end of its input."""

import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from runtime import embedded_rows
from tests.job_runner import failure, run_python

pytestmark = pytest.mark.cluster

FIXTURE = Path(__file__).parent / "fixtures" / "savepoint-8a78e2d"
JOB = Path(__file__).parent / "savepoint_job" / "savepoint_job.py"
EVENTS, KEYS = 240, 16


def lines(path):
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    """(the job's folder after the resumed run, the run's result)."""
    root = tmp_path_factory.mktemp("earlier-build")
    work, savepoint = root / "work", root / "savepoint"
    shutil.copytree(FIXTURE / "work", work)
    shutil.copytree(FIXTURE / "savepoint", savepoint)
    work.chmod(0o700)
    cwd, scratch, home = root / "cwd", root / "flink", root / "home"
    cwd.mkdir()
    result = run_python([str(JOB), "--events", str(EVENTS), "--restore",
                         savepoint.as_uri()], cwd, scratch, home, SAVEPOINT_JOB_DIR=str(work))
    assert result.returncode == 0, failure(result)
    return work, result


def outputs(work):
    return [json.loads(line) for line in lines(work / "outputs.log")]


def test_the_fixture_stopped_with_charges_in_flight():
    charged = {int(line.split()[2]) for line in lines(FIXTURE / "work" / "calls.log")}
    answered = {o["n"] for o in outputs(FIXTURE / "work")}
    assert len(charged - answered) == 10 and answered < charged


def test_every_input_has_one_output_across_the_two_builds(resumed):
    work, _ = resumed
    seen = Counter(o["n"] for o in outputs(work))
    assert sorted(seen) == list(range(EVENTS))
    assert max(seen.values()) == 1


def test_the_counters_go_on_from_the_savepoint(resumed):
    work, _ = resumed
    counts = defaultdict(list)
    for o in outputs(work):
        counts[o["key"]].append(o["count"])
    assert len(counts) == KEYS
    assert {key: sorted(seen) for key, seen in counts.items()} == {
        key: list(range(1, EVENTS // KEYS + 1)) for key in counts}


def test_no_charge_in_flight_at_the_savepoint_runs_again(resumed):
    work, _ = resumed
    charged = Counter(int(line.split()[2]) for line in lines(work / "calls.log")
                      if line.startswith("charge "))
    assert sorted(charged) == list(range(EVENTS))
    assert {n: times for n, times in charged.items() if times > 1} == {}


def test_each_input_is_remembered_once_under_its_own_id(resumed):
    work, _ = resumed
    stored = embedded_rows.rows("savepoint-fixture", work)
    assert sorted(stored.values()) == sorted(f"k{n % KEYS} event {n}" for n in range(EVENTS))
    assert {o["id"]: stored.get(o["id"]) for o in outputs(work)} == {
        o["id"]: f"{o['key']} event {o['n']}" for o in outputs(work)}
