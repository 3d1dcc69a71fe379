"""Every error the package defines derives from one root, ``FlinkAgentsLtmError``
(``api.errors``), and keeps its standard base: ``except FlinkAgentsLtmError`` catches what
this project raised, ``except RuntimeError`` (or ``ValueError``...) what it caught before.
The operator tells its own errors from others' by that type, not by module name."""

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path
from types import SimpleNamespace

import pytest

import flink_agents_ltm
from flink_agents_ltm.api.errors import FlinkAgentsLtmError

PACKAGE = Path(flink_agents_ltm.__file__).parent
# Not errors of the project: a warning category, and an example's stand-in for a user's own
# failure (what an agent author's code raises, which no project root names).
NOT_PROJECT_ERRORS = {
    "flink_agents_ltm.api.job_errors.CollectFromSavepointWarning",
    "flink_agents_ltm.examples.recovery.InjectedFailure",
}


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top of a module of the package, by its name."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(flink_agents_ltm.__path__, "flink_agents_ltm."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (inspect.isclass(value) and issubclass(value, BaseException)
                    and value.__module__ == info.name):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def _classes_in_the_source() -> set[str]:
    """The names of all top-level classes of the package's files, read from the text (so a
    module the walk could not see would show up as missing)."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                names.add(f"{module}.{node.name}")
    return names


def test_every_exception_class_of_the_package_derives_from_the_root():
    classes = _exception_classes()
    assert len(classes) >= 45  # the walk saw the package (49 classes when the root came)
    assert set(classes) <= _classes_in_the_source()
    outside = sorted(name for name, cls in classes.items()
                     if not issubclass(cls, FlinkAgentsLtmError) and name not in NOT_PROJECT_ERRORS)
    assert outside == [], f"derive these from api.errors.FlinkAgentsLtmError: {outside}"
    assert set(classes) >= NOT_PROJECT_ERRORS  # the exceptions still exist, each for its reason


@pytest.mark.parametrize("name, standard", [
    ("flink_agents_ltm.api.memory.errors.LongTermMemoryError", RuntimeError),
    ("flink_agents_ltm.api.memory.errors.UnboundMemorySetError", ValueError),
    ("flink_agents_ltm.api.configuration.UnknownConfigKeyError", KeyError),
    ("flink_agents_ltm.api.errors.DurableCallTimeoutError", TimeoutError),
    ("flink_agents_ltm.api.errors.DurableResultNotSerializableError", TypeError),
    ("flink_agents_ltm.api.vector_stores.DocumentNotFoundError", LookupError),
    ("flink_agents_ltm.integrations.extras.MissingExtraError", ImportError),
    ("flink_agents_ltm.integrations.mem0.providers.pgvector.connection.PgvectorUnavailableError",
     ConnectionError),
])
def test_an_error_keeps_its_standard_base_beside_the_root(name, standard):
    module, _, qualname = name.rpartition(".")
    cls = getattr(importlib.import_module(module), qualname)
    assert issubclass(cls, standard) and issubclass(cls, FlinkAgentsLtmError)


@pytest.mark.parametrize("name, old_home", [
    ("DurableCallError", "flink_agents_ltm.runtime.durable"),
    ("DurableResultNotSerializableError", "flink_agents_ltm.runtime.durable"),
    ("NonDeterministicReplayError", "flink_agents_ltm.runtime.durable"),
    ("UnsupportedAwaitableError", "flink_agents_ltm.runtime.durable"),
    ("KeySelectorError", "flink_agents_ltm.runtime.agent_operator"),
    ("UnsupportedFlinkVersionError", "flink_agents_ltm.flink_compat"),
])
def test_a_user_facing_error_moved_to_the_api_is_still_found_at_its_old_home(name, old_home):
    from flink_agents_ltm.api import errors

    assert getattr(errors, name).__module__ == "flink_agents_ltm.api.errors"
    assert getattr(importlib.import_module(old_home), name) is getattr(errors, name)


class _AuthorsStoreError(RuntimeError):
    """An error of a memory author's own code: not the project's."""


def _open_at_start(error: BaseException) -> BaseException:
    """What the operator raises when building its long-term memory at job start raises
    ``error``."""
    from flink_agents_ltm.runtime.agent_operator import AgentOperator
    from flink_agents_ltm.runtime.lazy_memory import LazyActionMemory

    def build():
        raise error

    operator = SimpleNamespace(_name="agent", _subtask=0)
    try:
        AgentOperator._open_memory(operator, LazyActionMemory(build, "a factory", lambda: None),
                                   "the factory 'x'")
    except Exception as raised:  # noqa: BLE001 - what was raised is what the test reads
        return raised
    raise AssertionError("opening the memory raised nothing")


def test_the_operator_lets_its_own_errors_through_by_type_and_wraps_others():
    from flink_agents_ltm.api.memory.errors import LongTermMemoryError
    from flink_agents_ltm.integrations.extras import MissingExtraError

    ours = MissingExtraError("install flink-agents-ltm[pgvector]")
    assert _open_at_start(ours) is ours
    wrapped = _open_at_start(_AuthorsStoreError("server down"))
    assert isinstance(wrapped, LongTermMemoryError)
    assert "could not be opened at job start: _AuthorsStoreError: server down" in str(wrapped)
