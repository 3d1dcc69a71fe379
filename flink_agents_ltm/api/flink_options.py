"""Agent options written in Flink's own configuration.

A job's Flink configuration may carry ``agents.*`` and ``long-term-memory.*``
keys, like any Flink option: in the cluster's ``config.yaml``, as ``-D`` on
``flink run``, or in the ``Configuration`` given to
``StreamExecutionEnvironment``. Flink merges those three itself (the job's
``Configuration`` over ``-D`` over ``config.yaml``) and hands every value over
as text; :func:`read_agent_options` parses each by its option's type and
refuses an unknown key of these prefixes, naming the closest known one.

Flink's ``config.yaml`` flattens nested maps into dotted keys, so a vector
store written as a nested map arrives as ``long-term-memory.vector-store.provider``,
``long-term-memory.vector-store.config.host`` and so on: those keys are put
back together into the dict the option takes (values stay text, as Flink gives
them; Mem0's pydantic store configs read ``"5433"`` as a port). The option also
takes one JSON object,
e.g. ``-Dlong-term-memory.vector-store='{"provider": "pgvector", ...}'``.

``python job.py`` starts a local mini-cluster whose job configuration does
not include any ``config.yaml``; there, as in Flink Agents, the agent options
of ``$FLINK_CONF_DIR/config.yaml`` are read too (below the job's own).

Apache Flink Agents reads its options from the ``agent:`` section of
``config.yaml``, which Flink flattens to ``agent.<key>``: those keys are read
too, as ``<key>`` (its keys are aliases of ours, ``api.options.UPSTREAM_KEYS``;
ours work there as well). An option given under two of its keys with different
values is refused, naming both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flink_agents_ltm.api.configuration import (
    Configuration,
    ConfigurationError,
    unknown_key_message,
)

__all__ = ["PREFIXES", "flink_configuration_text", "read_agent_options"]

PREFIXES = ("agents.", "long-term-memory.", "agent.")
# Apache Flink Agents' section of config.yaml: ``agent: {job-identifier: x}`` is
# ``agent.job-identifier``.
UPSTREAM_SECTION = "agent."
NESTED_OPTIONS = ("long-term-memory.vector-store",)
# Set by Flink's CLI (flink run) once it loaded the configuration folder itself.
_CLI_CONFIG_DIR = "$internal.deployment.config-dir"


def flink_configuration_text(j_configuration: Any) -> dict[str, str]:
    """The job's Flink configuration as text; on a local run outside Flink's CLI,
    the agent options of ``$FLINK_CONF_DIR/config.yaml`` below it."""
    values = {str(k): str(v) for k, v in dict(j_configuration.toMap()).items()}
    conf_dir = os.environ.get("FLINK_CONF_DIR")
    if (conf_dir and _CLI_CONFIG_DIR not in values
            and os.path.isfile(os.path.join(conf_dir, "config.yaml"))):
        from pyflink.java_gateway import get_gateway

        global_configuration = get_gateway().jvm.org.apache.flink.configuration \
            .GlobalConfiguration.loadConfiguration(conf_dir)
        from_file = {str(k): str(v) for k, v in dict(global_configuration.toMap()).items()
                     if str(k).startswith(PREFIXES)}
        values = {**from_file, **values}
    return values


def read_agent_options(text: Mapping[str, str], into: Configuration, source: str) -> None:
    """Set the ``agents.*`` / ``long-term-memory.*`` / ``agent.*`` values of ``text`` on
    ``into``; ``source`` says where they were written, for error messages."""
    known = {option.key for option in into.options()}
    nested: dict[str, dict[str, Any]] = {}
    written: dict[str, str] = {}
    for given, value in sorted(text.items()):
        if not given.startswith(PREFIXES):
            continue
        key = given.removeprefix(UPSTREAM_SECTION)
        if key in written:
            raise ConfigurationError(f"{source}: '{written[key]}' and '{given}' are one key; "
                                     "keep one")
        written[key] = given
        parent = next((n for n in NESTED_OPTIONS if key.startswith(n + ".")), None)
        if parent is not None:
            _put(nested.setdefault(parent, {}), key[len(parent) + 1:].split("."), value,
                 key, source)
            continue
        if not into.knows(key):
            raise ConfigurationError(
                f"{source}: {unknown_key_message(given, known, into.alias_keys())}")
        try:
            into.set_string(key, value)
        except (TypeError, ValueError) as error:
            raise ConfigurationError(f"{source}: {error}") from None
    for parent, tree in nested.items():
        if parent in written:
            raise ConfigurationError(f"{source}: '{parent}' is given both as a value and as nested "
                             f"keys '{parent}.*'; keep one")
        into.set(parent, tree)


def _put(tree: dict[str, Any], path: list[str], value: str, key: str, source: str) -> None:
    for part in path[:-1]:
        child = tree.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigurationError(
                f"{source}: '{key}' nests under a key that already has a value")
        tree = child
    if isinstance(tree.get(path[-1]), dict):
        raise ConfigurationError(f"{source}: '{key}' has a value and nested keys; keep one")
    tree[path[-1]] = value
