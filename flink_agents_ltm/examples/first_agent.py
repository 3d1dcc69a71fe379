"""The first agent of docs/quickstart.md: python -m flink_agents_ltm.examples.first_agent"""

import argparse

from pyflink.datastream import StreamExecutionEnvironment

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions


def recall(conversation, text):  # runs on a worker thread
    hits = [item.value for item in conversation.search(text, limit=2)]
    conversation.add(text)
    return hits


class SupportAgent(Agent):
    @action(InputEvent)
    async def reply(event, ctx):
        seen = (ctx.short_term_memory.get("messages") or 0) + 1  # Flink keyed state
        ctx.short_term_memory.set("messages", seen)
        conversation = ctx.long_term_memory.get_memory_set("conversation")  # Mem0, this key
        recalled = await ctx.durable_execute_async(recall, conversation, event.input["text"])
        ctx.send_event(OutputEvent({"customer": ctx.key, "message": seen, "recalled": recalled}))


FIRST_DAY = [
    {"customer": "alice", "text": "My teapot has not arrived yet."},
    {"customer": "bob", "text": "Can I change my delivery address?"},
    {"customer": "alice", "text": "Any news about my teapot?"},
]
NEXT_DAY = [
    {"customer": "alice", "text": "The teapot came, but its lid is cracked."},
    {"customer": "bob", "text": "Please send it to my new address."},
]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--again", action="store_true",
                        help="send the next day's messages (a second run of the job)")
    args = parser.parse_args()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    messages = env.from_collection(NEXT_DAY if args.again else FIRST_DAY)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.JOB_ID, "support-bot")
    replies = (agents_env.from_datastream(messages, key_selector=lambda m: m["customer"])
               .apply(SupportAgent()).to_datastream())
    with replies.execute_and_collect("first-agent") as results:
        for reply in results:
            print(reply)


if __name__ == "__main__":
    main()
