"""Resources with a real identity: descriptors are values, equal ones share one built
resource per process, a resource's identity includes what its arguments name, and the
last operator to close releases it. Secrets never show."""

import collections
import pickle
import subprocess
import sys
import traceback

import cloudpickle
import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent
from flink_agents_ltm.api.resources import (
    MissingResourceError,
    Resource,
    ResourceDescriptor,
    ResourceType,
    embedding_model_setup,
    vector_store_setup,
)
from flink_agents_ltm.runtime.resource_provider import (
    ResourceError,
    ResourceProvider,
    check_resources,
    live_resources,
)


class OrderedDict:  # the same __qualname__ as collections.OrderedDict, another module
    pass


class Model(Resource):
    """A resource that counts how often it is opened and closed."""

    opened: list = []
    closed: list = []

    def __init__(self, size=1, **_):
        self.size = size

    def open(self, get_resource):
        Model.opened.append(self)

    def close(self):
        Model.closed.append(self)


class Store(Resource):
    """A resource that needs the model named by ``model``."""

    resource_arguments = {"model": ResourceType.EMBEDDING_MODEL}

    def __init__(self, model, extra_lookup=None, fail=None):
        self.model_name, self.extra_lookup, self.fail = model, extra_lookup, fail

    def open(self, get_resource):
        self.model = get_resource(self.model_name, ResourceType.EMBEDDING_MODEL)
        if self.extra_lookup:
            get_resource(self.extra_lookup, ResourceType.EMBEDDING_MODEL)
        if self.fail:
            raise ValueError(self.fail)


def agent_with(**declared):
    """An agent class declaring ``name=(type, descriptor)`` resources."""
    members = {"ignore": action(InputEvent)(lambda event, ctx: None)}
    setups = {ResourceType.EMBEDDING_MODEL: embedding_model_setup,
              ResourceType.VECTOR_STORE: vector_store_setup}
    for name, (resource_type, descriptor) in declared.items():
        members[name] = setups[resource_type](lambda d=descriptor: d)
    return type("DeclaringAgent", (Agent,), members)()


def provider_for(**declared):
    return ResourceProvider(agent_with(**declared), lambda: None)


@pytest.fixture(autouse=True)
def clean_counts():
    Model.opened.clear()
    Model.closed.clear()
    baseline = live_resources()
    yield
    assert live_resources() == baseline  # every test gives back what it built


# ------------------------------------------------------------------ descriptors as values


def test_equal_classes_and_arguments_make_equal_descriptors_whatever_their_spelling():
    a = ResourceDescriptor(Model, size=2, config={"b": [1, 2], "a": {"x": 1}})
    b = ResourceDescriptor(f"{__name__}.Model", config={"a": {"x": 1}, "b": (1, 2)}, size=2)
    assert a == b and hash(a) == hash(b)
    assert ResourceDescriptor(Model, size=1) != ResourceDescriptor(Model, size=True)
    assert ResourceDescriptor(Model, size=1) != ResourceDescriptor(Model, size=1.0)
    assert ResourceDescriptor(Model, size=1) != ResourceDescriptor(Model, size=2)


def test_classes_sharing_a_qualname_are_told_apart():
    assert ResourceDescriptor(OrderedDict) != ResourceDescriptor(collections.OrderedDict)

    def local_class():
        class Local:
            pass
        return Local

    first, second = local_class(), local_class()
    assert first.__qualname__ == second.__qualname__
    assert ResourceDescriptor(first) != ResourceDescriptor(second)
    assert ResourceDescriptor(first) == ResourceDescriptor(first)


def test_a_descriptor_pickles_to_an_equal_value_that_still_builds():
    descriptor = ResourceDescriptor(Model, size=3)
    copy = pickle.loads(pickle.dumps(descriptor))
    assert copy == descriptor and hash(copy) == hash(descriptor)
    assert copy.build().size == 3

    def local_factory():
        class Local:
            def __init__(self, n):
                self.n = n
        return Local

    shipped = cloudpickle.loads(cloudpickle.dumps(ResourceDescriptor(local_factory(), n=4)))
    assert shipped.build().n == 4


def test_a_mutated_argument_does_not_change_a_descriptor():
    config = {"path": "/a"}
    descriptor = ResourceDescriptor(Model, config=config)
    config["path"] = "/b"
    descriptor.arguments["config"]["path"] = "/c"
    assert descriptor == ResourceDescriptor(Model, config={"path": "/a"})


def test_secrets_never_show_in_a_descriptors_repr():
    descriptor = ResourceDescriptor(
        Model, api_key="sk-live-123", api_key_env="OPENAI_API_KEY", max_tokens=5,
        config={"password": "hunter22", "connection_string": "postgresql://u:pw-in-url@h/db",
                "url": "postgresql://u:pw-in-url@h/db", "nested": [{"auth_token": "tok-9"}]})
    shown = repr(descriptor)
    for secret in ("sk-live-123", "hunter22", "pw-in-url", "tok-9"):
        assert secret not in shown
    assert "api_key_env='OPENAI_API_KEY'" in shown and "max_tokens=5" in shown
    # a connection string is a secret key (the shared table); any other URL keeps its user
    assert "'connection_string': '***'" in shown and "'url': 'postgresql://u:***@h/db'" in shown


def test_bad_descriptors_are_refused_clearly():
    with pytest.raises(ValueError, match="module-qualified"):
        ResourceDescriptor("Model")
    with pytest.raises(TypeError, match="a class or a module-qualified class name, got int"):
        ResourceDescriptor(3)
    with pytest.raises(TypeError, match=r"arguments\['x'\]: .* got unhashable bytearray"):
        ResourceDescriptor(Model, x=bytearray(b"1"))
    with pytest.raises(ImportError, match="module 'no_such_module_x'"):
        ResourceDescriptor("no_such_module_x.Thing").build()


# ------------------------------------------------------------------ sharing and releasing


def test_operators_declaring_equal_resources_share_one_until_the_last_closes():
    declared = {"model": (ResourceType.EMBEDDING_MODEL, ResourceDescriptor(Model, size=7))}
    first, second = provider_for(**declared), provider_for(**declared)
    first.open()
    second.open()
    assert first.get("model") is second.get("model")
    assert len(Model.opened) == 1
    first.close()
    assert Model.closed == []
    second.close()
    assert Model.closed == Model.opened
    with pytest.raises(RuntimeError, match="are closed"):
        second.get("model")
    second.close()  # twice is harmless
    assert len(Model.closed) == 1


def test_a_resource_named_by_another_is_part_of_its_identity():
    store = ResourceDescriptor(Store, model="embedder")
    small = provider_for(embedder=(ResourceType.EMBEDDING_MODEL, ResourceDescriptor(Model, size=1)),
                         kb=(ResourceType.VECTOR_STORE, store))
    large = provider_for(embedder=(ResourceType.EMBEDDING_MODEL, ResourceDescriptor(Model, size=2)),
                         kb=(ResourceType.VECTOR_STORE, store))
    same = provider_for(embedder=(ResourceType.EMBEDDING_MODEL, ResourceDescriptor(Model, size=1)),
                        kb=(ResourceType.VECTOR_STORE, store))
    for provider in (small, large, same):
        provider.open()
    try:
        assert small.get("kb") is not large.get("kb")
        assert small.get("kb").model.size == 1 and large.get("kb").model.size == 2
        assert small.get("kb") is same.get("kb")
        assert small.get("kb").model is small.get("embedder")
    finally:
        for provider in (small, large, same):
            provider.close()
    assert len(Model.closed) == 2


def test_a_store_keeps_its_model_open_after_the_operator_gave_the_model_back():
    declared = {"embedder": (ResourceType.EMBEDDING_MODEL, ResourceDescriptor(Model)),
                "kb": (ResourceType.VECTOR_STORE, ResourceDescriptor(Store, model="embedder"))}
    user, other = provider_for(**declared), provider_for(**declared)
    user.open()
    other.resolve("embedder")
    other.close()
    assert Model.closed == []  # the store (of `user`) still uses it
    user.close()
    assert len(Model.closed) == 1


# ------------------------------------------------------------------ declarations


def test_a_missing_dependency_is_named_when_the_declarations_are_read():
    with pytest.raises(MissingResourceError, match="resource 'kb' of agent DeclaringAgent names "
                                                   "the embedding model 'embedder' in its "
                                                   "argument 'model', but no embedding model "
                                                   "named 'embedder' is declared"):
        provider_for(kb=(ResourceType.VECTOR_STORE, ResourceDescriptor(Store, model="embedder")))
    with pytest.raises(MissingResourceError, match="no embedding model named 'kb2'"):
        provider_for(kb=(ResourceType.VECTOR_STORE, ResourceDescriptor(Store, model="kb2")),
                     kb2=(ResourceType.VECTOR_STORE, ResourceDescriptor(Model)))


def test_resources_depending_on_each_other_in_a_cycle_are_refused():
    class Loop(Store):
        resource_arguments = {"model": ResourceType.VECTOR_STORE}

    with pytest.raises(ResourceError, match="cycle: (a -> b -> a|b -> a -> b)"):
        provider_for(a=(ResourceType.VECTOR_STORE, ResourceDescriptor(Loop, model="b")),
                     b=(ResourceType.VECTOR_STORE, ResourceDescriptor(Loop, model="a")))


def test_a_resource_may_look_up_only_what_its_arguments_name():
    provider = provider_for(
        embedder=(ResourceType.EMBEDDING_MODEL, ResourceDescriptor(Model)),
        other=(ResourceType.EMBEDDING_MODEL, ResourceDescriptor(Model, size=2)),
        kb=(ResourceType.VECTOR_STORE, ResourceDescriptor(Store, model="embedder",
                                                          extra_lookup="other")))
    with pytest.raises(MissingResourceError, match="'kb' looked up the embedding model 'other', "
                                                   "which none of its arguments names"):
        provider.open()
    provider.close()
    assert len(Model.opened) == 2  # embedder and other, opened at start like any Resource
    assert {id(m) for m in Model.closed} == {id(m) for m in Model.opened}


class PlainModel:
    """Not a Resource: built when something needs it, closed when nobody does."""

    closed = 0

    def close(self):
        PlainModel.closed += 1


def test_a_resource_failing_to_open_fails_the_operator_at_start_and_releases_what_it_took():
    PlainModel.closed = 0
    baseline = live_resources()
    provider = provider_for(
        embedder=(ResourceType.EMBEDDING_MODEL, ResourceDescriptor(PlainModel)),
        kb=(ResourceType.VECTOR_STORE, ResourceDescriptor(Store, model="embedder",
                                                          fail="no route to the store")))
    with pytest.raises(ResourceError, match="opening resource 'kb' of agent DeclaringAgent from "
                                            r"ResourceDescriptor\(.*Store.*\) failed: "
                                            "ValueError: no route to the store"):
        provider.open()
    assert PlainModel.closed == 1 and live_resources() == baseline
    provider.close()


class Leaky(Resource):
    """Fails with an error that quotes its password, as some drivers do."""

    def __init__(self, password):
        self.password = password

    def open(self, get_resource):
        raise ConnectionError(f"login failed for user kb with password {self.password}")


def test_a_secret_in_a_failure_is_masked_and_the_unmasked_cause_is_dropped():
    provider = provider_for(kb=(ResourceType.VECTOR_STORE,
                                ResourceDescriptor(Leaky, password="hunter22")))
    with pytest.raises(ResourceError, match=r"password=\'\*\*\*\'.* with password \*\*\*") as e:
        provider.open()
    printed = "".join(traceback.format_exception(e.value))
    assert "hunter22" not in printed and "ConnectionError: login failed" in printed


def test_the_client_checks_resource_arguments_before_the_job_runs():
    agent = agent_with(embedder=(ResourceType.EMBEDDING_MODEL, ResourceDescriptor(Model)),
                       kb=(ResourceType.VECTOR_STORE, ResourceDescriptor(Store, wrong=1)))
    with pytest.raises(ResourceError, match="building resource 'kb' .* unexpected keyword "
                                            "argument 'wrong'"):
        check_resources(agent)
    assert Model.opened == []  # nothing was opened on the client


def test_a_class_of_the_jobs_main_script_travels_with_its_descriptor(tmp_path):
    """A TaskManager's ``__main__`` is not the job's script: such a class must travel by
    value (cloudpickle), and is identified by the class itself, not by its name."""
    shipped = tmp_path / "descriptor.pickle"
    script = (
        "import sys, cloudpickle\n"
        "from flink_agents_ltm.api.resources import ResourceDescriptor\n"
        "class MainModel:\n"
        "    def __init__(self, n):\n"
        "        self.n = n\n"
        "d = ResourceDescriptor(MainModel, n=3)\n"
        "assert d == ResourceDescriptor(MainModel, n=3)\n"
        "open(sys.argv[1], 'wb').write(cloudpickle.dumps([d, d]))\n")
    subprocess.run([sys.executable, "-c", script, str(shipped)], check=True)
    first, second = cloudpickle.loads(shipped.read_bytes())
    assert first.build().n == 3 and first == second
    assert first != ResourceDescriptor(Model, n=3)
