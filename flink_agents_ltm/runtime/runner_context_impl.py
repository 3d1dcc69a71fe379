"""The ``ctx`` of one action execution (one *step* of a key's run).

It lives on the mailbox thread: everything but the long-term memory sets and
the awaitable returned by ``durable_execute_async`` is mailbox-only. Durable
results are looked up in, and appended to, the step's record under the call's
name, in call order, which is what makes a replay after recovery return them
instead of calling. An inline durable call runs at its write position
(``call<k>``), like a call on the worker pool.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.chat_models import BaseChatModelSetup, ChatMessage, MessageRole
from flink_agents_ltm.api.events import Event, MemoryEvent, OutputEvent
from flink_agents_ltm.api.memory.errors import MailboxThreadError
from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory
from flink_agents_ltm.api.memory.write_position import write_position
from flink_agents_ltm.api.metric_group import MetricGroup
from flink_agents_ltm.api.prompts import Prompt
from flink_agents_ltm.api.resources import ResourceType
from flink_agents_ltm.api.runner_context import MemoryObject, RunnerContext
from flink_agents_ltm.api.structured_output import OutputSchema
from flink_agents_ltm.api.tools import Tool, tool
from flink_agents_ltm.runtime.action_state.journal import RESULT, STARTED, StepJournal
from flink_agents_ltm.runtime.chat_loop import ChatLoop
from flink_agents_ltm.runtime.durable import (
    DurableCall,
    DurableCallError,
    DurableResultNotSerializableError,
    call_name,
    recordable,
)
from flink_agents_ltm.runtime.event_log import NO_STEP, StepTrace
from flink_agents_ltm.runtime.keyed_memory import KeyedMemoryObject, MemoryStore
from flink_agents_ltm.runtime.metric_groups import ActionMetrics
from flink_agents_ltm.runtime.read_through_memory import ReadThroughMemoryStore
from flink_agents_ltm.runtime.step import Step
from flink_agents_ltm.runtime.subagent import SubagentRun, SubagentSink, subagent_input


class RunnerContextImpl(RunnerContext):
    def __init__(
        self,
        *,
        key: Any,
        action_name: str,
        step: Step,
        sensory: MemoryStore,
        short_term: MemoryStore,
        long_term: Callable[[], BaseLongTermMemory],
        resources: Callable[[str, ResourceType | None], Any],
        listened: Callable[[Event], bool],
        mailbox_check: Callable[[], None],
        on_record: Callable[[], None],
        awaitable: bool = True,
        journal: StepJournal | None = None,
        trace: StepTrace = NO_STEP,
        metrics: ActionMetrics | None = None,
    ):
        self._key = key
        self._awaitable = awaitable
        self._action_name = action_name
        self._step = step
        self.sensory_store = sensory
        self.short_term_store = short_term
        self._sensory = KeyedMemoryObject(sensory)
        self._short_term = KeyedMemoryObject(short_term)
        self._long_term = long_term
        self._resources = resources
        self._listened = listened
        self._check = mailbox_check
        self._on_record = on_record
        self._journal = journal
        self._trace = trace
        self._metrics = metrics
        self._sink: Step | SubagentSink = step  # where send_event goes

    def child_context(self, action_name: str, sensory: ReadThroughMemoryStore,
                      short_term: ReadThroughMemoryStore, listened: Callable[[Event], bool],
                      awaitable: bool, sink: SubagentSink) -> RunnerContextImpl:
        """The ``ctx`` of a subagent's action run inside this one (:mod:`.subagent`): this
        step's durable calls, journal, trace, metrics and long-term memory; its own memory
        scope, events and outputs."""
        child = RunnerContextImpl(
            key=self._key, action_name=action_name, step=self._step, sensory=sensory,
            short_term=short_term, long_term=self._long_term, resources=self._resources,
            listened=listened, mailbox_check=self._check, on_record=self._on_record,
            awaitable=awaitable, journal=self._journal, trace=self._trace,
            metrics=self._metrics)
        child._sink = sink
        return child

    @property
    def trace(self) -> StepTrace:
        """The event log's view of this step."""
        return self._trace

    @property
    def agent_metric_group(self) -> MetricGroup | None:
        return None if self._metrics is None else self._metrics.agent_group

    @property
    def action_metric_group(self) -> MetricGroup | None:
        return None if self._metrics is None else self._metrics.group

    def model_answered(self, model: str, call: DurableCall, reply: ChatMessage) -> None:
        """``ctx.chat``'s model call ``call`` answered ``reply``: its tokens and latency in
        the action's metrics, unless the answer was replayed (the model was not called)."""
        if self._metrics is None or call.replayed:
            return
        usage = reply.usage
        self._metrics.model_call(
            model, None if usage is None else usage.prompt_tokens,
            None if usage is None else usage.completion_tokens,
            None if call.elapsed_s is None else round(call.elapsed_s * 1000))

    @property
    def key(self) -> Any:
        return self._key

    @property
    def action_name(self) -> str:
        return self._action_name

    def send_event(self, event: Event) -> None:
        self.check_mailbox("send_event")
        if not isinstance(event, Event):
            raise TypeError(f"send_event takes an Event, got {type(event).__name__}")
        if isinstance(event, OutputEvent):
            self._sink.outputs.append(event.output)
            return
        if not isinstance(event, MemoryEvent) and not self._listened(event):
            raise ValueError(f"no action listens to {type(event).__name__}: declare one with "
                             f"@action({type(event).__name__}) or do not send it")
        self._sink.sent.append(event)

    @property
    def sensory_memory(self) -> MemoryObject:
        self.check_mailbox("sensory_memory")
        return self._sensory

    @property
    def short_term_memory(self) -> MemoryObject:
        self.check_mailbox("short_term_memory")
        return self._short_term

    @property
    def long_term_memory(self) -> BaseLongTermMemory:
        return self._long_term()

    def get_resource(self, name: str, resource_type: ResourceType | None = None) -> Any:
        return self._resources(name, resource_type)

    def durable_execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not callable(fn):
            raise TypeError(f"durable_execute needs a callable, got {type(fn).__name__}")
        return self.durable_execute_named(call_name(fn), fn, *args, **kwargs)

    def durable_execute_named(self, name: str, fn: Callable[..., Any], *args: Any,
                              **kwargs: Any) -> Any:
        """``durable_execute`` recorded under ``name`` (``ctx.chat`` names tool calls)."""
        self.check_mailbox("durable_execute")
        position = self._step.position
        replayed, result = self._step.replay(name)
        if replayed:
            self._trace.call(name, position, "replayed", result=result)
            return result
        call = DurableCall(fn, args, kwargs, name=name)
        if self._journal is not None:  # the action-state store: write ahead
            state, result = self._journal.replay(position, name)
            if state == RESULT:  # ran in a failed process: it may have stored items
                self._trace.call(name, position, "recovered", result=result)
                self._step.record(name, result).stored_items = None
                self._on_record()
                return result
            call.reconciling = state == STARTED
            _, call.on_start, call.on_result = self._journal.start(position, name)
        started = time.monotonic()
        try:
            with write_position(position):
                result = call.run()
            recordable(name, result)
        except Exception as error:  # a failed call's started marker stays (see action_driver)
            self._trace.call(name, position, "failed", time.monotonic() - started, error)
            if isinstance(error, DurableResultNotSerializableError):
                raise
            raise DurableCallError(f"durable call {name} failed: "
                                   f"{type(error).__name__}: {error}") from error
        self._trace.call(name, position, "completed", time.monotonic() - started,
                         result=result)
        self._step.record(name, result)
        self._on_record()
        return result

    def durable_execute_async(self, fn: Callable[..., Any], *args: Any,
                              reconciler: Callable[[], Any] | None = None, **kwargs: Any):
        self._require_async("durable_execute_async")
        return DurableCall(fn, args, kwargs, reconciler=reconciler)

    def chat(self, messages: str | Sequence[ChatMessage] | None = None,
             model: str | None = None, tools: Sequence[Tool | Callable[..., Any]] = (),
             max_turns: int = 8, *, prompt: Prompt | str | None = None,
             values: Mapping[str, Any] | None = None, output_schema: Any = None,
             output_retries: int = 1):
        self.check_mailbox("chat")
        self._require_async("chat")
        if not isinstance(model, str) or not model:
            raise TypeError("ctx.chat needs model=, the name of a declared chat model, got "
                            f"{model!r}")
        conversation = self._prompt_messages(prompt, values)
        if isinstance(messages, str):
            messages = [ChatMessage(MessageRole.USER, messages)]
        messages = list(messages or ())
        if not all(isinstance(m, ChatMessage) for m in messages):
            raise TypeError("ctx.chat takes a str or a non-empty sequence of ChatMessage (or "
                            "a prompt=)")
        conversation += messages
        if not conversation:
            raise TypeError("ctx.chat needs messages (a str or a non-empty sequence of "
                            "ChatMessage), a prompt=, or both")
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive int, got {max_turns!r}")
        if isinstance(output_retries, bool) or not isinstance(output_retries, int) or \
                output_retries < 0:
            raise ValueError(f"output_retries must be an int >= 0, got {output_retries!r}")
        schema = None if output_schema is None else OutputSchema(output_schema)
        chat_model = self._resources(model, ResourceType.CHAT_MODEL)
        if not isinstance(chat_model, BaseChatModelSetup):
            raise TypeError(f"chat model '{model}' is a {type(chat_model).__name__}, not a "
                            "BaseChatModelSetup")
        chat_tools = [t if isinstance(t, Tool) else tool(t) for t in tools]
        names = [t.name for t in chat_tools]
        if len(set(names)) != len(names):
            raise ValueError(f"ctx.chat got two tools of one name: {names}")
        return ChatLoop(self, conversation, model, chat_model, chat_tools, max_turns,
                        output_schema=schema, output_retries=output_retries).run()

    def run_subagent(self, agent: Agent, event: Event | Any):
        self.check_mailbox("run_subagent")
        self._require_async("run_subagent")
        actions, first = subagent_input(agent, event, self._action_name)
        return SubagentRun(self, agent, actions, first).run()

    def _prompt_messages(self, prompt: Prompt | str | None,
                         values: Mapping[str, Any] | None) -> list[ChatMessage]:
        """The prompt's messages, filled (a text prompt is one user message)."""
        if prompt is None:
            if values is not None:
                raise TypeError("ctx.chat got values= but no prompt= for them to fill")
            return []
        if isinstance(prompt, str):
            found = self._resources(prompt, ResourceType.PROMPT)
            if not isinstance(found, Prompt):
                raise TypeError(f"prompt '{prompt}' is a {type(found).__name__}, not a Prompt")
            prompt = found
        elif not isinstance(prompt, Prompt):
            raise TypeError("ctx.chat's prompt= is a Prompt or the name of a declared one, "
                            f"got {type(prompt).__name__}")
        return prompt.format_messages(values or {}, role=MessageRole.USER)

    def _require_async(self, what: str) -> None:
        """An awaitable handed to a plain ``def`` action would be dropped unawaited: the call
        would silently never run."""
        if not self._awaitable:
            raise TypeError(
                f"ctx.{what} returns an awaitable, but action '{self._action_name}' is a plain "
                "function: declare it `async def` and await the call, or use "
                "ctx.durable_execute for a blocking call")

    def check_mailbox(self, what: str) -> None:
        try:
            self._check()
        except MailboxThreadError as error:
            raise MailboxThreadError(
                f"ctx.{what} of action '{self._action_name}' (key {self._key!r}) was used off "
                f"the mailbox thread. {error}") from None
