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
    def __init__(self, env: Any):
        self._env = env
        self._config = AgentsConfiguration()
        self._resources: dict[str, tuple[ResourceType, ResourceDescriptor]] = {}
        self._shaper: JobFailureShaper | None = None
        self._submission: JobSubmission | None = None

    @staticmethod
    def get_execution_environment(env: Any = None) -> AgentsExecutionEnvironment:
        """Agents on a PyFlink ``StreamExecutionEnvironment`` (required: local
        execution without Flink is not provided)."""
        if env is None:
            raise ValueError("pass the PyFlink StreamExecutionEnvironment: "
                             "AgentsExecutionEnvironment.get_execution_environment(env=env)")
        return AgentsExecutionEnvironment(env)

    @property
    def env(self) -> Any:
        return self._env

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
                     descriptor: ResourceDescriptor) -> AgentsExecutionEnvironment:
        """Declare a resource for the agents of this job, next to the agent's own, e.g.
        a chat model whose URL is known only when the job is submitted."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a resource name must be a non-empty str, got {name!r}")
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
