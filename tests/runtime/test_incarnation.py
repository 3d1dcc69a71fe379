"""The incarnation of a job's run, and the observation ids it gives: the golden values the
Java runtime's ``IncarnationTest`` checks too, so that the two cannot drift apart."""

from __future__ import annotations

import pytest

from flink_agents_ltm.runtime.incarnation import (
    LEGACY,
    incarnation_of,
    observation_id,
    run_line,
    run_place,
)


def test_the_incarnation_is_the_first_16_hex_digits_of_the_sha256_of_the_submission():
    assert incarnation_of("a1b2c3d4e5f60718293a4b5c6d7e8f90") == "ff25d2389ab7917a"


def test_observation_ids_name_the_keys_line_in_the_incarnation():
    assert observation_id("alice", "d2b1e5cfa5a0ec34", 3, 1) == "alice@d2b1e5cfa5a0ec34#3#1"
    assert run_place("alice", "d2b1e5cfa5a0ec34", 3) == "alice@d2b1e5cfa5a0ec34#3"
    assert run_line("alice", "d2b1e5cfa5a0ec34") == "alice@d2b1e5cfa5a0ec34"


def test_the_legacy_incarnation_keeps_the_ids_of_state_written_before_incarnations():
    assert observation_id("alice", LEGACY, 3, 1) == "alice#3#1"


def test_a_submission_without_a_name_is_refused():
    with pytest.raises(ValueError, match="non-empty name"):
        incarnation_of("")
