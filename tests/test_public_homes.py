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


def test_long_term_memory_options_live_in_api_options_and_their_old_homes_find_them():
    from flink_agents_ltm.api import memory, options
    from flink_agents_ltm.api.memory import long_term_memory

    assert options.LongTermMemoryOptions.__module__ == "flink_agents_ltm.api.options"
    assert long_term_memory.LongTermMemoryOptions is options.LongTermMemoryOptions
    assert memory.LongTermMemoryOptions is options.LongTermMemoryOptions


def test_the_mem0_options_are_one_group_the_mem0_memory_reads_and_the_flat_names_are_them():
    from flink_agents_ltm.api.options import LongTermMemoryOptions as Options
    from flink_agents_ltm.integrations.mem0.options import Mem0Options

    assert Mem0Options is Options.Mem0
    group = {name: value for name, value in vars(Mem0Options).items() if name.isupper()}
    assert sorted(group) == ["CHAT_MODEL_SETUP", "EMBEDDING_MODEL_SETUP", "INFER",
                             "SEARCH_THRESHOLD", "VECTOR_STORE"]
    assert all(getattr(Options, name) is option for name, option in group.items())
    keys = [option.key for option in Options.all()]
    assert len(keys) == len(set(keys)) == 17  # each option once, none lost by the move


@pytest.mark.parametrize("name, home", [
    ("MemorySetItem", "items"), ("MemoryScope", "items"),
    ("NewItem", "items"), ("SweptItem", "items"), ("Ttl", "items"),
    ("ITEM_ID_NAMESPACE", "item_ids"), ("RESERVED_METADATA", "validation"),
    ("MemoryLimits", "validation"), ("check_name", "validation"),
    ("LongTermMemoryError", "errors"), ("UnboundMemorySetError", "errors"),
    ("EmptyPartitionKeyError", "errors"), ("MailboxThreadError", "errors"),
    ("Retention", "expiry"), ("ActionMemoryOutcome", "observation"),
    ("MailboxThreadCheck", "mailbox"),
])
def test_the_contract_module_still_exports_what_moved_out_of_it(name, home):
    import importlib

    from flink_agents_ltm.api.memory import long_term_memory

    moved = getattr(importlib.import_module(f"flink_agents_ltm.api.memory.{home}"), name)
    assert getattr(long_term_memory, name) is moved


def test_a_memory_set_pickled_by_an_earlier_build_still_loads_unbound():
    import pickle

    from flink_agents_ltm.api.memory.long_term_memory import MemorySet

    # What pickle.dumps(memory_set, 0) wrote before the value types left long_term_memory.
    earlier = (b"cflink_agents_ltm.api.memory.long_term_memory\n_restore_memory_set\np0\n"
               b"(Vnotes\np1\ntp2\nRp3\n.")
    restored = pickle.loads(earlier)
    assert isinstance(restored, MemorySet)
    assert (restored.name, restored.partition_key, restored.ltm) == ("notes", None, None)


@pytest.mark.parametrize("operation", ["add", "get", "search", "update", "delete"])
def test_a_memory_set_operation_keeps_the_durable_call_name_that_state_has_recorded(operation):
    """``ctx.durable_execute_async(memory_set.add, ...)`` is recorded under the method's
    qualified name; a restored job replays only a call of the same name, so MemorySet's
    methods keep the names of the build that wrote the state."""
    from flink_agents_ltm.api.memory.long_term_memory import MemorySet
    from flink_agents_ltm.runtime.durable import call_name

    bound = getattr(MemorySet(name="notes"), operation)
    assert call_name(bound) == f"flink_agents_ltm.api.memory.long_term_memory.MemorySet.{operation}"


def test_the_memory_base_class_is_small_and_no_module_of_the_memory_api_is_large():
    import inspect
    from pathlib import Path

    from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory

    assert len(inspect.getsourcelines(BaseLongTermMemory)[0]) <= 300
    folder = Path(inspect.getfile(BaseLongTermMemory)).parent
    sizes = {path.name: len(path.read_text().splitlines()) for path in folder.glob("*.py")}
    assert len(sizes) >= 12 and max(sizes.values()) <= 600, sizes


def test_the_projects_own_tests_use_the_public_harness():
    """What a user imports is what the project tests with: no test reaches into the
    runtime for the harness (this file aside, which checks that the two are one)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    reaching = [str(path.relative_to(root)) for folder in ("tests", "e2e")
                for path in (root / folder).rglob("*.py")
                if path.name != "test_public_homes.py"
                and "flink_agents_ltm.runtime.harness import" in path.read_text()]
    assert reaching == [], "import AgentHarness from flink_agents_ltm.testing"
