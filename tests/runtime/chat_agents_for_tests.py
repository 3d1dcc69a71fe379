"""Agents the ctx.chat cluster tests run (a module: the job pickles them by reference).

The chat model is a resource added on the environment (its URL is the scripted
server's, known only when the test runs). The model script lives in the test:
answer 1 asks for ``peek`` twice, answer 2 ends the chat.
"""

import json

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.chat_models import ChatMessage, ToolContext, tool
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.runtime.chat_loop import ChatLoop, ChatScope
from runtime.agents_for_tests import fail_once_after_two_checkpoints

MODEL = "scripted"


@tool
def peek(ctx: ToolContext) -> dict:
    """What the chat sees of the caller's memory; leaves a note in the chat's scope."""
    seen = {"count": ctx.short_term_memory.get("count"),
            "note": ctx.short_term_memory.get("tool_note")}
    ctx.short_term_memory.set("tool_note", "written by a tool")
    return seen


def question(key, n):
    return [ChatMessage("user", f"input {n} of key {key}")]


def nap():
    return None


async def chat(ctx, key, n):
    return await ctx.chat(question(key, n), model=MODEL, tools=[peek], max_turns=3)


async def count_chat_then_wait(event, ctx, chat):
    """Counts inputs per key in short-term memory, chats, then awaits another durable
    call; the trigger input fails once after a checkpoint taken while it waits.
    Input ``(key, n, work_dir, is_trigger)``."""
    key, n, work_dir, is_trigger = event.input
    count = (ctx.short_term_memory.get("count") or 0) + 1
    ctx.short_term_memory.set("count", count)
    reply = await chat(ctx, key, n)
    if is_trigger:
        await fail_once_after_two_checkpoints(ctx, work_dir)
    await ctx.durable_execute_async(nap)
    ctx.send_event(OutputEvent((key, n, count, json.loads(reply.content),
                                ctx.short_term_memory.get("tool_note"))))


class ChatCountingAgent(Agent):
    @action(InputEvent)
    async def count(event, ctx):
        await count_chat_then_wait(event, ctx, chat)


class SharedCacheChatLoop(ChatLoop):
    """The bug: chat children share the caller's cache and flush it when they complete
    (the caller's pending writes become durable before the caller completes)."""

    def _open_scope(self):
        return ChatScope(self._ctx.sensory_store, self._ctx.short_term_store)

    async def _call_tool(self, call, scope):
        result = await super()._call_tool(call, scope)
        scope.sensory.persist()
        scope.short_term.persist()
        return result


async def shared_cache_chat(ctx, key, n):
    model = ctx.get_resource(MODEL)
    return await SharedCacheChatLoop(ctx, question(key, n), MODEL, model, [peek], 3).run()


class SharedCacheChatCountingAgent(Agent):
    @action(InputEvent)
    async def count(event, ctx):
        await count_chat_then_wait(event, ctx, shared_cache_chat)


# ----------------------------------------------------------------- Mem0 on a chat model

def add_then_read(memory_set, text):
    """On a worker: Mem0 extracts facts from ``text`` with the chat model resource."""
    memory_set.add(text)
    return sorted(item.value for item in memory_set.get())


class ExtractingAgent(Agent):
    @action(InputEvent)
    async def remember(event, ctx):
        key, text = event.input
        prefs = ctx.long_term_memory.get_memory_set("prefs")
        stored = await ctx.durable_execute_async(add_then_read, prefs, text)
        ctx.send_event(OutputEvent((key, stored)))
