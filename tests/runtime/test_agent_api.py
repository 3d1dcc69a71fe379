"""The user API without a cluster: declarations and configuration are checked early."""

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import (
    LongTermMemoryOptions,
    MailboxThreadError,
)
from flink_agents_ltm.api.resources import (
    MissingResourceError,
    ResourceDescriptor,
    ResourceType,
    embedding_model_setup,
)
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.resource_provider import ResourceProvider


class Base(Agent):
    @action(InputEvent)
    def first(event, ctx):
        ctx.send_event(OutputEvent(1))

    @embedding_model_setup
    def embedder():
        return ResourceDescriptor(dict, dims=3)


class Derived(Base):
    @action(InputEvent)
    async def second(event, ctx):
        ctx.send_event(OutputEvent(2))


def test_actions_run_in_declaration_order_base_class_first():
    actions = Derived.actions_for(InputEvent(None))
    assert [a.name for a in actions] == ["first", "second"]
    assert [a.is_async for a in actions] == [False, True]


def test_action_refuses_what_is_not_an_event_type():
    with pytest.raises(TypeError, match="Event subclasses"):
        action(str)


def test_configuration_takes_runtime_and_long_term_memory_options_and_refuses_others():
    config = AgentsConfiguration()
    config.set(AgentsOptions.ASYNC_CAPACITY, 8).set(LongTermMemoryOptions.VECTOR_STORE, "store")
    assert config.get(AgentsOptions.ASYNC_CAPACITY) == 8
    with pytest.raises(KeyError, match="unknown configuration key 'agents.capacity'"):
        config.set("agents.capacity", 8)
    with pytest.raises(ValueError, match="must be positive"):
        config.set(AgentsOptions.ASYNC_CAPACITY, 0)
    with pytest.raises(ValueError, match="is one of fail, ignore, retry, got 'skip'"):
        config.set(AgentsOptions.ERROR_HANDLING, "skip")
    assert config.get(AgentsOptions.ASYNC_CAPACITY) == 8


def test_a_resource_is_resolved_by_name_and_a_missing_one_is_named():
    provider = ResourceProvider(Derived(), MailboxThreadCheck())
    assert provider.get("embedder", ResourceType.EMBEDDING_MODEL) == {"dims": 3}
    with pytest.raises(MissingResourceError, match="no chat model named 'embedder'"):
        provider.get("embedder", ResourceType.CHAT_MODEL)
    with pytest.raises(MissingResourceError, match="no resource named 'llm' .* embedder"):
        provider.get("llm")


def test_resources_are_looked_up_on_the_mailbox_thread_only():
    import threading

    provider = ResourceProvider(Derived(), MailboxThreadCheck())
    errors = []
    worker = threading.Thread(target=lambda: errors.append(_raised(provider.get, "embedder")))
    worker.start()
    worker.join()
    [error] = errors
    assert isinstance(error, MailboxThreadError)
    assert "resource lookup must run on the operator's mailbox thread" in str(error)


def _raised(fn, *args):
    try:
        fn(*args)
    except Exception as error:  # noqa: BLE001 - the error is what the test looks at
        return error


def test_a_resource_added_on_the_environment_resolves_like_a_declared_one():
    from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment

    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=object())
    agents_env.add_resource("llm", ResourceType.CHAT_MODEL, ResourceDescriptor(dict, url="u"))
    provider = ResourceProvider(Derived(), MailboxThreadCheck(), agents_env.resources)
    assert provider.get("llm", ResourceType.CHAT_MODEL) == {"url": "u"}
    assert provider.get("embedder") == {"dims": 3}
    with pytest.raises(ValueError, match="'llm' is already added"):
        agents_env.add_resource("llm", "chat_model", ResourceDescriptor(dict))
    with pytest.raises(TypeError, match="takes a ResourceDescriptor, got dict"):
        agents_env.add_resource("other", "chat_model", {"url": "u"})


def test_a_name_declared_on_the_agent_and_the_environment_is_refused():
    from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment

    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=object())
    agents_env.add_resource("embedder", "embedding_model", ResourceDescriptor(dict))
    builder = agents_env.from_datastream(object(), key_selector=lambda r: r).apply(Derived())
    with pytest.raises(ValueError, match=r"\['embedder'\] are declared both on agent Derived"):
        builder.to_datastream()
    with pytest.raises(ValueError, match="'embedder' is declared both on agent Derived"):
        ResourceProvider(Derived(), MailboxThreadCheck(), agents_env.resources)
