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

The runtime is imported only when ``to_datastream`` builds the operator, so
this module stays free of runtime imports.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.agents_yaml import read_agents_yaml
from flink_agents_ltm.api.configuration import ConfigOption, Configuration
from flink_agents_ltm.api.event_log import SINKS, parse_level, parse_levels
from flink_agents_ltm.api.flink_options import flink_configuration_text, read_agent_options
from flink_agents_ltm.api.job_errors import JobFailureShaper, install_excepthook
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.python_workers import configure_python_workers
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType

__all__ = ["AgentBuilder", "AgentsExecutionEnvironment", "AgentsOptions"]


def _positive(option: ConfigOption[Any], value: Any) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"option '{option.key}' must be positive, got {value!r}")


def _one_of(choices: tuple[str, ...]) -> Callable[[ConfigOption[Any], Any], None]:
    def check(option: ConfigOption[Any], value: Any) -> None:
        if value is not None and value not in choices:
            raise ValueError(f"option '{option.key}' is one of {', '.join(choices)}, got "
                             f"{value!r}")
    return check


def _checked_by(parse: Callable[[Any, str], Any]) -> Callable[[ConfigOption[Any], Any], None]:
    def check(option: ConfigOption[Any], value: Any) -> None:
        if value is not None:
            parse(value, f"option '{option.key}'")
    return check


class AgentsOptions:
    """Options of the agent runtime (the long-term memory ones are in
    :class:`LongTermMemoryOptions`)."""

    JOB_ID = ConfigOption(
        "agents.job-id", str, "flink-agents",
        "Identity of the job in long-term memory (Mem0 user_id). Keep it stable across "
        "restarts and upgrades, or the job starts with empty long-term memory.")
    ASYNC_CAPACITY = ConfigOption(
        "agents.durable-async.capacity", int, 32,
        "Most durable_execute_async calls in flight per operator subtask (worker threads). "
        "When full, the operator stops taking input until one finishes (back-pressure).")
    ASYNC_TIMEOUT_MS = ConfigOption(
        "agents.durable-async.timeout-ms", int, 60_000,
        "Per-call timeout of durable_execute_async; the action then fails and the call's "
        "slot is freed. Its worker thread cannot be interrupted and is abandoned until the "
        "call returns; more than `capacity` abandoned threads fail the job.",
        duration=True)
    ASYNC_POLL_INTERVAL_MS = ConfigOption(
        "agents.durable-async.poll-interval-ms", int, 5,
        "How often an action parked on a durable call checks for its result (a "
        "processing-time timer of its key).", duration=True)
    RETAIN_ACTION_STATE = ConfigOption(
        "agents.action-state.retained", bool, True,
        "Keep the results of an action's durable calls (model answers and tool results of "
        "ctx.chat included) in Flink state as they arrive, so that a replay after recovery "
        "reuses them: exactly-once calls. Off: only completed actions are kept; the calls "
        "of an action interrupted by a failure run again (at-least-once), which keeps "
        "state small. Memory writes are exactly-once either way.")
    ACTION_STATE_STORE: ConfigOption[str] = ConfigOption(
        "agents.action-state.store", str, "none",
        "Where durable results are written ahead, outside Flink's checkpoints, so that a "
        "call that completed after the last checkpoint is not run again after a failure: "
        "'none' (off), 'sqlite' (a 0600 file next to the job's embedded store, one "
        "machine), a registered name or 'module:callable'. A call that a crash interrupted "
        "asks its reconciler, if it has one, instead of running again.")
    ACTION_STATE_RETENTION_MS = ConfigOption(
        "agents.action-state.retention-ms", int, 600_000,
        "Where the host reports no completed checkpoints (PyFlink's Python operator), how "
        "long the action-state store keeps a finished action's records; keep it above the "
        "checkpoint interval plus a restart.", duration=True)
    SHORT_TERM_MEMORY_TTL_MS: ConfigOption[int | None] = ConfigOption(
        "agents.short-term-memory.ttl-ms", int, None,
        "Time to live of short-term memory entries since their last write (Flink state "
        "TTL). Unset: no expiry.", duration=True)
    ERROR_HANDLING = ConfigOption(
        "agents.error-handling", str, "fail",
        "What a failing action does: 'fail' fails the job (Flink restarts it from the last "
        "checkpoint), 'ignore' logs the error, drops that input's run and goes on.")
    PROGRESS_INTERVAL_MS = ConfigOption(
        "agents.progress-interval-ms", int, 10_000,
        "How often each operator subtask logs a progress line (inputs, actions, durable "
        "calls) at INFO while it works.", duration=True)
    EVENT_LOG_SINK: ConfigOption[str] = ConfigOption(
        "agents.event-log.sink", str, "off",
        "Where the event log goes (every event and action of every key, one JSON object "
        "per line): 'off' (the default), 'logging' (the Python logger "
        "'flink_agents_ltm.event_log', which reaches Flink's log; not the console) or "
        "'file' (appended to agents.event-log.file, 0600, safe across processes).")
    EVENT_LOG_FILE: ConfigOption[str | None] = ConfigOption(
        "agents.event-log.file", str, None,
        "The file of the 'file' sink. Unset: event-log/events.jsonl under the embedded "
        "base-dir, else $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm.")
    EVENT_LOG_LEVEL: ConfigOption[str] = ConfigOption(
        "agents.event-log.level", str, "INFO",
        "The level records of an event type are written at, for types "
        "agents.event-log.levels does not name: DEBUG, INFO, WARNING, ERROR or OFF (not "
        "written). The records of a failure are written at WARNING at least.")
    EVENT_LOG_LEVELS: ConfigOption[str | None] = ConfigOption(
        "agents.event-log.levels", str, None,
        "Levels per event type, e.g. 'InputEvent:INFO,ChatRequestEvent:DEBUG,"
        "MemorySearchEvent:OFF' (class name or module.QualifiedName). A record belongs to "
        "the type of the event it is about (an action's, a durable call's and a memory "
        "operation's: the event that triggered the action).")
    EVENT_LOG_MAX_PAYLOAD_CHARS: ConfigOption[int] = ConfigOption(
        "agents.event-log.max-payload-chars", int, 300,
        "Longest payload (an event's, a durable result's, an output's) a record carries, in "
        "characters of its JSON; a longer one is cut there and the record says its full "
        "length. Secrets are masked before the cut.")
    LONG_TERM_MEMORY_FACTORY: ConfigOption[str] = ConfigOption(
        "agents.long-term-memory.factory", str, "mem0",
        "Which long-term memory the job builds: 'mem0' (the default), 'in-memory' (tests and "
        "demos; nothing survives the process), a name registered under the entry point group "
        "'flink_agents_ltm.long_term_memory', or 'module:callable' called as "
        "callable(job_id, config, mailbox_check, resources=...).")
    LONG_TERM_MEMORY_OPEN_AT_START: ConfigOption[bool | None] = ConfigOption(
        "agents.long-term-memory.open-at-start", bool, None,
        "Build the long-term memory when the operator opens, so that a wrong password, a "
        "server that is down or a missing extra fails the job at start, not at the first "
        "memory use: true, or false (built on first use). Unset: at start when the job names "
        "a vector store (long-term-memory.vector-store), on first use otherwise (a job that "
        "never uses it never loads the embedding model).")

    VALIDATORS: ClassVar[dict[str, Callable[[ConfigOption[Any], Any], None]]] = {
        ASYNC_CAPACITY.key: _positive,
        ASYNC_TIMEOUT_MS.key: _positive,
        ASYNC_POLL_INTERVAL_MS.key: _positive,
        PROGRESS_INTERVAL_MS.key: _positive,
        SHORT_TERM_MEMORY_TTL_MS.key: _positive,
        ACTION_STATE_RETENTION_MS.key: _positive,
        EVENT_LOG_MAX_PAYLOAD_CHARS.key: _positive,
        EVENT_LOG_SINK.key: _one_of(SINKS),
        EVENT_LOG_LEVEL.key: _checked_by(parse_level),
        EVENT_LOG_LEVELS.key: _checked_by(parse_levels),
    }

    @classmethod
    def all(cls) -> tuple[ConfigOption[Any], ...]:
        return tuple(v for v in vars(cls).values() if isinstance(v, ConfigOption))


class AgentsConfiguration(Configuration):
    """Agent runtime options plus long-term memory options."""

    def __init__(self, values: dict[str, Any] | None = None):
        super().__init__(AgentsOptions.all() + LongTermMemoryOptions.all(), values)

    def _check(self, option: ConfigOption[Any], value: Any) -> None:
        check = AgentsOptions.VALIDATORS.get(option.key)
        if check is not None:
            check(option, value)
        if option is AgentsOptions.ERROR_HANDLING and value not in ("fail", "ignore"):
            raise ValueError(f"option '{option.key}' is 'fail' or 'ignore', got {value!r}")


class AgentsExecutionEnvironment:
    def __init__(self, env: Any):
        self._env = env
        self._config = AgentsConfiguration()
        self._resources: dict[str, tuple[ResourceType, ResourceDescriptor]] = {}
        self._shaper: JobFailureShaper | None = None

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
        for key, value in spec.options.items():
            self._config.set(key, value)
        for name, (resource_type, descriptor) in spec.resources.items():
            self.add_resource(name, resource_type, descriptor)
        return self

    def effective_config(self) -> AgentsConfiguration:
        """The options the agent operator runs with: Flink's configuration of the
        job, overridden by what the program set."""
        merged = AgentsConfiguration()
        read_agent_options(flink_configuration_text(self._flink_configuration()), merged,
                           "Flink configuration (config.yaml, -D or the job's Configuration)")
        for key, value in self._config.to_dict().items():
            merged.set(key, value)
        return merged

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
        runtime = importlib.import_module("flink_agents_ltm.runtime.agent_operator")
        stream = runtime.build_agent_stream(self._agents_env.env, self._stream,
                                            self._key_selector, self._agent, config,
                                            self._agents_env.resources)
        with contextlib.suppress(AttributeError, TypeError):
            stream.execute_and_collect = shaper.wrap_collect(stream.execute_and_collect)
        return stream
