"""A job whose long-term memory embeds with an OpenAI-compatible server, run by the install
tests as a user runs a job (``python remote_embedder_job.py``, copied outside the checkout).

``--mode`` is PyFlink's execution mode: ``thread`` runs the Python worker inside the
mini-cluster's JVM (Pemja), ``process`` on the local mini-cluster in the client's own process
(PyFlink's loopback worker). Each Python interpreter of the job writes a report to
``--reports`` (the client when the job is done, the worker after each action): its pid,
where it found ``flink_agents_ltm`` and the top-level modules it has imported.
``--store-file`` names a JSON file holding ``long-term-memory.vector-store`` (a pgvector
server's, with its password: a file, not the command line); without it the memory is the
embedded store.
"""

import argparse
import json
import os
import sys
from pathlib import Path

from pyflink.common import Configuration
from pyflink.datastream import StreamExecutionEnvironment

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.embedding_models.openai import OpenAIEmbeddingModelSetup

DIMENSIONS = 64


def report(folder, role):
    import flink_agents_ltm

    path = Path(folder) / f"{role}-{os.getpid()}.json"
    path.write_text(json.dumps({
        "role": role, "pid": os.getpid(), "package": flink_agents_ltm.__file__,
        "modules": sorted({name.split(".")[0] for name in list(sys.modules)})}))


def recall(conversation, text):  # a worker thread of the Flink Python worker
    hits = [item.value for item in conversation.search(text, limit=2)]
    conversation.add(text)
    return hits


class RemoteEmbedderAgent(Agent):
    @action(InputEvent)
    async def reply(event, ctx):
        conversation = ctx.long_term_memory.get_memory_set("conversation")
        recalled = await ctx.durable_execute_async(recall, conversation, event.input["text"])
        report(event.input["reports"], "worker")
        ctx.send_event(OutputEvent({"customer": ctx.key, "recalled": recalled}))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embeddings-url", required=True)
    parser.add_argument("--reports", required=True)
    parser.add_argument("--store-file")
    parser.add_argument("--mode", choices=["thread", "process"], required=True)
    args = parser.parse_args()

    flink_config = Configuration()
    flink_config.set_string("python.execution-mode", args.mode)
    env = StreamExecutionEnvironment.get_execution_environment(flink_config)
    env.set_parallelism(1)
    messages = env.from_collection([
        {"customer": "alice", "text": "My teapot has not arrived yet.", "reports": args.reports},
        {"customer": "bob", "text": "Can I change my delivery address?", "reports": args.reports},
        {"customer": "alice", "text": "Any news about my teapot?", "reports": args.reports},
    ])
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.add_resource("embedder", ResourceType.EMBEDDING_MODEL, ResourceDescriptor(
        OpenAIEmbeddingModelSetup, model="embedder", base_url=args.embeddings_url,
        api_key_env=None, dimensions=DIMENSIONS))
    config = agents_env.get_config()
    config.set(AgentsOptions.JOB_ID, "remote-embedder")
    config.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "embedder")
    if args.store_file:
        config.set(LongTermMemoryOptions.VECTOR_STORE,
                   json.loads(Path(args.store_file).read_text()))
    replies = (agents_env.from_datastream(messages, key_selector=lambda m: m["customer"])
               .apply(RemoteEmbedderAgent()).to_datastream())
    with replies.execute_and_collect("remote-embedder") as results:
        for reply in results:
            print(json.dumps(reply), flush=True)
    report(args.reports, "client")


if __name__ == "__main__":
    main()
