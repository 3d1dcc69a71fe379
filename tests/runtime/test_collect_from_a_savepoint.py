"""execute_and_collect() cannot resume from a savepoint: a job that tries is told so before
it runs, and its failure names what to do instead of Flink's "This is a bug"."""

import warnings

import pytest

from flink_agents_ltm.api.job_errors import (
    COLLECT_RESTORE_ERROR,
    CollectFromSavepointWarning,
    JobFailureShaper,
    find_job_error,
)

# How the collect sink's client fails after a restore (Flink's text, Java frames elided).
FLINK_TRACE = """py4j.protocol.Py4JJavaError: An error occurred while calling o123.hasNext.
: java.lang.RuntimeException: Failed to fetch next result
\tat org.apache.flink.streaming.api.operators.collect.CollectResultIterator.nextResultFromFetcher
Caused by: java.lang.IllegalStateException: userVisibleTail should not be larger than offset. \
This is a bug.
\tat org.apache.flink.util.Preconditions.checkState(Preconditions.java:215)
"""


def test_the_collect_sinks_restore_failure_names_the_cause_and_the_fix():
    error = find_job_error(FLINK_TRACE)
    assert error == COLLECT_RESTORE_ERROR
    assert error.line.startswith("CollectSinkRestoreError: execute_and_collect() cannot go on "
                                 "from a savepoint")
    assert "This is a bug" not in error.line and "\n" not in error.line


def test_an_unrelated_java_failure_keeps_its_own_root_cause():
    other = FLINK_TRACE.replace("userVisibleTail should not be larger than offset",
                                "the disk is full")
    assert find_job_error(other).type_name == "java.lang.IllegalStateException"


def test_collecting_a_job_that_starts_from_a_savepoint_warns_before_it_runs(tmp_path):
    shaper = JobFailureShaper("collect", tmp_path)
    collect = shaper.wrap_collect(lambda: ["out"], restoring_from="file:///tmp/savepoint-1")
    with pytest.warns(CollectFromSavepointWarning, match="starts from the savepoint "
                      "file:///tmp/savepoint-1 but reads its outputs with execute_and_collect"):
        assert collect() == ["out"]


def test_collecting_a_job_without_a_savepoint_warns_nothing(tmp_path):
    collect = JobFailureShaper("collect", tmp_path).wrap_collect(lambda: ["out"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert collect() == ["out"]
