"""Which run of a job a client builds: named from Flink's configuration once per job."""

import re

import pytest

from flink_agents_ltm.api.submission import JobSubmission

FIXED = "a1b2c3d4e5f60718293a4b5c6d7e8f90"


def test_a_job_id_the_deployment_fixes_names_the_submission():
    assert JobSubmission.of({"$internal.pipeline.job-id": f" {FIXED} "}) == JobSubmission(FIXED)


def test_without_a_fixed_job_id_each_submission_gets_a_name_of_its_own():
    first, second = JobSubmission.of({}), JobSubmission.of({"$internal.pipeline.job-id": ""})
    assert re.fullmatch("[0-9a-f]{32}", first.name) and first.name != second.name


def test_a_savepoint_path_makes_the_submission_a_restore():
    submission = JobSubmission.of({"execution.savepoint.path": "file:///sp/savepoint-1"})
    assert submission.restore_path == "file:///sp/savepoint-1"
    assert JobSubmission.of({"execution.savepoint.path": " "}).restore_path is None


@pytest.mark.parametrize("name", ["", "  ", None])
def test_a_submission_without_a_name_is_refused(name):
    with pytest.raises(ValueError, match="a job submission needs a non-empty name"):
        JobSubmission(name)


def test_the_agents_of_one_job_share_one_submission():
    from pyflink.datastream import StreamExecutionEnvironment

    from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment

    agents_env = AgentsExecutionEnvironment.get_execution_environment(
        env=StreamExecutionEnvironment.get_execution_environment())
    assert agents_env.submission() is agents_env.submission()
