"""Entry point of a job: wrap a ``StreamExecutionEnvironment``, apply an agent
to a keyed stream, get the outputs back as a ``DataStream``.

.. code-block:: python

    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.ASYNC_CAPACITY, 32)
    out = (agents_env.from_datastream(stream, key_selector=lambda r: r["customer"])
           .apply(MyAgent()).to_datastream())

Where options come from, highest first (Flink's rule: what the program sets
wins over configuration files):

1. the program: ``agents_env.get_config().set(...)`` and
   ``agents_env.load_yaml(path)`` (whichever ran last for a key);
2. Flink's configuration of the job: the ``Configuration`` given to
   ``StreamExecutionEnvironment``, then ``-D`` on ``flink run``, then the
   cluster's ``config.yaml`` (see :mod:`~flink_agents_ltm.api.flink_options`);
3. the option's default.

``to_datastream`` merges them on the client, so a wrong key or value fails
there, before the job is submitted. On the local mini-cluster it also points
PyFlink's Python workers at this interpreter
(:mod:`~flink_agents_ltm.api.python_workers`).

Tables go in and out too: ``from_table(table, key="customer")`` (each row one input, a
PyFlink ``Row``) and ``to_table(output_type=Types.ROW_NAMED(...))`` (each output one row),
through the ``StreamTableEnvironment`` given as ``t_env`` (or one made on ``env``).

``to_datastream`` builds the operator through the runtime's builder, which the
package's root registers (:mod:`~flink_agents_ltm.api.operator_seam`): this module
never names the runtime.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.agents_yaml import read_agents_yaml
from flink_agents_ltm.api.configuration import Configuration
from flink_agents_ltm.api.flink_options import flink_configuration_text, read_agent_options
from flink_agents_ltm.api.job_errors import JobFailureShaper, install_excepthook
from flink_agents_ltm.api.operator_seam import build_agent_stream
from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions, LongTermMemoryOptions
from flink_agents_ltm.api.prompts import Prompt, prompt_descriptor
from flink_agents_ltm.api.python_workers import configure_python_workers
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.api.submission import JobSubmission

# A script importing this module that fails for want of `java` (PyFlink's gateway launch,
# typically its first line) prints one line naming the fix instead of the raw 23-line trace.
install_excepthook()

# AgentsOptions and AgentsConfiguration live in api/options.py; re-exported from here,
# where they were first imported from.
__all__ = ["AgentBuilder", "AgentsConfiguration", "AgentsExecutionEnvironment", "AgentsOptions"]


class AgentsExecutionEnvironment:
    def __init__(self, env: Any, t_env: Any = None):
        self._env = env
        self._t_env = t_env
        self._config = AgentsConfiguration()
        self._resources: dict[str, tuple[ResourceType, ResourceDescriptor]] = {}
        self._shaper: JobFailureShaper | None = None
        self._submission: JobSubmission | None = None

    @staticmethod
    def get_execution_environment(env: Any = None, t_env: Any = None
                                  ) -> AgentsExecutionEnvironment:
        """Agents on a PyFlink ``StreamExecutionEnvironment`` (required: local
        execution without Flink is not provided); ``t_env``: the
        ``StreamTableEnvironment`` on ``env`` that :meth:`from_table` and
        :meth:`AgentBuilder.to_table` use (made on first use when not given)."""
        if env is None:
            raise ValueError("pass the PyFlink StreamExecutionEnvironment: "
                             "AgentsExecutionEnvironment.get_execution_environment(env=env)")
        return AgentsExecutionEnvironment(env, t_env)

    @property
    def env(self) -> Any:
        return self._env

    @property
    def t_env(self) -> Any:
        """The ``StreamTableEnvironment`` tables go through (made on ``env`` if not given)."""
        if self._t_env is None:
            from pyflink.table import StreamTableEnvironment

            self._t_env = StreamTableEnvironment.create(stream_execution_environment=self._env)
        return self._t_env

    def get_config(self) -> Configuration:
        """The options this program sets; they win over Flink's configuration."""
        return self._config

    def load_yaml(self, path: str | Path) -> AgentsExecutionEnvironment:
        """Options and resources from a YAML file (format in
        :mod:`~flink_agents_ltm.api.agents_yaml`): the options are set on
        :meth:`get_config`, the resources added as with :meth:`add_resource`.
        The whole file is checked before anything is applied."""
        spec = read_agents_yaml(path, into=AgentsConfiguration())
        clash = sorted(set(spec.resources) & set(self._resources))
        if clash:
            raise ValueError(f"{path}: resource(s) {clash} are already added to this "
                             "environment")
        self._config.update(spec.options)
        for name, (resource_type, descriptor) in spec.resources.items():
            self.add_resource(name, resource_type, descriptor)
        return self

    def effective_config(self) -> AgentsConfiguration:
        """The options the agent operator runs with: Flink's configuration of the
        job, overridden by what the program set."""
        merged = AgentsConfiguration()
        read_agent_options(flink_configuration_text(self._flink_configuration()), merged,
                           "Flink configuration (config.yaml, -D or the job's Configuration)")
        return merged.update(self._config.to_dict())

    def submission(self) -> JobSubmission:
        """This run of the job (:mod:`~flink_agents_ltm.api.submission`), named once: the
        agents of one job share it, and long-term memory tells its items from those of
        the job's other runs by it."""
        if self._submission is None:
            self._submission = JobSubmission.of(
                flink_configuration_text(self._flink_configuration()))
        return self._submission

    def configure_python_workers(self) -> dict[str, str]:
        """Point a local job's Python workers at this interpreter and import path, where
        the user left them unset (``to_datastream`` calls it); returns what was set."""
        return configure_python_workers(self._flink_configuration())

    def _flink_configuration(self) -> Any:
        from pyflink.util.java_utils import get_j_env_configuration

        return get_j_env_configuration(self._env._j_stream_execution_environment)

    def add_resource(self, name: str, resource_type: ResourceType | str,
                     descriptor: ResourceDescriptor | Prompt) -> AgentsExecutionEnvironment:
        """Declare a resource for the agents of this job, next to the agent's own, e.g.
        a chat model whose URL is known only when the job is submitted. A prompt
        (``ResourceType.PROMPT``) is given as the ``Prompt`` itself."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a resource name must be a non-empty str, got {name!r}")
        if ResourceType(resource_type) is ResourceType.PROMPT:
            descriptor = prompt_descriptor(descriptor, name)
        if not isinstance(descriptor, ResourceDescriptor):
            raise TypeError(f"add_resource takes a ResourceDescriptor, got "
                            f"{type(descriptor).__name__}")
        if name in self._resources:
            raise ValueError(f"resource '{name}' is already added to this environment")
        self._resources[name] = (ResourceType(resource_type), descriptor)
        return self

    @property
    def resources(self) -> dict[str, tuple[ResourceType, ResourceDescriptor]]:
        return dict(self._resources)

    def from_datastream(self, stream: Any, key_selector: Callable[[Any], Any]) -> AgentBuilder:
        if not callable(key_selector):
            raise TypeError("key_selector must be a callable returning the record's key")
        return AgentBuilder(self, stream, key_selector)

    def from_table(self, table: Any, key_selector: Callable[[Any], Any] | None = None, *,
                   key: str | None = None) -> AgentBuilder:
        """Each row of ``table`` (an insert-only PyFlink ``Table``) is one input: a PyFlink
        ``Row`` (``row["text"]``, ``row.text``, ``row.as_dict()``), keyed by the column
        ``key`` or by ``key_selector(row)`` (upstream's form)."""
        if (key is None) == (key_selector is None):
            raise TypeError("from_table takes the key column (key='customer') or a "
                            "key_selector, exactly one of them")
        if key is not None:
            columns = _columns(table)
            if key not in columns:
                raise ValueError(f"from_table: the table has no column '{key}' to key by; its "
                                 f"columns are {', '.join(columns)}")
            key_selector = _KeyColumn(key)
        assert key_selector is not None
        return self.from_datastream(self.t_env.to_data_stream(table), key_selector)

    def execute(self, job_name: str = "flink-agents-ltm") -> Any:
        """Run the job; a failed job raises
        :class:`~flink_agents_ltm.api.job_errors.JobFailedError` (a ``Py4JJavaError``
        whose text is the one-line error the job failed with; its full trace is in the
        file named by ``trace_file``)."""
        with self.job_failures().shaping():
            return self._env.execute(job_name)

    def job_failures(self) -> JobFailureShaper:
        """What turns a failed job's Py4J error into ``JobFailedError``."""
        if self._shaper is None:
            self._shaper = self.shape_job_failures(self.effective_config())
        return self._shaper

    def shape_job_failures(self, config: AgentsConfiguration) -> JobFailureShaper:
        """From now on the ways a job runs (``execute`` of this environment and of the
        ``StreamExecutionEnvironment`` it wraps, ``execute_and_collect`` of the agent's
        stream) raise ``JobFailedError``, and a script that lets it escape prints the
        error as its last line (:mod:`~flink_agents_ltm.api.job_errors`)."""
        shaper = JobFailureShaper(config.get(AgentsOptions.JOB_ID),
                                  config.get(LongTermMemoryOptions.BASE_DIR))
        self._shaper = shaper
        install_excepthook(shaper)
        # (not on a stand-in for PyFlink's environment, as some tests use)
        with contextlib.suppress(AttributeError, TypeError):
            self._env.execute = shaper.wrap(type(self._env).execute.__get__(self._env))
        return shaper


class AgentBuilder:
    def __init__(self, agents_env: AgentsExecutionEnvironment, stream: Any,
                 key_selector: Callable[[Any], Any]):
        self._agents_env = agents_env
        self._stream = stream
        self._key_selector = key_selector
        self._agent: Agent | None = None

    def apply(self, agent: Agent) -> AgentBuilder:
        if not isinstance(agent, Agent):
            raise TypeError(f"apply() takes an Agent, got {type(agent).__name__}")
        if not agent.actions():
            raise ValueError(f"agent {type(agent).__name__} declares no @action")
        self._agent = agent
        return self

    def to_datastream(self) -> Any:
        """The agent's outputs (the ``output`` of each ``OutputEvent``), as pickled objects."""
        if self._agent is None:
            raise ValueError("call apply(agent) before to_datastream()")
        clash = sorted(set(self._agent.resources()) & set(self._agents_env.resources))
        if clash:
            raise ValueError(f"resource(s) {clash} are declared both on agent "
                             f"{type(self._agent).__name__} and on the environment; rename one")
        config = self._agents_env.effective_config()
        self._agents_env.configure_python_workers()
        shaper = self._agents_env.shape_job_failures(config)
        stream = build_agent_stream(self._agents_env.env, self._stream, self._key_selector,
                                    self._agent, config, self._agents_env.resources,
                                    self._agents_env.submission())
        with contextlib.suppress(AttributeError, TypeError):
            stream.execute_and_collect = shaper.wrap_collect(
                stream.execute_and_collect, self._agents_env.submission().restore_path)
        return stream

    def to_table(self, schema: Any = None, output_type: Any = None) -> Any:
        """The agent's outputs as a ``Table`` of ``output_type`` (required: a row type,
        ``Types.ROW_NAMED([...], [...])``); each output is a ``Row``, a tuple or a dict of
        those fields. ``schema`` (a ``Schema``, optional) as in PyFlink's
        ``from_data_stream``. The arguments are upstream's, in its order."""
        from pyflink.common.typeinfo import RowTypeInfo

        if not isinstance(output_type, RowTypeInfo):
            raise TypeError("to_table needs output_type, the row type of the outputs, e.g. "
                            "Types.ROW_NAMED(['customer', 'answer'], [Types.STRING(), "
                            f"Types.STRING()]); got {type(output_type).__name__}")
        rows = self.to_datastream().map(_AsRow(output_type.get_field_names()),
                                        output_type=output_type)
        t_env = self._agents_env.t_env
        return t_env.from_data_stream(rows) if schema is None else \
            t_env.from_data_stream(rows, schema)


def _columns(table: Any) -> list[str]:
    resolved = getattr(table, "get_resolved_schema", None)
    if resolved is not None:
        return list(resolved().get_column_names())
    return list(table.get_schema().get_field_names())


class _KeyColumn:
    """The key selector of ``from_table(table, key=column)`` (picklable, named in errors)."""

    def __init__(self, column: str):
        self.column = column

    def __call__(self, row: Any) -> Any:
        return row[self.column]

    def __repr__(self) -> str:
        return f"column '{self.column}'"


class _AsRow:
    """An output as a row of ``to_table``'s type: a Row as it is, a tuple by position, a dict
    by field name; anything else is refused naming the fields."""

    def __init__(self, fields: list[str]):
        self.fields = list(fields)

    def __call__(self, output: Any) -> Any:
        from pyflink.common import Row

        if isinstance(output, Row):
            return output
        if isinstance(output, tuple | list) and len(output) == len(self.fields):
            return Row(*output)
        if isinstance(output, dict):
            missing = [f for f in self.fields if f not in output]
            if not missing:
                return Row(*(output[f] for f in self.fields))
            raise ValueError(f"to_table: an output has no field {', '.join(missing)} "
                             f"(fields: {', '.join(self.fields)})")
        raise TypeError(f"to_table: an output must be a Row, a tuple of {len(self.fields)} "
                        f"values or a dict of {', '.join(self.fields)}; got "
                        f"{type(output).__name__}")
