"""The keyed operator that runs an agent: a thin PyFlink ``KeyedProcessFunction``.

Its processing thread is the *mailbox thread*: Flink calls ``process_element``
and ``on_timer`` there with the current key set. The operator hands PyFlink's
keyed state, timer service and the key to the engine
(:class:`~flink_agents_ltm.runtime.keyed_runs.KeyedRunEngine`, which holds
every rule about runs, steps, replay and the end-of-input drain) and emits
what it answers. Here live only the Flink parts: state descriptors, metrics,
logs, the worker pool's threads, and the lifecycle.

A failure that fails the job is logged at ERROR (one line naming the action,
agent, key and input) before it is raised, so that it is the first thing a
user sees on the console, ahead of Flink's long Java trace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pyflink.common import Types
from pyflink.datastream import KeyedProcessFunction, TimeDomain
from pyflink.datastream.state import MapStateDescriptor, ValueStateDescriptor

from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.errors import FlinkAgentsLtmError, KeySelectorError
from flink_agents_ltm.api.memory.errors import LongTermMemoryError
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.api.redaction import chainable, redact_text
from flink_agents_ltm.api.resources import ResourceType
from flink_agents_ltm.api.submission import JobSubmission
from flink_agents_ltm.flink_compat import (
    attempt_number,
    execution_mode,
    number_of_subtasks,
    require_supported_flink,
    state_key_switch,
    subtask_index,
    ttl_config,
)
from flink_agents_ltm.runtime.action_state.journal import open_journal
from flink_agents_ltm.runtime.callback_profile import CallbackProfile
from flink_agents_ltm.runtime.durable import describe
from flink_agents_ltm.runtime.event_log import open_event_log
from flink_agents_ltm.runtime.keyed_runs import (
    AgentActionError,
    EngineSettings,
    KeyedRunEngine,
)
from flink_agents_ltm.runtime.lazy_memory import LazyActionMemory
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck, task_thread_interrupted
from flink_agents_ltm.runtime.memory.factories import DEFAULT as DEFAULT_FACTORY
from flink_agents_ltm.runtime.memory.factories import build_long_term_memory
from flink_agents_ltm.runtime.metric_groups import RuntimeMetricGroup
from flink_agents_ltm.runtime.operator_log import ProgressLog, log_to_console
from flink_agents_ltm.runtime.operator_metrics import OperatorMetrics, OperatorStats
from flink_agents_ltm.runtime.parent_watchdog import check_task_manager, watch_task_manager
from flink_agents_ltm.runtime.protocols import KeyedStates
from flink_agents_ltm.runtime.resource_provider import ResourceProvider, check_resources
from flink_agents_ltm.runtime.worker_pool import (
    SystemClock,
    TaskCancelledError,
    ThreadWorkerPool,
)

__all__ = ["AgentActionError", "AgentOperator", "KeySelectorError", "build_agent_stream"]

log = logging.getLogger(__name__)

CLOSE_GRACE_S = 10.0  # longest close() waits for durable calls still running


class AgentOperator(KeyedProcessFunction):
    def __init__(self, agent: Agent, config: dict[str, Any],
                 resources: dict[str, tuple[ResourceType, Any]] | None = None,
                 submission: JobSubmission | None = None):
        self._agent = agent
        self._config_values = config
        self._extra_resources = resources or {}
        # named on the client, once per job: every subtask and every attempt share it
        self._submission = submission or JobSubmission.new()
        self._engine: KeyedRunEngine | None = None

    # ------------------------------------------------------------------ lifecycle

    def open(self, runtime_context):
        mode = execution_mode(runtime_context)
        log_to_console(mode)
        config = AgentsConfiguration(self._config_values)
        self._config = config
        self._name = type(self._agent).__name__
        self._check = MailboxThreadCheck()
        self._subtask = subtask_index(runtime_context)
        if mode == "process":
            watch_task_manager()
        # Process mode fires poll timers late (after the bundle that registered them): after
        # each callback the operator resumes the parked keys whose calls are done, each under
        # its own key (KeyedRunEngine.resume_ready). None in thread mode: timers are on time.
        self._key_switch = state_key_switch(runtime_context)
        self._profile = CallbackProfile.from_env(self._subtask)
        self._resources = ResourceProvider(self._agent, self._check, self._extra_resources)
        self._resources.open()
        timeout_s = config.get(AgentsOptions.ASYNC_TIMEOUT_MS) / 1000
        capacity = config.get(AgentsOptions.ASYNC_CAPACITY)
        clock = SystemClock()
        self._pool = ThreadWorkerPool(capacity, timeout_s, f"agents-durable-{self._subtask}",
                                      clock, cancelled=task_thread_interrupted(mode),
                                      before_call=check_task_manager)
        self.stats = OperatorStats()
        self._metrics = OperatorMetrics(runtime_context.get_metrics_group(), self.stats)
        factory = config.get(AgentsOptions.LONG_TERM_MEMORY_FACTORY)
        source = ("Mem0 (the default)" if factory == DEFAULT_FACTORY else
                  f"agents.long-term-memory.factory '{factory}'")
        memory = LazyActionMemory(self._memory_builder(factory), source, self._check)
        if self._opens_memory_at_start(config):
            self._open_memory(memory, source)
        settings = EngineSettings.of(self._name, config, self._submission)
        self._engine = KeyedRunEngine(
            actions=self._agent.actions(), states=self._keyed_states(runtime_context, config),
            pool=self._pool, clock=clock, settings=settings, memory=memory,
            resources=self._resources.get, mailbox_check=self._check, stats=self.stats,
            journal=open_journal(config, self._subtask,
                                 first_attempt=attempt_number(runtime_context) == 0,
                                 incarnation=settings.incarnation),
            event_log=open_event_log(config, job=config.get(AgentsOptions.JOB_ID),
                                     agent=self._name, subtask=self._subtask),
            metrics=RuntimeMetricGroup(self._metrics.group))
        self._progress = ProgressLog(
            log, clock, config.get(AgentsOptions.PROGRESS_INTERVAL_MS) / 1000,
            lambda: f"agent {self._name} on subtask {self._subtask}: {self.stats.progress()}")
        log.info(
            "agent %s opened on subtask %d of %d (%s mode): job id %r, run %s, "
            "durable-async capacity "
            "%d, timeout %g s, poll %d ms, error handling %s, action state retained: %s, "
            "metrics in group '%s'", self._name, self._subtask,
            number_of_subtasks(runtime_context), mode, config.get(AgentsOptions.JOB_ID),
            settings.incarnation, capacity, timeout_s, settings.poll_ms,
            config.get(AgentsOptions.ERROR_HANDLING), settings.retain, "flink_agents")

    @staticmethod
    def _opens_memory_at_start(config: AgentsConfiguration) -> bool:
        at_start = config.get(AgentsOptions.LONG_TERM_MEMORY_OPEN_AT_START)
        if at_start is None:  # a job that names a store uses long-term memory
            return config.get(LongTermMemoryOptions.VECTOR_STORE) is not None
        return at_start

    def _open_memory(self, memory: LazyActionMemory, source: str) -> None:
        """Build the long-term memory now (it connects to its store and loads its model),
        so that a wrong password, a server that is down or a missing extra fails the job
        when it starts, naming the cause, instead of at its first memory use."""
        try:
            memory.get()
        except Exception as error:
            if isinstance(error, FlinkAgentsLtmError):
                raise  # ours (MissingExtraError, LongTermMemoryError, ...): already clear
            raise LongTermMemoryError(
                f"agent {self._name} on subtask {self._subtask}: the long-term memory "
                f"({source}) could not be opened at job start: {type(error).__name__}: "
                f"{redact_text(str(error))} (agents.long-term-memory.open-at-start=false "
                "opens it at its first use instead)") from chainable(error)

    def close(self):
        engine = self._engine
        if engine is None:
            return
        self._engine = None
        still_running = engine.close(CLOSE_GRACE_S)
        self._metrics.publish()
        if self._profile is not None:
            self._profile.dump()
        if still_running:
            log.warning(
                "agent %s on subtask %d closes with %d durable call(s) still running after "
                "%s (%s); their threads finish on their own and the long-term memory stays "
                "open for them", self._name, self._subtask, len(still_running),
                "the task was cancelled" if self._pool.cancelled else f"{CLOSE_GRACE_S:g} s",
                ", ".join(h.call.name for h in still_running))
        log.info("agent %s closed on subtask %d: %s", self._name, self._subtask,
                 self.stats.summary())
        self._resources.close()

    # ------------------------------------------------------------------ Flink callbacks

    def process_element(self, value, ctx):
        yield from self._callback(ctx, lambda engine, timers: engine.process_input(
            ctx.get_current_key(), value, timers))

    def on_timer(self, timestamp, ctx):
        if self._engine is None:
            # Thread mode: PyFlink closes the Python function at the end of input, after the
            # final watermark's drain, and Flink still runs the processing-time timers that
            # were due then (poll timers of runs that drain finished): nothing is left to do.
            log.debug("agent %s: timer at %d after close ignored", type(self._agent).__name__,
                      timestamp)
            return
        event_time = ctx.time_domain() == TimeDomain.EVENT_TIME
        yield from self._callback(ctx, lambda engine, timers: engine.on_timer(
            ctx.get_current_key(), timestamp, event_time, timers))

    def _callback(self, ctx: Any, call: Callable[[KeyedRunEngine, Any], list[Any]]
                  ) -> list[Any]:
        if self._profile is not None:
            return self._profile.run(lambda: self._run_callback(ctx, call))
        return self._run_callback(ctx, call)

    def _run_callback(self, ctx: Any, call: Callable[[KeyedRunEngine, Any], list[Any]]
                      ) -> list[Any]:
        engine = self._engine
        assert engine is not None, "the operator is not open"
        self._check.rebind()  # Flink calls us on the mailbox thread, whichever it is
        check_task_manager()  # a process-mode worker whose TaskManager died: write nothing
        try:
            timers = ctx.timer_service()
            outputs = call(engine, timers)
            if self._key_switch is not None and engine.has_parked_keys:
                outputs.extend(self._resume_ready(engine, timers))
            return outputs
        except TaskCancelledError as error:
            log.info("agent %s on subtask %d: %s", self._name, self._subtask, error)
            raise
        except AgentActionError as error:
            log.error("%s", error)
            raise
        except Exception as error:
            log.error("agent %s failed on subtask %d: %s: %s", self._name, self._subtask,
                      type(error).__name__, " ".join(str(error).split()))
            raise
        finally:
            engine.refresh_gauges()
            self._metrics.publish()
            self._progress.tick()

    def _resume_ready(self, engine: KeyedRunEngine, timers: Any) -> list[Any]:
        """The parked keys whose calls are done go on now, each under its own key (the
        timer service follows the current key); the callback's own key is set back after.
        Outputs are not keyed: they go out through this callback's collector."""
        switch = self._key_switch
        assert switch is not None
        own = switch.current()

        def enter(key: Any) -> Any:
            switch.enter(key)
            return timers

        try:
            return engine.resume_ready(enter)
        finally:
            switch.restore(own)

    # ------------------------------------------------------------------ wiring

    def _keyed_states(self, runtime_context, config: AgentsConfiguration) -> KeyedStates:
        pickled = Types.PICKLED_BYTE_ARRAY()
        short_term = MapStateDescriptor("agent-short-term-memory", Types.STRING(), pickled)
        ttl_ms = config.get(AgentsOptions.SHORT_TERM_MEMORY_TTL_MS)
        if ttl_ms is not None:
            short_term.enable_time_to_live(ttl_config(ttl_ms))
        return KeyedStates.of_host_states(
            next_seq=runtime_context.get_state(ValueStateDescriptor("agent-next-seq",
                                                                    Types.LONG())),
            busy=runtime_context.get_state(ValueStateDescriptor("agent-busy", pickled)),
            pending=runtime_context.get_map_state(
                MapStateDescriptor("agent-pending-inputs", Types.LONG(), pickled)),
            run=runtime_context.get_state(ValueStateDescriptor("agent-run", pickled)),
            short_term=runtime_context.get_map_state(short_term),
            incarnation=runtime_context.get_state(ValueStateDescriptor("agent-incarnation",
                                                                       Types.STRING())))

    def _memory_builder(self, factory: str | None) -> Callable[[], Any]:
        """Builds the long-term memory on first use (Mem0 and its model take seconds)."""
        config = self._config

        def build() -> Any:
            return build_long_term_memory(factory, config.get(AgentsOptions.JOB_ID), config,
                                          self._check,
                                          resources=self._resources.for_long_term_memory)

        return build


class CheckedKeySelector:
    """The user's key selector; a failure (or a ``None`` key) says it was the key selector.
    In a process-mode worker it also starts the TaskManager watchdog of that worker."""

    def __init__(self, key_selector: Callable[[Any], Any]):
        self._key_selector = key_selector
        self._watching = False

    def __call__(self, record: Any) -> Any:
        if not self._watching:
            self._watching = True
            watch_task_manager()
        try:
            key = self._key_selector(record)
        except Exception as error:
            raise KeySelectorError(
                f"the key selector {describe(self._key_selector)} given to from_datastream "
                f"failed on the record {_short(record)}: {type(error).__name__}: {error}"
            ) from error
        if key is None:
            raise KeySelectorError(
                f"the key selector {describe(self._key_selector)} given to from_datastream "
                f"returned None for the record {_short(record)}; Flink keys must not be None")
        return key


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def build_agent_stream(env, stream, key_selector, agent: Agent, config,
                       resources: dict[str, tuple[ResourceType, Any]] | None = None,
                       submission: JobSubmission | None = None) -> Any:
    """``stream`` keyed by ``key_selector`` through the agent operator; ``resources``
    are declared on the environment, in addition to the agent's; ``submission`` names this
    run of the job (:mod:`~flink_agents_ltm.api.submission`; a new one if not given). The
    resources are checked here, on the client, so a job that cannot start is never
    submitted."""
    require_supported_flink()
    check_resources(agent, resources)
    return stream.key_by(CheckedKeySelector(key_selector)).process(
        AgentOperator(agent, config.to_dict(), resources, submission or JobSubmission.new()),
        output_type=Types.PICKLED_BYTE_ARRAY()).name(operator_name(agent))


def operator_name(agent: Agent) -> str:
    """What Flink's web UI, REST API and metric scopes call the agent's operator, in the
    style of Flink's own ``Source: ...`` and ``Sink: ...``. A name is not part of an
    operator's identity in a savepoint (its generated hash is), so state written by a
    build whose operator was still called ``KEYED PROCESS`` restores."""
    return f"Agent: {type(agent).__name__}"
