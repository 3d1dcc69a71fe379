"""Where users import things from: the options from ``api.options`` (and, as before, from
``api.execution_environment``), the errors they catch from ``api.errors`` (the runtime
modules that raise them re-export the same classes), the harness and the conformance kit
from ``flink_agents_ltm.testing``; and the api builds a job's operator through its seam,
which the package's root fills with the runtime's builder."""

import pytest


def test_the_options_have_one_home_and_their_old_one_re_exports_them():
    from flink_agents_ltm.api import execution_environment, options
    from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions

    assert execution_environment.AgentsOptions is options.AgentsOptions
    assert execution_environment.AgentsConfiguration is options.AgentsConfiguration
    assert options.LongTermMemoryOptions is LongTermMemoryOptions
    assert options.AgentsOptions.__module__ == "flink_agents_ltm.api.options"


@pytest.mark.parametrize("name, runtime_module", [
    ("AgentActionError", "flink_agents_ltm.runtime.keyed_runs"),
    ("DurableCallTimeoutError", "flink_agents_ltm.runtime.durable"),
    ("DurableCallsStuckError", "flink_agents_ltm.runtime.worker_pool"),
])
def test_a_user_facing_error_is_defined_in_the_api_and_raised_by_the_runtime_as_is(
        name, runtime_module):
    import importlib

    from flink_agents_ltm.api import errors

    assert getattr(errors, name).__module__ == "flink_agents_ltm.api.errors"
    assert getattr(importlib.import_module(runtime_module), name) is getattr(errors, name)


def test_the_harness_is_public_as_flink_agents_ltm_testing():
    from flink_agents_ltm.runtime.harness import AgentHarness
    from flink_agents_ltm.testing import AgentHarness as PublicHarness

    assert PublicHarness is AgentHarness


def test_the_api_builds_the_operator_through_the_builder_the_package_root_registered():
    import flink_agents_ltm
    from flink_agents_ltm.api import operator_seam

    assert operator_seam._builder == [flink_agents_ltm._runtime_stream]


def test_without_a_registered_builder_building_a_job_says_what_is_missing(monkeypatch):
    from flink_agents_ltm.api import operator_seam

    monkeypatch.setattr(operator_seam, "_builder", [])
    with pytest.raises(RuntimeError, match="no agent operator builder is registered"):
        operator_seam.build_agent_stream(None, None, None, None, None, None)
