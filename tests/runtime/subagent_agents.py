"""A caller that runs a subagent which chats with tools and writes long-term memory; the
harness and the mini-cluster tests of ``ctx.run_subagent`` run it (a module: the job
pickles the agents by reference).

An input is ``(key, n, work_dir, fail_at)``. Every call that completes appends one line
``<call> <key> <n>`` to ``<work_dir>/calls.log`` (model calls ``model<turn>``), so a test
counts how often each ran. ``fail_at`` names the one point where the input's run fails
once (a marker file ``failed-<point>`` survives the restart); the points in calls that
run on the worker pool wait for two more checkpoints first, when ``<work_dir>/checkpoints``
exists (on the mini-cluster), so that the restored checkpoint holds the nested run in
flight:

* ``model``: the chat's second model call; ``tool``: the ``lookup`` tool (worker pool);
  ``ctx-tool``: the ``note`` tool (inline, on the mailbox thread: fails at once);
* ``ltm``: ``remember_fact``, after its row was added; ``subagent``: the subagent's second
  action, after ``remember_fact`` returned; ``caller``: the caller, after the subagent
  returned, before its own ``publish`` call.
"""

import json
import os

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.chat_models import ToolContext, tool
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.api.resources import (
    ResourceDescriptor,
    chat_model_setup,
    embedding_model_setup,
)
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from runtime.agents_for_tests import wait_for_two_more_checkpoints

MODEL = "researcher_model"
POINTS = ("model", "tool", "ctx-tool", "ltm", "subagent", "caller")


def log(work_dir, call, key, n):
    with open(os.path.join(work_dir, "calls.log"), "a") as calls:
        calls.write(f"{call} {key} {n}\n")


def first_failure(work_dir, point, fail_at, wait=True):
    """Whether this is the failure of ``point`` (the first time only); marks it."""
    marker = os.path.join(work_dir, f"failed-{point}")
    if fail_at != point or os.path.exists(marker):
        return False
    checkpoints = os.path.join(work_dir, "checkpoints")
    if wait and os.path.isdir(checkpoints):
        wait_for_two_more_checkpoints(checkpoints)
    open(marker, "w").close()
    return True


def wait_unless_failed(work_dir, point):
    """A durable call before a failure in an action's body: the restored checkpoint then
    holds the run in flight (returns at once after the failure, or off the cluster)."""
    checkpoints = os.path.join(work_dir, "checkpoints")
    if os.path.isdir(checkpoints) and not os.path.exists(
            os.path.join(work_dir, f"failed-{point}")):
        wait_for_two_more_checkpoints(checkpoints)


async def fail_once_here(ctx, request, point):
    if request["fail_at"] != point:
        return
    await ctx.durable_execute_async(wait_unless_failed, request["dir"], point)
    if first_failure(request["dir"], point, request["fail_at"], wait=False):
        raise RuntimeError(f"injected failure at {point}")


def respond(messages, tools):
    """The scripted model: first asks for ``lookup`` and ``note``, then answers with what
    ``lookup`` found."""
    request = json.loads(messages[0].content)
    turn = sum(1 for m in messages if m.role == "assistant")
    if turn == 1 and first_failure(request["dir"], "model", request["fail_at"]):
        raise RuntimeError("injected failure in the model call")
    log(request["dir"], f"model{turn}", request["key"], request["n"])
    if turn == 0:
        question = messages[0].content
        return {"tool_calls": [{"name": "lookup", "arguments": {"question": question}},
                               {"name": "note", "arguments": {"text": "noted"}}]}
    found = [m.content for m in messages if m.role == "tool" and m.name == "lookup"]
    return f"answer to {request['key']}/{request['n']}: {found[0]}"


@tool
def lookup(question: str) -> str:
    """Looks the question up (a plain tool: the worker pool)."""
    request = json.loads(question)
    if first_failure(request["dir"], "tool", request["fail_at"]):
        raise RuntimeError("injected failure in the lookup tool")
    log(request["dir"], "lookup", request["key"], request["n"])
    return f"fact {request['key']}-{request['n']}"


@tool
def note(ctx: ToolContext, text: str) -> str:
    """Leaves a note in the chat's scope (a tool that takes ctx: inline)."""
    request = ctx.sensory_memory.get("request")
    if first_failure(request["dir"], "ctx-tool", request["fail_at"], wait=False):
        raise RuntimeError("injected failure in the note tool")
    ctx.short_term_memory.set("tool_note", text)
    log(request["dir"], "note", request["key"], request["n"])
    return "ok"


def remember_fact(facts, text, request):
    [item_id] = facts.add(text)
    if first_failure(request["dir"], "ltm", request["fail_at"]):
        raise RuntimeError("injected failure after the add")
    log(request["dir"], "remember", request["key"], request["n"])
    return item_id


def publish(request, answer):
    log(request["dir"], "publish", request["key"], request["n"])
    return len(answer)


class Found(Event):
    def __init__(self, answer):
        self.answer = answer


class Researcher(Agent):
    """The subagent: chats (tools ``lookup`` and ``note``), then remembers the answer."""

    @action(InputEvent)
    async def research(event, ctx):
        request = ctx.sensory_memory.get("request")
        seen = ctx.short_term_memory.get("count")  # the caller's pending write, by copy
        ctx.short_term_memory.set("count", 1000 + seen)  # stays in the subagent's scope
        ctx.short_term_memory.set("sub_note", f"researched {request['n']}")
        ctx.sensory_memory.set("sub_sensory", "mine")
        ctx.long_term_memory.get_memory_set("facts").add(
            f"{request['key']} asked {request['n']}")  # a write in the body
        reply = await ctx.chat(json.dumps(request), model=MODEL, tools=[lookup, note],
                               max_turns=3)
        ctx.send_event(Found((reply.content, seen)))

    @action(Found)
    async def remember(event, ctx):
        request = ctx.sensory_memory.get("request")
        answer, seen = event.answer
        facts = ctx.long_term_memory.get_memory_set("facts")
        item_id = await ctx.durable_execute_async(remember_fact, facts, answer, request)
        await fail_once_here(ctx, request, "subagent")
        ctx.send_event(OutputEvent({
            "answer": answer, "item_id": item_id, "seen_count": seen,
            "own_count": ctx.short_term_memory.get("count"),  # its own write, kept
            "sub_note": ctx.short_term_memory.get("sub_note"),  # its sibling action's
            "tool_note": ctx.short_term_memory.get("tool_note")}))  # the chat's: not seen


class Coordinator(Agent):
    """The caller: counts its inputs in short-term memory, runs :class:`Researcher` on the
    same key, then publishes and outputs what it got and what it sees of its memory."""

    @chat_model_setup
    def researcher_model():
        return ResourceDescriptor(ScriptedChatModelSetup, respond=respond)

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def coordinate(event, ctx):
        key, n, work_dir, fail_at = event.input
        request = {"dir": work_dir, "key": key, "n": n, "fail_at": fail_at}
        ctx.sensory_memory.set("request", request)
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        [found] = await ctx.run_subagent(Researcher(), event)
        await fail_once_here(ctx, request, "caller")
        await ctx.durable_execute_async(publish, request, found["answer"])
        memory = ctx.short_term_memory
        ctx.send_event(OutputEvent((key, n, count, found, {
            "count": memory.get("count"), "sub_note": memory.get("sub_note"),
            "tool_note": memory.get("tool_note"),
            "sub_sensory": ctx.sensory_memory.get("sub_sensory")})))
