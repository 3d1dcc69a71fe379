"""The long-term memories are entry points of the group ``flink_agents_ltm.long_term_memory``
(pyproject.toml), found by ``importlib.metadata`` as an installed wheel declares them: no
table of paths in the runtime. The test installs the metadata pyproject.toml declares (a
dist-info as the wheel carries it) on ``sys.path`` ahead of the venv's, so it checks the
checkout's declarations whether or not the venv's install is up to date."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from flink_agents_ltm import __version__
from flink_agents_ltm.runtime.memory import factories

ROOT = Path(__file__).resolve().parents[1]
GROUP = factories.ENTRY_POINT_GROUP


def declared_entry_points() -> dict[str, dict[str, str]]:
    """The entry points a wheel of the checkout declares, its console scripts included."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {"console_scripts": project["scripts"], **project["entry-points"]}


def dist_info(folder: Path, groups: dict[str, dict[str, str]]) -> Path:
    """A dist-info of flink-agents-ltm in ``folder`` declaring ``groups``, as a wheel's."""
    info = folder / f"flink_agents_ltm-{__version__}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: flink-agents-ltm\nVersion: {__version__}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
        for group, entries in groups.items()))
    return folder


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """The checkout's entry points, as an install of its wheel declares them."""
    monkeypatch.syspath_prepend(str(dist_info(tmp_path, declared_entry_points())))


def test_mem0_and_in_memory_are_declared_entry_points_of_the_memory_group():
    assert set(declared_entry_points()[GROUP]) == {"mem0", "in-memory"}


def test_each_memory_is_found_by_name_through_its_entry_point(installed):
    from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
    from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import (
        InMemoryLongTermMemory,
    )

    assert factories.registered() == ["in-memory", "mem0"]
    assert factories.resolve_factory("mem0") == Mem0LongTermMemory.from_config
    assert factories.resolve_factory(None) == Mem0LongTermMemory.from_config
    assert factories.resolve_factory("in-memory") == InMemoryLongTermMemory.from_config


def test_a_name_no_package_registers_is_refused_naming_the_registered_ones(installed):
    with pytest.raises(ValueError, match=r"'redis' is neither an entry point of group "
                                         r"'flink_agents_ltm.long_term_memory' \(installed: "
                                         r"in-memory, mem0\) nor 'module:callable'"):
        factories.resolve_factory("redis")


def test_without_the_entry_points_no_name_is_known_and_the_error_says_to_reinstall(
        tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(dist_info(tmp_path, {})))
    with pytest.raises(ValueError, match=r"installed: none: reinstall the package"):
        factories.resolve_factory("mem0")


def test_a_module_callable_path_is_still_a_factory():
    found = factories.resolve_factory(
        "flink_agents_ltm.runtime.memory.in_memory_long_term_memory:"
        "InMemoryLongTermMemory.from_config")
    assert found.__qualname__ == "InMemoryLongTermMemory.from_config"


def test_the_agents_yaml_aliases_are_entry_points_of_each_resource_types_group(installed):
    from flink_agents_ltm.api.agents_yaml import class_aliases
    from flink_agents_ltm.api.resources import ResourceType

    assert list(class_aliases(ResourceType.CHAT_MODEL)) == ["ollama", "openai", "scripted"]
    assert list(class_aliases(ResourceType.EMBEDDING_MODEL)) == ["ollama", "openai"]
    assert class_aliases(ResourceType.VECTOR_STORE) == {}
