"""``agents.long-term-memory.factory`` picks the long-term memory: ``mem0`` by default, the
registered ``in-memory``, an entry point of group ``flink_agents_ltm.long_term_memory`` (a
real one: a ``*.dist-info`` folder on ``sys.path``) or ``module:callable``; a factory that
returns anything but a ``BaseLongTermMemory`` is refused by name."""

import sys
import textwrap

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.memory.factories import build_long_term_memory
from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import InMemoryLongTermMemory
from flink_agents_ltm.testing import AgentHarness

PLUGIN_MODULE = "flink_agents_ltm_test_plugin"


def build(name, job_id="factories"):
    return build_long_term_memory(name, job_id, AgentsConfiguration(), MailboxThreadCheck(),
                                  resources=None)


def test_the_long_term_memory_factory_defaults_to_mem0():
    assert AgentsConfiguration().get(AgentsOptions.LONG_TERM_MEMORY_FACTORY) == "mem0"
    assert AgentsOptions.LONG_TERM_MEMORY_FACTORY.default == "mem0"


def test_the_registered_name_in_memory_builds_the_dict_backed_memory():
    memory = build("in-memory", job_id="trial")
    assert type(memory) is InMemoryLongTermMemory
    assert memory.job_id == "trial"


class Notes(Agent):
    """Input ``(key, text)``: stores the text; answers which memory holds the key's notes."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    def note(event, ctx):
        text = event.input[1]
        notes = ctx.long_term_memory.get_memory_set("notes")
        notes.add(text)
        ctx.send_event(OutputEvent((type(ctx.long_term_memory).__name__,
                                    sorted(item.value for item in notes.get()))))


@pytest.mark.parametrize("factory, memory", [(None, "Mem0LongTermMemory"),
                                             ("mem0", "Mem0LongTermMemory"),
                                             ("in-memory", "InMemoryLongTermMemory")])
def test_an_agent_keeps_its_notes_in_the_memory_the_factory_option_names(
        tmp_path, factory, memory):
    config = {"agents.job-id": f"factory-{tmp_path.name}",  # shared Mem0 clients: own rows
              "long-term-memory.embedding-model-setup": "hashing",
              "long-term-memory.vector-store": {
                  "provider": "qdrant", "config": {"collection_name": "notes",
                                                   "path": ":memory:"}},
              "long-term-memory.embedded.base-dir": str(tmp_path)}
    if factory is not None:
        config["agents.long-term-memory.factory"] = factory
    harness = AgentHarness(Notes(), config=config)
    harness.process_element(("ann", "tea"))
    harness.process_element(("ann", "scones"))
    harness.process_element(("bob", "coffee"))
    harness.close()
    assert harness.outputs == [(memory, ["tea"]), (memory, ["scones", "tea"]),
                               (memory, ["coffee"])]


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """A distribution installed the way pip leaves one: its module and a ``*.dist-info``
    folder whose ``entry_points.txt`` registers two factories under our group."""
    (tmp_path / f"{PLUGIN_MODULE}.py").write_text(textwrap.dedent("""
        from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import (
            InMemoryLongTermMemory)


        class PluginMemory(InMemoryLongTermMemory):
            pass


        def build(job_id, config, mailbox_check, *, resources):
            return PluginMemory(job_id, mailbox_check)


        def build_a_dict(job_id, config, mailbox_check, *, resources):
            return {"job_id": job_id}
        """))
    dist_info = tmp_path / "ltm_test_plugin-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ltm-test-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        "[flink_agents_ltm.long_term_memory]\n"
        f"plugin-memory = {PLUGIN_MODULE}:build\n"
        f"plugin-dict = {PLUGIN_MODULE}:build_a_dict\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, PLUGIN_MODULE, raising=False)
    yield
    sys.modules.pop(PLUGIN_MODULE, None)


@pytest.mark.usefixtures("installed_plugin")
def test_a_factory_registered_as_an_entry_point_of_the_group_is_found_by_its_name():
    memory = build("plugin-memory", job_id="plugged")
    assert type(memory).__module__ == PLUGIN_MODULE
    assert type(memory).__name__ == "PluginMemory"
    assert memory.job_id == "plugged"


def test_a_name_no_entry_point_registers_is_refused_naming_the_group():
    with pytest.raises(ValueError, match=(
            r"long-term memory factory 'plugin-memory' is neither an entry point of group "
            r"'flink_agents_ltm.long_term_memory' \(installed: in-memory, mem0\) nor "
            r"'module:callable'")):
        build("plugin-memory")


def not_a_memory(job_id, config, mailbox_check, *, resources):
    return {"job_id": job_id}


@pytest.mark.parametrize("name", ["runtime.test_long_term_memory_factories:not_a_memory",
                                  "plugin-dict"])
@pytest.mark.usefixtures("installed_plugin")
def test_a_factory_that_returns_no_base_long_term_memory_is_refused_by_name(name):
    with pytest.raises(TypeError) as refused:
        build(name)
    assert str(refused.value) == (
        f"long-term memory factory '{name}' returned a dict, not a BaseLongTermMemory: "
        "subclass it so that every guard of the memory contract holds")
